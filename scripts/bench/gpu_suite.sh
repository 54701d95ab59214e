#!/usr/bin/env bash
# The GPU node's figures for docs/performance.md, each step with its own time
# limit and log under out/gpu_suite (archived to $OUT after each step).
#   scripts/bench/gpu_suite.sh [--part 1|2|all|STEP,STEP,...] [--logs DIR] [--no-build] [--mpi]
# Part 1: build, kernels, PCIe, device path, host slicings, peers, ctest. Part 2: full scale, file16.
# Other steps: ctest_mpi pcie_all scale_gpu scale_host file80 startup16 startup_ids lifecycle
#   storage_split python_host python_large python_calls compressed full_zstd
# --mpi: build the cuda-mpi preset (ctest_mpi, scale_*, file80 with one rank per GPU).
# DISCOUNT_TREE=<commit>: the commit to print when the copy here is not a git
# checkout of it (a working tree copied to the node beside an older .git).
set -uo pipefail
cd "$(dirname "$0")/../.."
part=all logs=out/gpu_suite build=1 preset=cuda
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpi) preset=cuda-mpi ;;
    --part) part=$2; shift ;;
    --logs) logs=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "gpu_suite.sh: unknown option $1" >&2; exit 64 ;;
  esac
  shift
done
mkdir -p "$logs"
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
py=python3
if [[ $preset == cuda-mpi ]] && ! command -v mpicc >/dev/null; then
  echo "gpu_suite: no mpicc here: building without MPI" >&2; preset=cuda
fi
bench=build/$preset/discount_bench app=build/$preset/app/discount_app threads=$(nproc)
work=${WORK:-/tmp/discount_gpu_suite}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)

step() {  # step <name> <seconds> <command...>: run with a limit, log, report
  local name=$1 limit=$2 t0 rc; shift 2
  t0=$(date +%s)
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  echo "== $name: rc=$rc, $(( $(date +%s) - t0 )) s (log $name.log)"
  if [[ -n ${OUT:-} ]]; then tar czf "$OUT/gpu_suite_logs.tgz" -C "$logs" . 2>/dev/null; fi
  return $rc
}
bench_py() { local name=$1 limit=$2 script=$3; shift 3; step "$name" "$limit" $py "scripts/bench/$script" "$@"; }
job_yaml() {  # job_yaml <file> <input> <output> <compute> [memory] [report]
  printf 'input: {file: %s}\noutput: {%s}\ncompute: {%s}\n' "$2" "$3" "$4" >"$1"
  [[ -z ${5:-} ]] || printf 'memory: {%s}\n' "$5" >>"$1"
  [[ -z ${6:-} ]] || printf 'report: %s\n' "$6" >>"$1"
}
budgets="device_budget: 16GiB, host_budget: 8GiB, max_slab: 512MiB"

commit=${DISCOUNT_TREE:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
{ echo "machine: $(hostname), $(nproc) cores, $(date -u +%F' '%T) UTC, commit $commit"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } |
  tee "$logs/machine.log"

mpi_flag=; [[ $preset == cuda-mpi ]] && mpi_flag=--mpi
s_build() { step build 450 bash scripts/gpu_check.sh sm_90 --build-only $mpi_flag || { tail -40 "$logs/build.log"; exit 1; }; }
# Rank scaling (MPI build): the synthetic job on 1..gpus GPUs, and the host path on 1, 2, 4 ranks.
s_scale_gpu() {
  local list=1 r args; for ((r = 2; r <= gpus; r *= 2)); do list+=",$r"; done
  args=(--app $app --ranks "$list" --shape 200x10000000x5 --space device --device-budget 16GiB --host-budget 8GiB
    --max-slab 512MiB --repeat 2 --mpirun-args "--bind-to none")
  bench_py scale_gpu 300 scaling.py "${args[@]}" --json "$logs/scale_gpu.json"
  bench_py scale_gpu_path 300 scaling.py "${args[@]}" --device-path --bench $bench --json "$logs/scale_gpu_path.json"
}
# PCIe with every GPU busy at once: the ceiling for the device path on all GPUs.
s_pcie_all() {
  step pcie_all 120 bash -c '
    for ((g = 0; g < '"$gpus"'; g++)); do
      echo "--- GPU $g alone"; CUDA_VISIBLE_DEVICES=$g '"$bench"' --mode pcie --pcie-gib 2 --reps 5
    done
    for ((g = 0; g < '"$gpus"'; g++)); do
      CUDA_VISIBLE_DEVICES=$g '"$bench"' --mode pcie --pcie-gib 2 --reps 5 > '"$logs"'/pcie_gpu$g.log 2>&1 &
    done
    wait
    for ((g = 0; g < '"$gpus"'; g++)); do echo "--- GPU $g while every GPU copies"; cat '"$logs"'/pcie_gpu$g.log; done'
}
s_scale_host() {
  local args=(--app $app --ranks 1,2,4 --shape 200x1000000x5 --space host --host-budget 4GiB --max-slab 256MiB
    --repeat 2)
  bench_py scale_host 300 scaling.py "${args[@]}" --json "$logs/scale_host.json"
  # Unbound: Open MPI would bind 1-2 ranks to a core each.
  bench_py scale_host_unbound 300 scaling.py "${args[@]}" --mpirun-args "--bind-to none" \
    --json "$logs/scale_host_unbound.json"
}
ctest_step() {  # ctest_step <name> <threads> <seconds> <ctest args...>
  local name=$1 t=$2 limit=$3; shift 3
  OMP_NUM_THREADS=$t OMP_PROC_BIND=false step "$name" "$limit" ctest --preset $preset -j 4 --timeout 240 "$@"
  grep -E "tests passed|tests failed|Total Test time|Failed|Timeout" "$logs/$name.log" | head -30
}
s_ctest_mpi() { ctest_step ctest_mpi 2 300 -L "unit|mpi"; }
s_ctest() { ctest_step ctest 4 400; }
s_kernel_large() {
  step kernel_large 200 $bench --mode kernel --dates 200 --ids 1000000 --nums 5 --reps 10 $slow --chunks 1 2 4 8 \
    --groups 0 262144 524288 -1
}
s_kernel_seed() { step kernel_seed 60 $bench --mode kernel --dates 100 --ids 4000 --nums 5 --reps 50 --slow; }
s_pcie() { step pcie 60 $bench --mode pcie --pcie-gib 2 --reps 5; }
s_stream() { step stream 120 $bench --mode stream --dates 200 --ids 1000000 --nums 5 --slab-mib 256 --depth 3 --reps 3; }
# 40 GB each way: start and end of the stream weigh less than in the 8 GB one.
s_stream_large() {
  step stream_large 240 $bench --mode stream --dates 200 --ids 5000000 --nums 5 --slab-mib 192 --depth 3 --reps 3
}
# Every slicing of the host kernel against memcpy, NumPy and Numba, one thread per core.
s_host_slicings() {
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread OMP_PLACES=cores bench_py host_slicings 180 host_kernel.py \
    --slicings --bench $bench --app $app --rounds 3 --repeat 3 --columns 16384,65536 --json "$logs/host_slicings.json"
}
s_peers_gpu() { bench_py peers_gpu 120 gpu_peers.py --sizes 100x4000x5,200x1000000x5 --json "$logs/peers_gpu.json"; }
s_full_scale() {
  mkdir -p "$work"
  cp inputs/full.yaml "$work/full.yaml"
  step full_scale 300 $app run "$work/full.yaml" --report "$work/full_run.json"
  cp "$work/full_run.json" "$logs/" 2>/dev/null
}
# A generated file to file, until durable; verified by sampling and on whole dates.
file_job() {  # file_job <name> <ids> <whole dates checked> <compute> [launcher]
  local n=$1 ids=$2 checked=$3 compute=$4 launch=${5:-}
  mkdir -p "$work"
  job_yaml "$work/file$n.yaml" in$n.h5 "file: out$n.h5, overwrite: true" "$compute" "$budgets" "file${n}_run.json"
  step generate$n 240 $app generate --dates 200 --ids "$ids" --nums 5 --seed 7 --out "$work/in$n.h5" --force
  step file$n 300 bash -c "$launch $app run $work/file$n.yaml && sync"
  if [[ $n == 16 ]]; then  # cp of the same bytes, until durable, for scale
    step cp16 240 bash -c "cp $work/in16.h5 $work/cp16.h5 && sync"
    rm -f "$work/cp16.h5"
  fi
  step verify$n 240 $app verify "$work/file$n.yaml" --sample
  bench_py h5py$n 240 check_cv_dates.py "$work/in$n.h5" "$work/out$n.h5" --dates "$checked"
  cp "$work/file${n}_run.json" "$logs/" 2>/dev/null
}
s_file16() {
  file_job 16 2000000 12 "space: device"
  rm -f "$work"/in16.h5 "$work"/out16.h5
}
# 80 GB in and out (about 170 GB of disk), one rank per GPU with MPI, against the disk's O_DIRECT write speed.
s_file80() {
  mkdir -p "$work"
  step disk80 60 bash -c "dd if=/dev/zero of=$work/dd.bin bs=16M count=512 oflag=direct 2>&1 | tail -1; rm -f $work/dd.bin"
  local launch=""
  [[ $preset == cuda-mpi && $gpus -gt 1 ]] && launch="mpirun -n $gpus --bind-to none"
  file_job 80 10000000 6 "space: device, parallel_dims: [id, num]" "$launch"
  rm -f "$work"/in80.h5 "$work"/out80.h5
}

# Exec to the first slab read: 16 GB file to file, then 2^31+17 ids in id slabs.
s_startup16() {
  bench_py startup16 300 startup.py --app $app --dir "$work/startup" --json "$logs/startup16.json"
  rm -rf "$work/startup"
}
s_startup_ids() {
  bench_py startup_ids 300 startup.py --app $app --wide-ids --dir /dev/shm/discount_ids --json "$logs/startup_ids.json"
  rm -rf /dev/shm/discount_ids
}
s_lifecycle() { step lifecycle 120 $bench --mode lifecycle --reps 3; }
# output.layout: split against dd, cp and h5py: 20 GB on /dev/shm, then 10 GB on the disk.
s_storage_split() {
  bench_py storage_split_tmpfs 600 storage_split.py --app $app --dir /dev/shm/discount_split --size 20GB \
    --writers $threads --space device,host --json "$logs/storage_split_tmpfs.json"
  rm -rf /dev/shm/discount_split
  mkdir -p "$work"
  bench_py storage_split_disk 600 storage_split.py --app $app --dir "$work/split_disk" --size 10GB \
    --writers $threads --space device --json "$logs/storage_split_disk.json"
  rm -rf "$work/split_disk"
}

# Python: multiply against Numba and NumPy. OMP_PROC_BIND=false: with binding
# libgomp pins the main thread to one core at import, and Numba and the CLI inherit it.
python_step() { OMP_PROC_BIND=false PYTHONPATH=build/$preset/python bench_py "$@"; }
s_python_host() {
  python_step python_host 300 python_multiply.py --space host --threads $threads --dates 20 --ids 4000000 --repeat 3 \
    --calls 10 --run-ids 1000000 --app $app --json "$logs/python_host.json"
}
s_python_calls() {
  mkdir -p "$work"
  python_step python_calls 400 python_calls.py --busy $threads --work "$work" --json "$logs/python_calls.json"
}
# 50 dates: 100 dates with the peers' arrays do not fit the node's memory.
s_python_large() {
  python_step python_large 580 python_multiply.py --space device --threads $threads --dates 50 --ids 10000000 \
    --repeat 1 --calls 5 --run-ids 1000000 --app $app --json "$logs/python_large.json"
}

# Compressed data (compressed.py), and 100 x 10M x 5 realistic values with zstd
# output on the GPU, checked with the system's libzstd (ZSTD_DATES=20: a fifth).
s_compressed() {
  bench_py compressed 400 compressed.py --app $app --dir /dev/shm/bz --dates 10 --ids 2500000 --repeat 1 \
    --skip-xarray --json "$logs/compressed.json"
  rm -rf /dev/shm/bz
}
s_full_zstd() {
  local dir=/dev/shm/discount_full_zstd
  rm -rf "$dir"; mkdir -p "$dir"
  job_yaml "$dir/job.yaml" in.h5 "file: out.h5, layout: split, compression: {codec: zstd, level: 3, shuffle: byte}" \
    "space: device" "" run.json
  step generate_zstd 200 $app generate --dates "${ZSTD_DATES:-100}" --ids 10000000 --nums 5 --values realistic \
    --seed 7 --out "$dir/in.h5" --force
  step full_zstd 300 $app run "$dir/job.yaml"
  bench_py check_zstd 300 check_compressed_parts.py "$dir/in.h5" "$dir/out.h5"
  cp "$dir/run.json" "$logs/full_zstd_run.json" 2>/dev/null
  rm -rf "$dir"
}

slow=--slow
part1="build kernel_large kernel_seed pcie stream stream_large host_slicings peers_gpu ctest"
case $part in
  1) steps=$part1 ;;
  2) steps="full_scale file16" ;;
  all) steps="$part1 full_scale file16" ;;
  *) steps=${part//,/ }; slow= ;;  # an explicit list of steps, e.g. build,kernel_large,ctest
esac
[[ $build == 0 ]] && steps=${steps/build/}
for s in $steps; do "s_$s"; done

echo; echo "===== summary tables ====="
for log in $(ls -tr "$logs"/*.log); do
  f=$(basename "$log" .log); [[ $f == machine || $f == pcie_gpu* ]] && continue
  echo "--- $f"; grep -vE "^\[deps\]|OMP_PROC_BIND|OpenMP 4.0|OpenMP 3.1|unit testing" "$logs/$f.log" | tail -25
done
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/gpu_suite_logs.tgz" -C "$logs" .; fi
