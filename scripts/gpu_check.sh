#!/usr/bin/env bash
# On a GPU node (no package manager or network needed): build Kokkos
# (CUDA + OpenMP) from the bootstrap's patched sources in deps/src, build the
# app with the `cuda` preset, and run the whole ctest suite: the kernels on
# the GPU and on the host cores, the pipeline with device copies, end to end.
#   scripts/gpu_check.sh [ARCH] [--build-only] [--mpi]    ARCH defaults to sm_90 (H100/H200)
# --mpi builds the `cuda-mpi` preset instead (one rank per GPU; needs mpicc).
# Bring deps/src (and deps/vendor on nodes without CLI11, nlohmann-json or
# GoogleTest) from a machine that ran `scripts/deps.sh --src-only --vendor`.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=sm_90
build_only=0
preset=cuda
for arg in "$@"; do
  case "$arg" in
    --build-only) build_only=1 ;;
    --mpi) preset=cuda-mpi ;;
    sm_*) arch=$arg ;;
    *) echo "gpu_check.sh: unknown argument '$arg'" >&2; exit 64 ;;
  esac
done
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
start=$(date +%s)
bash scripts/deps.sh --no-apt --cuda "$arch"
echo "gpu_check: dependencies ready after $(( $(date +%s) - start )) s"
export NVCC_WRAPPER_DEFAULT_ARCH=$arch
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
echo "gpu_check: build done after $(( $(date +%s) - start )) s"
"build/$preset/app/discount_app" --version
[[ $build_only == 1 ]] && exit 0
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
ctest --preset "$preset" -j 4
echo "gpu_check: all tests passed after $(( $(date +%s) - start )) s"
