#!/usr/bin/env bash
# The GPU node's figures for docs/performance.md in one go, each step with its
# own time limit and log. Part 1: build + whole ctest suite (scripts/gpu_check.sh),
# kernel vs copy for every slicing, PCIe, the device path, host kernel, peers.
# Part 2: full scale through the whole pipeline (synthetic source, checksum
# sink), and the largest file-to-file case the disk allows, verified.
#   scripts/bench/gpu_suite.sh [--part 1|2|all|STEP,STEP,...] [--logs DIR] [--no-build]
# Steps: build kernel_large kernel_seed pcie stream kernel_host host_slicings host_slicings_large peers_gpu
#        ctest stream_large ctest_mpi pcie_all scale_gpu scale_gpu_path scale_host scale_host_unbound full_scale file16
#        file80 (80 GB in and out: the 4-GPU kind's disk) startup16 startup_ids lifecycle storage_split io_threads
#        pinning python_host python_large python_calls compressed full_zstd
# --mpi: build the cuda-mpi preset (needed by ctest_mpi, scale_gpu, scale_host).
set -uo pipefail
cd "$(dirname "$0")/../.."
part=all
logs=out/gpu_suite
build=1
preset=cuda
while [[ $# -gt 0 ]]; do
  case "$1" in
    --mpi) preset=cuda-mpi ;;  # build with MPI: one rank per GPU (scale_* steps need it)
    --part) part=$2; shift ;;
    --logs) logs=$2; shift ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
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
bench=build/$preset/discount_bench
app=build/$preset/app/discount_app
threads=$(nproc)

step() {  # step <name> <seconds> <command...>: run with a limit, log, report
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc, $(( $(date +%s) - t0 )) s (log $name.log)"
  # The device tool brings back at most 8 files: keep one archive, refreshed after every step.
  if [[ -n ${OUT:-} ]]; then tar czf "$OUT/gpu_suite_logs.tgz" -C "$logs" . 2>/dev/null; fi
  return $rc
}

{ echo "machine: $(hostname), $(nproc) cores, $(date -u +%F' '%T) UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } | tee "$logs/machine.log"

mpi_flag=; [[ $preset == cuda-mpi ]] && mpi_flag=--mpi
s_build() { step build 300 bash scripts/gpu_check.sh sm_90 --build-only $mpi_flag || { tail -40 "$logs/build.log"; exit 1; }; }
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
# Rank scaling (MPI build): the full job on 1..gpus GPUs, synthetic source and
# checksum sink; the host path on 1, 2, 4 ranks sharing the cores.
s_scale_gpu() {
  local list=1; for ((r = 2; r <= gpus; r *= 2)); do list+=",$r"; done
  step scale_gpu 300 $py scripts/bench/scaling.py --app $app --ranks "$list" --shape 200x10000000x5 \
    --space device --device-budget 16GiB --host-budget 8GiB --max-slab 512MiB --repeat 2 --mpirun-args "--bind-to none" \
    --json "$logs/scale_gpu.json"
  step scale_gpu_path 300 $py scripts/bench/scaling.py --app $app --ranks "$list" --shape 200x10000000x5 \
    --space device --device-budget 16GiB --host-budget 8GiB --max-slab 512MiB --repeat 2 --device-path \
    --bench $bench --mpirun-args "--bind-to none" \
    --json "$logs/scale_gpu_path.json"
}
# PCIe with every GPU busy at once: the ceiling for the device path on all GPUs.
s_pcie_all() {
  step pcie_all 120 bash -c '
    for ((g = 0; g < '"$gpus"'; g++)); do echo "--- GPU $g alone"; CUDA_VISIBLE_DEVICES=$g '"$bench"' --mode pcie --pcie-gib 2 --reps 5; done
    for ((g = 0; g < '"$gpus"'; g++)); do CUDA_VISIBLE_DEVICES=$g '"$bench"' --mode pcie --pcie-gib 2 --reps 5 > '"$logs"'/pcie_gpu$g.log 2>&1 & done
    wait
    for ((g = 0; g < '"$gpus"'; g++)); do echo "--- GPU $g while every GPU copies"; cat '"$logs"'/pcie_gpu$g.log; done'
}
s_scale_host() {
  step scale_host 300 $py scripts/bench/scaling.py --app $app --ranks 1,2,4 --shape 200x1000000x5 \
    --space host --host-budget 4GiB --max-slab 256MiB --repeat 2 --json "$logs/scale_host.json"
  # Open MPI binds 1-2 ranks to a core each by default; unbound, the app shares the cores itself.
  step scale_host_unbound 300 $py scripts/bench/scaling.py --app $app --ranks 1,2,4 --shape 200x1000000x5 \
    --space host --host-budget 4GiB --max-slab 256MiB --repeat 2 --mpirun-args "--bind-to none" \
    --json "$logs/scale_host_unbound.json"
}
s_ctest_mpi() {
  OMP_NUM_THREADS=2 OMP_PROC_BIND=false step ctest_mpi 300 ctest --preset $preset -j 4 -L "unit|mpi" --timeout 240
  grep -E "tests passed|tests failed|Total Test time|Failed|Timeout" "$logs/ctest_mpi.log" | head -30
}
s_kernel_large() { step kernel_large 200 $bench --mode kernel --dates 200 --ids 1000000 --nums 5 --reps 10 $slow --chunks 1 2 4 8 --groups 0 262144 524288 -1; }
s_kernel_seed() { step kernel_seed 60 $bench --mode kernel --dates 100 --ids 4000 --nums 5 --reps 50 --slow; }
s_pcie() { step pcie 60 $bench --mode pcie --pcie-gib 2 --reps 5; }
s_stream() { step stream 120 $bench --mode stream --dates 200 --ids 1000000 --nums 5 --slab-mib 256 --depth 3 --reps 3; }
# 40 GB each way: start and end of the stream weigh less than in the 8 GB one.
s_stream_large() { step stream_large 240 $bench --mode stream --dates 200 --ids 5000000 --nums 5 --slab-mib 192 --depth 3 --reps 3; }
s_kernel_host() { step kernel_host 120 $bench --mode kernel --space host --dates 200 --ids 1000000 --nums 5 --reps 5 --kokkos-threads=$threads; }
# Every slicing of the host kernel against memcpy / NumPy copyto, NumPy and Numba, one thread per core
# (the log's "threads:" line shows each peer's CPU masks; a run on too few CPUs says INVALID RUN).
s_host_slicings() {
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread OMP_PLACES=cores step host_slicings 180 $py scripts/bench/host_kernel.py \
    --slicings --bench $bench --app $app --rounds 3 --repeat 3 --columns 16384,65536 --json "$logs/host_slicings.json"; }
s_host_slicings_large() {
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread OMP_PLACES=cores step host_slicings_large 500 $py scripts/bench/host_kernel.py \
    --slicings --bench $bench --app $app --dates 200 --ids 1000000 --rounds 3 --repeat 2 --json "$logs/host_slicings_large.json"; }
s_peers_gpu() { step peers_gpu 120 $py scripts/bench/gpu_peers.py --sizes 100x4000x5,200x1000000x5 --json "$logs/peers_gpu.json"; }
s_ctest() {
  OMP_NUM_THREADS=4 OMP_PROC_BIND=false step ctest 400 ctest --preset $preset -j 4 --timeout 240
  grep -E "tests passed|tests failed|Total Test time|Failed|Timeout" "$logs/ctest.log" | head -30
}
work=${WORK:-/tmp/discount_gpu_suite}
s_full_scale() {
  mkdir -p "$work"
  cp inputs/full.yaml "$work/full.yaml"
  step full_scale 300 $app run "$work/full.yaml" --report "$work/full_run.json"
  cp "$work/full_run.json" "$logs/" 2>/dev/null
}
s_file16() {
  mkdir -p "$work"
  cat > "$work/file16.yaml" <<YAML
input: {file: in16.h5}
output: {file: out16.h5, overwrite: true}
compute: {space: device}
memory: {device_budget: 16GiB, host_budget: 8GiB, max_slab: 512MiB}
report: file16_run.json
YAML
  step generate16 240 $app generate --dates 200 --ids 2000000 --nums 5 --seed 7 --out "$work/in16.h5" --force
  step file16 240 bash -c "$app run $work/file16.yaml && sync"
  # The same bytes copied by cp, until durable, for scale (input still in the page cache).
  step cp16 240 bash -c "cp $work/in16.h5 $work/cp16.h5 && sync"
  rm -f "$work/cp16.h5"
  step verify16 240 $app verify "$work/file16.yaml" --sample
  step h5py16 240 $py scripts/bench/check_cv_dates.py "$work/in16.h5" "$work/out16.h5" --dates 12
  cp "$work/file16_run.json" "$logs/" 2>/dev/null
  rm -f "$work"/in16.h5 "$work"/out16.h5
}

# Start-up of a 16 GB file-to-file job, exec to the first input read, first
# measuring the links (empty cache), then with this host's cached limits.
s_startup16() {
  step startup16 300 $py scripts/bench/startup.py --app $app --dir "$work/startup" --json "$logs/startup16.json"
  rm -rf "$work/startup"
}
# Start-up of a synthetic job with 2^31+17 ids in id slabs (34 GB output on /dev/shm), device and host.
s_startup_ids() {
  step startup_ids 300 $py scripts/bench/startup.py --app $app --wide-ids --dir /dev/shm/discount_ids \
    --json "$logs/startup_ids.json"
  rm -rf /dev/shm/discount_ids
}
# What the CUDA runtime costs a process apart from its work: cuInit, the context, the teardown.
s_lifecycle() { step lifecycle 120 $bench --mode lifecycle --reps 3; }
# output.layout: split: 20 GB in and out on /dev/shm, device and
# host paths, against a parallel dd pair (16 readers + 16 writers), cp and h5py in
# the same call, and layout single; then 10 GB on the node's disk (each made durable).
s_storage_split() {
  step storage_split_tmpfs 600 $py scripts/bench/storage_split.py --app $app --dir /dev/shm/discount_split \
    --size 20GB --writers $threads --space device,host --json "$logs/storage_split_tmpfs.json"
  rm -rf /dev/shm/discount_split
  mkdir -p "$work"
  step storage_split_disk 600 $py scripts/bench/storage_split.py --app $app --dir "$work/split_disk" \
    --size 10GB --writers $threads --space device --json "$logs/storage_split_disk.json"
  rm -rf "$work/split_disk"
}

# The split layout on /dev/shm with the I/O-side threads
# (DISCOUNT_IO_THREADS: readers' and writers' copies) at the default and more.
s_io_threads() {
  step io_threads 560 $py scripts/bench/storage_split.py --app $app --dir /dev/shm/discount_io \
    --size 20GB --writers $threads --space device,host --only dd_pair,split --io-threads 12,16 \
    --json "$logs/io_threads.json"
  rm -rf /dev/shm/discount_io
}

# The GPU staging ring: a device split job with the ring's pages
# registered (the default), with the runtime's pinned allocator
# (DISCOUNT_STAGING_PIN=alloc), and registered at 256 MiB slabs (past the
# 1 GiB cap that max_slab: auto keeps the ring within).
s_pinning() {
  local args=(--app "$app" --dir /dev/shm/discount_pin --size 20GB --writers "$threads" --space device
              --repeat 2 --only dd_pair,split)
  step pinning_register 300 $py scripts/bench/storage_split.py "${args[@]}" --json "$logs/pinning_register.json"
  DISCOUNT_STAGING_PIN=alloc step pinning_alloc 300 $py scripts/bench/storage_split.py "${args[@]}" \
    --json "$logs/pinning_alloc.json"
  step pinning_256m 300 $py scripts/bench/storage_split.py "${args[@]}" --max-slab 256MiB \
    --json "$logs/pinning_256m.json"
  rm -rf /dev/shm/discount_pin
}

# Python: multiply in host space against Numba and NumPy on 16
# threads; on the device at 50 x 10M x 5 (20 GB in host RAM each way)
# against the PCIe limits, a CuPy loop and Numba, measured in the same call.
s_python_host() {
  # OMP_PROC_BIND=false: with binding, libgomp pins the Python process's main
  # thread to one core at import, and Numba's threads and the CLI it starts
  # inherit that one core (seen on the node: Numba "16 threads" ran on 1).
  OMP_PROC_BIND=false PYTHONPATH=build/$preset/python step python_host 300 $py scripts/bench/python_multiply.py --space host \
    --threads $threads --dates 20 --ids 4000000 --repeat 3 --calls 10 --run-ids 1000000 --app $app \
    --json "$logs/python_host.json"
}
# What a multiply call costs on 16 cores, quiet and beside busy loops; budgets;
# every slicing against a NumPy copy (scripts/bench/python_calls.py).
s_python_calls() {
  mkdir -p "$work"
  OMP_PROC_BIND=false PYTHONPATH=build/$preset/python step python_calls 400 $py scripts/bench/python_calls.py \
    --busy $threads --work "$work" --json "$logs/python_calls.json"
}
s_python_large() {
  # 50 dates (20 GB each way): at 100 dates the benchmark's arrays and its
  # peers' (80 GB) plus the staging were killed for memory on the 125 GB node.
  OMP_PROC_BIND=false PYTHONPATH=build/$preset/python step python_large 580 $py scripts/bench/python_multiply.py --space device \
    --threads $threads --dates 50 --ids 10000000 --repeat 1 --calls 5 --run-ids 1000000 --app $app \
    --json "$logs/python_large.json"
}

# Compressed data at the node's size (scripts/bench/compressed.py), and the
# full-scale 100 x 10M x 5 realistic job on the GPU with zstd 3 + shuffle
# output on /dev/shm, every element checked chunk by chunk with the
# system's libzstd (the node's h5py has no zstd filter). ZSTD_DATES=20 runs
# a fifth of it (8 GB each way).
s_compressed() {
  step compressed 400 $py scripts/bench/compressed.py --app $app --dir /dev/shm/bz --dates 10 --ids 2500000 \
    --repeat 1 --skip-xarray --json "$logs/compressed.json"
  rm -rf /dev/shm/bz
}
s_full_zstd() {
  local dir=/dev/shm/discount_full_zstd
  rm -rf "$dir"; mkdir -p "$dir"
  cat > "$dir/job.yaml" <<YAML
input: {file: in.h5}
output: {file: out.h5, layout: split, compression: {codec: zstd, level: 3, shuffle: byte}}
compute: {space: device}
report: run.json
YAML
  step generate_zstd 200 $app generate --dates "${ZSTD_DATES:-100}" --ids 10000000 --nums 5 --values realistic --seed 7 \
    --out "$dir/in.h5" --force
  step full_zstd 300 $app run "$dir/job.yaml"
  step check_zstd 300 $py scripts/bench/check_compressed_parts.py "$dir/in.h5" "$dir/out.h5"
  cp "$dir/run.json" "$logs/full_zstd_run.json" 2>/dev/null
  rm -rf "$dir"
}

# Full size, file to file (80 GB in, 80 GB out: needs about 170 GB of disk),
# one rank per GPU when the build has MPI, against the disk's O_DIRECT write
# speed measured in the same call; verified by sampling and by h5py on whole dates.
s_file80() {
  mkdir -p "$work"
  cat > "$work/file80.yaml" <<YAML
input: {file: in80.h5}
output: {file: out80.h5, overwrite: true}
compute: {space: device, parallel_dims: [id, num]}
memory: {device_budget: 16GiB, host_budget: 8GiB, max_slab: 512MiB}
report: file80_run.json
YAML
  local launch=""
  [[ $preset == cuda-mpi && $gpus -gt 1 ]] && launch="mpirun -n $gpus --bind-to none"
  step disk80 60 bash -c "dd if=/dev/zero of=$work/dd.bin bs=16M count=512 oflag=direct 2>&1 | tail -1; rm -f $work/dd.bin"
  step generate80 200 $app generate --dates 200 --ids 10000000 --nums 5 --seed 7 --out "$work/in80.h5" --force
  step file80 300 bash -c "$launch $app run $work/file80.yaml && sync"
  step verify80 120 $app verify "$work/file80.yaml" --sample
  step h5py80 120 $py scripts/bench/check_cv_dates.py "$work/in80.h5" "$work/out80.h5" --dates 6
  cp "$work/file80_run.json" "$logs/" 2>/dev/null
  rm -f "$work"/in80.h5 "$work"/out80.h5
}

slow=--slow
case $part in
  1) steps="build kernel_large kernel_seed pcie stream stream_large kernel_host host_slicings peers_gpu ctest" ;;
  2) steps="full_scale file16" ;;
  all) steps="build kernel_large kernel_seed pcie stream stream_large kernel_host host_slicings peers_gpu ctest full_scale file16" ;;
  *) steps=${part//,/ }; slow= ;;  # an explicit list of steps, e.g. build,kernel_large,ctest
esac
[[ $build == 0 ]] && steps=${steps/build/}
for s in $steps; do "s_$s"; done

echo; echo "===== summary tables ====="
for f in kernel_large kernel_seed pcie stream stream_large kernel_host host_slicings host_slicings_large peers_gpu ctest ctest_mpi pcie_all scale_gpu scale_gpu_path scale_host scale_host_unbound full_scale generate16 file16 cp16 verify16 h5py16 startup16 startup_ids lifecycle storage_split_tmpfs storage_split_disk io_threads pinning_register pinning_alloc pinning_256m python_host python_large python_calls compressed generate_zstd full_zstd check_zstd disk80 generate80 file80 verify80 h5py80; do
  [[ -f $logs/$f.log ]] || continue
  echo "--- $f"; grep -vE "^\[deps\]|OMP_PROC_BIND|OpenMP 4.0|OpenMP 3.1|unit testing" "$logs/$f.log" | tail -25
done
if [[ -n ${OUT:-} ]]; then tar czf "$OUT/gpu_suite_logs.tgz" -C "$logs" .; fi
