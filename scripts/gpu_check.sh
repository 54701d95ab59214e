#!/usr/bin/env bash
# On a GPU node (no package manager or network needed): build Kokkos
# (CUDA + OpenMP) from the bootstrap's patched sources in deps/src, build the
# app with the `cuda` preset, and run the whole ctest suite: the kernels on
# the GPU and on the host cores, the pipeline with device copies, end to end.
#   scripts/gpu_check.sh [ARCH] [--build-only] [--mpi]    ARCH defaults to sm_90 (H100/H200)
# --mpi builds the `cuda-mpi` preset instead (one rank per GPU; needs mpicc).
# Bring deps/src (and deps/vendor on nodes without CLI11, nlohmann-json or
# GoogleTest) from a machine that ran `scripts/deps.sh --src-only --vendor`.
#
# Other Kokkos versions (logs under $OUT when set, else build/gpu_check_logs):
#   scripts/gpu_check.sh [ARCH] --kokkos 4.6.01
#       Kokkos + Kokkos Kernels 4.6.01 from the release tarballs carried in
#       deps/third_party, made CUDA 13 ready by scripts/kokkos_compat.sh, the
#       `cuda-k46` preset, the whole suite; then the [id, num] kernel of
#       `discount_bench --mode kernel` built against 3.4.01 (the `cuda` preset,
#       from deps/src) and against 4.6.01, alternating in this one call.
#   scripts/gpu_check.sh --kokkos5 DIR
#       Debian's libkokkos-dev 5.x .deb files in DIR (scripts/fetch_kokkos5.sh)
#       unpacked with dpkg -x, the app built OpenMP-only with Kokkos' C++20
#       (no Kokkos Kernels there: blas refused, its tests skipped), the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=sm_90
build_only=0
preset=cuda
kokkos=3.4.01
kokkos5_dir=
while (($#)); do
  case "$1" in
    --build-only) build_only=1 ;;
    --mpi) preset=cuda-mpi ;;
    --kokkos) kokkos=${2:?--kokkos needs a version}; shift
      [[ $kokkos == 4.6.01 ]] || { echo "gpu_check.sh: --kokkos takes 4.6.01" >&2; exit 64; } ;;
    --kokkos5) kokkos5_dir=${2:?--kokkos5 needs the folder of the .deb files}; shift ;;
    sm_*) arch=$1 ;;
    *) echo "gpu_check.sh: unknown argument '$1'" >&2; exit 64 ;;
  esac
  shift
done
logs=${OUT:-build/gpu_check_logs}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
start=$(date +%s)
stamp() { echo "gpu_check: $* after $(( $(date +%s) - start )) s"; }
# Machine, date and commit at the top of every log set.
{ date -u; hostname; git rev-parse HEAD 2>/dev/null || true; nvidia-smi --query-gpu=name,memory.total,driver_version \
  --format=csv,noheader 2>/dev/null || true; nvcc --version 2>/dev/null | tail -n 1 || true; cmake --version | head -n 1
  "${CXX:-g++}" --version | head -n 1; } >"$logs/machine.txt" 2>&1 || true

# ---------------------------------------------------------------- Kokkos 5 (OpenMP)
if [[ -n $kokkos5_dir ]]; then
  prefix=$PWD/deps/kokkos5-root
  rm -rf "$prefix"; mkdir -p "$prefix"
  shopt -s nullglob; debs=("$kokkos5_dir"/*.deb); shopt -u nullglob
  ((${#debs[@]})) || { echo "gpu_check.sh: no .deb files in $kokkos5_dir" >&2; exit 66; }
  for deb in "${debs[@]}"; do dpkg -x "$deb" "$prefix"; done
  cmake_dir=$(dirname "$(find "$prefix" -name KokkosConfig.cmake | head -n 1)")
  libdir=$(dirname "$(find "$prefix" -name 'libkokkoscore.so*' | head -n 1)")
  # Debian's package names /usr/include/kokkos in its targets, and two static
  # libraries that it does not ship (algorithms and SIMD, unused here): point
  # the first into the prefix, stand empty archives in for the others.
  sed -i "s#\"/usr/include/kokkos\"#\"$prefix/usr/include/kokkos\"#g" "$cmake_dir"/KokkosTargets*.cmake
  for lib in kokkosalgorithms kokkossimd; do
    [[ -f $libdir/lib$lib.a ]] || ar qc "$libdir/lib$lib.a"
  done
  export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  build=build/openmp-k5
  cmake --preset openmp -B "$build" -DCMAKE_PREFIX_PATH="$prefix/usr" -DDISCOUNT_ENABLE_KOKKOS_KERNELS=AUTO \
    >"$logs/kokkos5-configure.log" 2>&1 || { tail -n 30 "$logs/kokkos5-configure.log"; exit 1; }
  grep 'discount_app:' "$logs/kokkos5-configure.log"
  cmake --build "$build" -j "$(nproc)" >"$logs/kokkos5-build.log" 2>&1 ||
    { tail -n 40 "$logs/kokkos5-build.log"; exit 1; }
  stamp "Kokkos 5 build done"
  "$build/app/discount_app" --version | tee "$logs/kokkos5-version.txt"
  [[ $build_only == 1 ]] && exit 0
  rc=0
  ctest --test-dir "$build" -j 4 --output-on-failure >"$logs/kokkos5-ctest.log" 2>&1 || rc=$?
  tail -n 25 "$logs/kokkos5-ctest.log"
  stamp "Kokkos 5 suite finished (ctest exit $rc)"
  exit $rc
fi

command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
export NVCC_WRAPPER_DEFAULT_ARCH=$arch

# ---------------------------------------------------------------- Kokkos 3.4.01 (default)
if [[ $kokkos == 3.4.01 ]]; then
  bash scripts/deps.sh --no-apt --cuda "$arch"
  stamp "dependencies ready"
  cmake --preset "$preset" -DDISCOUNT_BUILD_BENCH=ON >/dev/null  # discount_bench too (scripts/bench/gpu_suite.sh)
  cmake --build --preset "$preset" -j "$(nproc)"
  stamp "build done"
  "build/$preset/app/discount_app" --version
  # tests/python runs inside ctest (label python) when the module was built.
  if compgen -G "build/$preset/python/discount_app/_core*.so" >/dev/null; then
    stamp "Python module built: ctest runs tests/python on this build (label python)"
  else
    stamp "Python module not built here (no Python 3 headers or pybind11): tests/python skipped"
  fi
  [[ $build_only == 1 ]] && exit 0
  ctest --preset "$preset" -j 4
  stamp "all tests passed"
  exit 0
fi

# ---------------------------------------------------------------- Kokkos 4.6.01 (CUDA)
{
  bash scripts/deps.sh --no-apt --kokkos 4.6.01 --src-only
  bash scripts/kokkos_compat.sh deps/src-k4.6.01/kokkos
  bash scripts/deps.sh --no-apt --kokkos 4.6.01 --cuda "$arch"
} 2>&1 | tee "$logs/k46-deps.log"
stamp "Kokkos 4.6.01 (CUDA) ready"
cmake --preset cuda-k46 -DDISCOUNT_BUILD_BENCH=ON >"$logs/k46-configure.log" 2>&1 || { tail -n 30 "$logs/k46-configure.log"; exit 1; }
cmake --build --preset cuda-k46 -j "$(nproc)" >"$logs/k46-build.log" 2>&1 ||
  { tail -n 40 "$logs/k46-build.log"; exit 1; }
stamp "app built against Kokkos 4.6.01"
build/cuda-k46/app/discount_app --version | tee "$logs/k46-version.txt"
[[ $build_only == 1 ]] && exit 0
rc=0
ctest --preset cuda-k46 -j 4 >"$logs/k46-ctest.log" 2>&1 || rc=$?
tail -n 25 "$logs/k46-ctest.log"
stamp "Kokkos 4.6.01 (CUDA) suite finished (ctest exit $rc)"

# The [id, num] kernel, 3.4.01 against 4.6.01, alternating in one call so both
# see the same GPU state; the whole tables are in the log.
bash scripts/deps.sh --no-apt --cuda "$arch" >"$logs/k34-deps.log" 2>&1 || { tail -n 30 "$logs/k34-deps.log"; exit 1; }
cmake --preset cuda -DDISCOUNT_BUILD_BENCH=ON >/dev/null && cmake --build --preset cuda -j "$(nproc)" --target discount_bench \
  >"$logs/k34-bench-build.log" 2>&1 || { tail -n 30 "$logs/k34-bench-build.log"; exit 1; }
bench_args=(--mode kernel --dates 200 --ids 1000000 --nums 5 --reps 10)
for round in 1 2 3; do
  for flavour in cuda cuda-k46; do
    echo "== round $round: build/$flavour/discount_bench ${bench_args[*]}"
    "build/$flavour/discount_bench" "${bench_args[@]}"
  done
done >"$logs/kernel-compare.log" 2>&1 || { tail -n 30 "$logs/kernel-compare.log"; exit 1; }
grep -E '^== round|\[id, ?num\]' "$logs/kernel-compare.log" | tee "$logs/kernel-compare-summary.txt"
stamp "kernel comparison done"
exit $rc
