set -e
A=${A:-discount_app}  # the binary under test; these runs used build/openmp/app/discount_app, in a scratch directory
$A generate --dates 60 --ids 100003 --nums 5 --out plain.h5 --force > gen.log
/usr/bin/python3 - <<'PY'
import h5py, time
t=time.time()
with h5py.File("plain.h5","r") as s, h5py.File("gzip.h5","w") as d:
    d.create_dataset("multBy", data=s["multBy"][...])
    d.create_dataset("discount", data=s["discount"][...], chunks=(1, 100003, 5), compression="gzip")
print("gzip copy", time.time()-t)
PY
ls -l plain.h5 gzip.h5
for f in plain gzip; do
  printf "input: {file: $f.h5}\noutput: {file: out_$f.h5, overwrite: true}\nmemory: {host_budget: 64MiB}\n" > $f.yaml
done
for i in 1 2 3; do
  for f in plain gzip; do
    OMP_NUM_THREADS=2 OMP_PROC_BIND=false $A run $f.yaml --report ${f}_$i.json > ${f}_$i.log
    python3 -c "import json;d=json.load(open('${f}_$i.json'));print('$f', $i, 'wall', round(d['wall_seconds'],3), 'any', round(d['any_stage_seconds'],3), [(s['name'], round(s['seconds'],3), round(s['gb_per_s'],2)) for s in d['stages']])"
  done
done
