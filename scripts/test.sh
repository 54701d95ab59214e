#!/usr/bin/env bash
# Builds and passes the test suite from a fresh clone: bootstraps the
# dependencies (scripts/deps.sh), configures a CMake preset, builds, runs ctest.
#   scripts/test.sh              the OpenMP preset (what CI runs first)
#   scripts/test.sh --asan       the debug-asan preset (AddressSanitizer + UBSan)
#   scripts/test.sh --mpi        the mpi preset (OpenMP + MPI; adds the mpirun -n 1/2/3 tests)
#   scripts/test.sh --cuda       the CUDA preset (on a GPU node; see scripts/gpu_check.sh)
#   scripts/test.sh --kokkos 4.6.01 --third-party DIR
#                                the openmp-k46 preset: against Kokkos 4.6.01, built by
#                                scripts/deps.sh from the release tarballs in DIR
#   scripts/test.sh --no-deps    skip the bootstrap (dependencies already there)
#   scripts/test.sh --without-kokkos-kernels
#                                configure without Kokkos Kernels (blas refused, its tests skipped)
# Extra arguments after -- go to ctest (e.g. -- -L unit).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=openmp
deps_args=()
run_deps=1
ctest_args=()
kernels=AUTO
while [[ $# -gt 0 ]]; do
  case "$1" in
    --asan) preset=debug-asan ;;
    --mpi) preset=mpi ;;
    --cuda) preset=cuda; deps_args+=(--cuda sm_90) ;;
    --no-deps) run_deps=0 ;;
    --no-apt) deps_args+=(--no-apt) ;;
    --kokkos)
      case "${2:-}" in
        4.6.01) preset=openmp-k46; deps_args+=(--kokkos 4.6.01) ;;
        *) echo "scripts/test.sh: --kokkos takes 4.6.01 (3.4.01 is the default)" >&2; exit 64 ;;
      esac
      shift ;;
    --third-party) deps_args+=(--third-party "${2:?--third-party needs a folder}"); shift ;;
    --without-kokkos-kernels) kernels=OFF ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "scripts/test.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
  shift
done

if [[ $run_deps == 1 ]]; then
  bash scripts/deps.sh "${deps_args[@]}"
fi
jobs=$(nproc)
# Given every time, so a build folder configured without Kokkos Kernels gets it back.
cmake --preset "$preset" -DDISCOUNT_ENABLE_KOKKOS_KERNELS=$kernels >/dev/null
cmake --build --preset "$preset" -j "$jobs"
# Kokkos' OpenMP backend: two threads per test process keeps -j2 ctest honest on small machines.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
ctest --preset "$preset" -j "$jobs" "${ctest_args[@]}"
