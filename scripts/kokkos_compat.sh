#!/usr/bin/env bash
# Makes an extracted Kokkos 4.6.01 tree build with CUDA 13, as Kokkos 4.7.01
# and later do by themselves; older CUDA still builds (every change is guarded
# by CUDART_VERSION). Kept apart from the bootstrap on purpose: scripts/deps.sh
# builds upstream releases as released, and refuses 4.6.01 with CUDA >= 13
# until this script has marked the tree. Four changes:
#   1. bin/nvcc_wrapper: the default architecture (sm_70, which CUDA 13 no
#      longer accepts, so even CMake's compiler check fails) comes from
#      NVCC_WRAPPER_DEFAULT_ARCH when set;
#   2. cudaMemPrefetchAsync   takes a cudaMemLocation and flags in CUDA 13;
#   3. cudaMemAdvise          takes a cudaMemLocation in CUDA 13;
#   4. cudaGraphAddDependencies takes edge data (nullptr: plain edges) in CUDA 13.
# 2-4 are Kokkos' own wrappers in core/src/Cuda/Kokkos_Cuda_Instance.hpp.
#   scripts/kokkos_compat.sh deps/src-k4.6.01/kokkos
# A second run on a marked tree does nothing.
set -euo pipefail
tree=${1:?usage: scripts/kokkos_compat.sh <kokkos-4.6.01 source folder>}
MARK="kokkos_compat 4.6.01: nvcc_wrapper default arch, CUDA 13 prefetch/advise/graph signatures (v1)"
die() { printf 'kokkos_compat: %s\n' "$*" >&2; exit 1; }
[[ -f $tree/CMakeLists.txt && -f $tree/bin/nvcc_wrapper ]] || die "$tree is not a Kokkos source folder"
grep -q 'set(Kokkos_VERSION_MAJOR 4)' "$tree/CMakeLists.txt" &&
  grep -q 'set(Kokkos_VERSION_MINOR 6)' "$tree/CMakeLists.txt" || die "$tree is not Kokkos 4.6 (the changes are written for 4.6.01)"
if [[ -f $tree/.kokkos_compat ]]; then
  [[ $(<"$tree/.kokkos_compat") == "$MARK" ]] || die "$tree was changed by another version of this script; extract it again"
  echo "kokkos_compat: $tree already has the changes"; exit 0
fi
command -v python3 >/dev/null || die "needs python3"

# Exact replacements, each of which must match once: a tree that differs
# from the release fails loudly instead of half-changed.
python3 - "$tree" <<'PY'
import pathlib, sys
root = pathlib.Path(sys.argv[1])
edits = {
  "bin/nvcc_wrapper": [(
    'default_arch="sm_70"\n',
    '# CUDA 13 rejects sm_70: NVCC_WRAPPER_DEFAULT_ARCH (e.g. sm_90) picks the\n'
    '# default, as in Kokkos 4.7 (scripts/kokkos_compat.sh of discount_app).\n'
    'default_arch="${NVCC_WRAPPER_DEFAULT_ARCH:-sm_70}"\n')],
  "core/src/Cuda/Kokkos_Cuda_Instance.hpp": [
    ('    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n',
     '#if CUDART_VERSION >= 13000\n'
     '    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);\n'
     '#else\n'
     '    return cudaGraphAddDependencies(graph, from, to, numDependencies);\n'
     '#endif\n'),
    ('    return cudaMemAdvise(devPtr, count, advice, device);\n',
     '#if CUDART_VERSION >= 13000\n'
     '    cudaMemLocation location{};\n'
     '    location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost\n'
     '                                              : cudaMemLocationTypeDevice;\n'
     '    location.id   = device;\n'
     '    return cudaMemAdvise(devPtr, count, advice, location);\n'
     '#else\n'
     '    return cudaMemAdvise(devPtr, count, advice, device);\n'
     '#endif\n'),
    ('    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n'
     '                                get_input_stream(stream));\n',
     '#if CUDART_VERSION >= 13000\n'
     '    cudaMemLocation location{};\n'
     '    location.type = dstDevice == cudaCpuDeviceId ? cudaMemLocationTypeHost\n'
     '                                                 : cudaMemLocationTypeDevice;\n'
     '    location.id   = dstDevice;\n'
     '    return cudaMemPrefetchAsync(devPtr, count, location, 0,\n'
     '                                get_input_stream(stream));\n'
     '#else\n'
     '    return cudaMemPrefetchAsync(devPtr, count, dstDevice,\n'
     '                                get_input_stream(stream));\n'
     '#endif\n')],
}
for rel, pairs in edits.items():
  path = root / rel
  text = path.read_text()
  for old, new in pairs:
    if text.count(old) != 1:
      sys.exit(f"kokkos_compat: {rel}: expected text found {text.count(old)} times, not once:\n{old}")
    text = text.replace(old, new)
  path.write_text(text)
  print(f"kokkos_compat: changed {rel}")
PY
echo "$MARK" >"$tree/.kokkos_compat"
echo "kokkos_compat: $tree builds with CUDA 13 now (set NVCC_WRAPPER_DEFAULT_ARCH, e.g. sm_90)"
