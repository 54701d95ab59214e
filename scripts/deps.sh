#!/usr/bin/env bash
# Bootstrap the project's dependencies into deps/ (git-ignored): Debian
# packages; Kokkos and Kokkos Kernels 3.4.01 from Debian's `trilinos` source
# package, patched (cmake/patches/) and built into deps/install/<flavour>.
# Each step leaves a stamp, so a rerun is a fast no-op. A node without network
# gets deps/src carried in and runs `scripts/deps.sh --no-apt --cuda sm_90`.
# `--kokkos 4.6.01 --third-party DIR` builds upstream release tarballs instead.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEPS=$ROOT/deps
PATCH_DIR=$ROOT/cmake/patches
SRC=$DEPS/src

TRILINOS_VERSION=13.2.0-4
TRILINOS_ORIG=trilinos_13.2.0.orig.tar.gz
TRILINOS_ORIG_SHA256=0ddb47784ba7b8a6b9a07a4822b33be508feb4ccd54301b2a5d10c9e54524b90
KOKKOS_VERSION=3.4.01          # the default: Debian's trilinos sources
UPSTREAM_VERSIONS=(4.6.01)     # from upstream release tarballs (--kokkos)

APT_PACKAGES=(g++ cmake ninja-build make libhdf5-dev hdf5-tools libyaml-cpp-dev
  libcli11-dev nlohmann-json3-dev libgtest-dev python3-h5py python3-numpy python3-matplotlib
  python3-numba python3-dask python3-distributed python3-zarr dpkg-dev time xz-utils tmux
  python3-xarray python3-h5netcdf python3-netcdf4 python3-pandas netcdf-bin
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-venv python3-pip
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev clang-format strace
  libdeflate-dev libzstd-dev liblz4-dev libblosc-dev libsnappy-dev
  hdf5-filter-plugin hdf5-filter-plugin-blosc-serial python3-hdf5plugin)
# The compression libraries serve lib/codec (libsnappy-dev completes the static
# libblosc.a); the filter plugins let h5py and the HDF5 tools read those datasets.
# Slurm for tests/slurm: srun's pmix plugin needs libpmix-dev; the three-node
# tests use ip, iptables and ping for their network namespaces and links.
SLURM_PACKAGES=(slurm-wlm munge libpmix-dev iproute2 iptables iputils-ping)

usage() {
  cat <<EOF
Usage: scripts/deps.sh [options]

Installs the build dependencies, then fetches, patches and builds Kokkos
$KOKKOS_VERSION and Kokkos Kernels $KOKKOS_VERSION into deps/install/<flavour>.

Options:
  --cuda [ARCH]        build the 'cuda' flavour (CUDA + OpenMP + Serial) for
                       ARCH: sm_90 (default, H100/H200), sm_86, sm_80, sm_75,
                       sm_70. Without it the 'openmp' flavour (OpenMP + Serial).
  --no-apt             do not install Debian packages (no root needed). With
                       deps/src present nothing touches the network.
  --src-only           only fetch, extract and patch the sources (deps/src);
                       carry deps/src to a machine without network.
  --kokkos VERSION     $KOKKOS_VERSION (default, Debian's sources) or ${UPSTREAM_VERSIONS[*]}: Kokkos and
                       Kokkos Kernels VERSION from the upstream release tarballs
                       (unpatched), into deps/src-kVERSION and the flavour
                       <flavour>-kVERSION (e.g. deps/install/openmp-k4.6.01).
  --third-party DIR    folder with kokkos-VERSION.tar.gz,
                       kokkos-kernels-VERSION.tar.gz and their SHA256SUMS.
                       Default: \$DISCOUNT_THIRD_PARTY, else deps/third_party,
                       else ../third_party beside the repository's parent.
  --jobs N             parallel build jobs (default: nproc).
  --vendor             also copy the header-only CLI11 and nlohmann-json, the
                       GoogleTest sources, and the compression libraries'
                       headers and static libraries (libdeflate, zstd, LZ4,
                       Blosc and its Snappy) from the system into deps/vendor,
                       for nodes that lack them (CMake falls back to it).
  -h, --help           show this help.

Paths:
  deps/src/{kokkos,kokkos-kernels}   patched sources (about 13 MB)
  deps/src-kVERSION/                 --kokkos VERSION sources
  deps/install/openmp                 OpenMP flavour install prefix
  deps/install/cuda                   CUDA flavour (bin/nvcc_wrapper inside)
  deps/logs/                          configure/build logs

The last line printed is CMAKE_PREFIX_PATH=<install prefix>.
EOF
}

# ---------------------------------------------------------------- options
USE_APT=1
FLAVOUR=openmp
CUDA_ARCH=
SRC_ONLY=0
JOBS=$(nproc 2>/dev/null || echo 2)
VENDOR=0
THIRD_PARTY=
while (($#)); do
  case $1 in
    --cuda)
      FLAVOUR=cuda; CUDA_ARCH=sm_90
      if [[ ${2:-} =~ ^sm_[0-9]+$ ]]; then CUDA_ARCH=$2; shift; fi ;;
    --cuda=*) FLAVOUR=cuda; CUDA_ARCH=${1#--cuda=} ;;
    --no-apt) USE_APT=0 ;;
    --src-only) SRC_ONLY=1 ;;
    --jobs|-j) JOBS=${2:?--jobs needs a number}; shift ;;
    --vendor) VENDOR=1 ;;
    --kokkos) KOKKOS_VERSION=${2:?--kokkos needs a version}; shift ;;
    --kokkos=*) KOKKOS_VERSION=${1#--kokkos=} ;;
    --third-party) THIRD_PARTY=${2:?--third-party needs a folder}; shift ;;
    --third-party=*) THIRD_PARTY=${1#--third-party=} ;;
    -h|--help) usage; exit 0 ;;
    *) echo "deps.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

log() { printf '[deps] %s\n' "$*" >&2; }
die() { printf '[deps] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

run_logged() {  # run_logged <log file> <command...>: the log's tail on failure
  local logfile=$1; shift
  if ! "$@" >"$logfile" 2>&1; then
    tail -n 40 "$logfile" >&2
    die "command failed (full log: $logfile): $*"
  fi
}

mkdir -p "$DEPS/logs"

# --kokkos: the upstream release tarballs, pinned by their SHA-256 here (the
# SHA256SUMS beside them is checked too), unpacked into their own source folder.
declare -A UPSTREAM_SHA256=(
  [kokkos-4.6.01.tar.gz]=af54a59821a88870ff98b0b05fad3a6571ba04c4c6d550bdb0b43da6f533b49f
  [kokkos-kernels-4.6.01.tar.gz]=0f4585e85dc2831fa268a79ac8e83b9cd0545fc771f9d3951048fd5223855ef4
)
UPSTREAM=0
FLAVOUR_SUFFIX=
if [[ $KOKKOS_VERSION != 3.4.01 ]]; then
  [[ " ${UPSTREAM_VERSIONS[*]} " == *" $KOKKOS_VERSION "* ]] \
    || die "--kokkos $KOKKOS_VERSION: known versions are 3.4.01 ${UPSTREAM_VERSIONS[*]}"
  UPSTREAM=1
  SRC=$DEPS/src-k$KOKKOS_VERSION
  FLAVOUR_SUFFIX=-k$KOKKOS_VERSION
fi

# ---------------------------------------------------------------- 1. apt
as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root to run: $*  (or pass --no-apt)"; fi
}

step_apt() {
  local t0 missing=() p
  t0=$(now)
  for p in "${APT_PACKAGES[@]}" "${SLURM_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
      || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "apt: all $((${#APT_PACKAGES[@]} + ${#SLURM_PACKAGES[@]})) packages installed ($(elapsed "$t0"))"
    return
  fi
  log "apt: installing ${missing[*]}"
  local stamp=$DEPS/.apt-update.stamp
  if [[ -z $(find "$stamp" -mmin -1440 2>/dev/null) ]]; then
    as_root apt-get update -q
    touch "$stamp"
  fi
  as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
  log "apt: done ($(elapsed "$t0"))"
}

if ((USE_APT)) && command -v apt-get >/dev/null; then
  step_apt
else
  log "apt: skipped"
fi

# ---------------------------------------------------------------- 2. sources
SOURCE_STAMP=$SRC/.source.stamp
SOURCE_ID="trilinos $TRILINOS_VERSION ($TRILINOS_ORIG sha256 $TRILINOS_ORIG_SHA256): kokkos $KOKKOS_VERSION, kokkos-kernels $KOKKOS_VERSION"

# 'apt-get source' through a private apt configuration (deps/apt) whose deb-src
# entries come from the system's own sources: no archive host in the project.
fetch_tarball() {
  command -v apt-get >/dev/null \
    || die "no Kokkos sources in deps/src and no apt-get to fetch them; carry deps/src here"
  local apt=$DEPS/apt
  rm -rf "$apt"
  mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial" "$DEPS/download"
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    sed -E 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      >"$apt/parts/debian-src.sources"
  fi
  if [[ -f /etc/apt/sources.list ]]; then   # legacy one-line format
    sed -nE 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list \
      >"$apt/parts/debian-src.list"
  fi
  [[ -n $(cat "$apt"/parts/* 2>/dev/null) ]] \
    || die "found no Debian apt sources to derive deb-src entries from"
  local opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
  # Root: download as root rather than via the _apt user, who cannot write here.
  [[ $(id -u) -eq 0 ]] && opts+=(-o APT::Sandbox::User=root)
  # apt's output names the archive host: show it on failure, never log it.
  local out
  log "sources: apt-get update (deb-src, private lists in deps/apt)"
  out=$(apt-get "${opts[@]}" -q update 2>&1) \
    || { tail -n 20 <<<"$out" >&2; rm -rf "$apt"; die "apt-get update (deb-src) failed"; }
  log "sources: apt-get source --download-only trilinos=$TRILINOS_VERSION"
  out=$(cd "$DEPS/download" && apt-get "${opts[@]}" -q source --download-only "trilinos=$TRILINOS_VERSION" 2>&1) \
    || { tail -n 20 <<<"$out" >&2; rm -rf "$apt"; die "apt-get source failed"; }
  rm -rf "$apt"   # its source lists are ~20 MB and no longer needed
}

# Folders not needed to build and install the libraries (tests, benchmarks,
# examples, docs, bundled gtest). Each is only added by CMake when tests or
# examples are enabled (kokkos/example/CMakeLists.txt is always read: kept).
TRIM_KOKKOS=(core/unit_test core/perf_test containers/unit_tests
  containers/performance_tests algorithms/unit_tests benchmarks doc scripts
  config tpls/gtest example/build_cmake_in_tree example/build_cmake_installed
  example/build_cmake_installed_different_compiler example/make_buildlink
  example/query_device example/tutorial example/virtual_functions)
TRIM_KERNELS=(unit_test perf_test test_common example doc scripts tpls/gtest)

step_sources() {
  local t0
  t0=$(now)
  if [[ -f $SOURCE_STAMP && $(<"$SOURCE_STAMP") == "$SOURCE_ID" ]]; then
    log "sources: deps/src is up to date"
    return
  fi
  if [[ ! -f $SOURCE_STAMP \
        && -f $SRC/kokkos/CMakeLists.txt && -f $SRC/kokkos-kernels/CMakeLists.txt ]]; then
    log "sources: using the unstamped trees already in deps/src"
    return
  fi
  local tarball=$DEPS/download/$TRILINOS_ORIG
  [[ -f $tarball ]] || fetch_tarball
  [[ -f $tarball ]] || die "missing $tarball"
  log "sources: checking $tarball"
  echo "$TRILINOS_ORIG_SHA256  $tarball" | sha256sum -c --quiet - \
    || die "$tarball is not trilinos $TRILINOS_VERSION's orig tarball (sha256 mismatch)"
  log "sources: extracting packages/kokkos and packages/kokkos-kernels"
  local tmp=$DEPS/src.tmp
  rm -rf "$tmp"; mkdir -p "$tmp"
  tar xzf "$tarball" -C "$tmp" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  local top=("$tmp"/*/packages)
  local d
  for d in "${TRIM_KOKKOS[@]}"; do rm -rf "${top[0]}/kokkos/$d"; done
  for d in "${TRIM_KERNELS[@]}"; do rm -rf "${top[0]}/kokkos-kernels/$d"; done
  rm -rf "$SRC"; mkdir -p "$SRC"
  mv "${top[0]}/kokkos" "${top[0]}/kokkos-kernels" "$SRC/"
  rm -rf "$tmp"
  echo "$SOURCE_ID" >"$SOURCE_STAMP"
  rm -rf "$DEPS/download"
  log "sources: $(du -sh "$SRC" | cut -f1) in deps/src ($(elapsed "$t0"))"
}

third_party_dir() {
  local d
  for d in "$THIRD_PARTY" "${DISCOUNT_THIRD_PARTY:-}" "$DEPS/third_party"; do
    [[ -n $d && -f $d/kokkos-$KOKKOS_VERSION.tar.gz ]] && { realpath "$d"; return; }
  done
  [[ -n $THIRD_PARTY ]] && die "--third-party $THIRD_PARTY: no kokkos-$KOKKOS_VERSION.tar.gz there"
  die "no kokkos-$KOKKOS_VERSION.tar.gz: pass --third-party DIR (or set DISCOUNT_THIRD_PARTY," \
    "or copy the tarballs into deps/third_party)"
}

step_upstream_sources() {
  local t0 dir name sums=() f
  t0=$(now)
  for name in kokkos kokkos-kernels; do
    f=$name-$KOKKOS_VERSION.tar.gz
    sums+=("$f sha256 ${UPSTREAM_SHA256[$f]}")
  done
  SOURCE_ID="upstream ${sums[*]}"
  if [[ -f $SRC/.source.stamp && $(<"$SRC/.source.stamp") == "$SOURCE_ID" ]]; then
    log "sources: deps/src-k$KOKKOS_VERSION is up to date"
    return
  fi
  dir=$(third_party_dir)
  for name in kokkos kokkos-kernels; do
    f=$name-$KOKKOS_VERSION.tar.gz
    [[ -f $dir/$f ]] || die "missing $dir/$f"
    log "sources: checking $dir/$f"
    echo "${UPSTREAM_SHA256[$f]}  $dir/$f" | sha256sum -c --quiet - \
      || die "$dir/$f is not the $name $KOKKOS_VERSION release (sha256 mismatch)"
    if [[ -f $dir/SHA256SUMS ]] && ! grep -q "^${UPSTREAM_SHA256[$f]}  $f\$" "$dir/SHA256SUMS"; then
      die "$dir/SHA256SUMS disagrees with this script about $f"
    fi
  done
  local tmp=$SRC.tmp
  rm -rf "$tmp"; mkdir -p "$tmp"
  for name in kokkos kokkos-kernels; do
    tar xzf "$dir/$name-$KOKKOS_VERSION.tar.gz" -C "$tmp"
    [[ -f $tmp/$name/CMakeLists.txt ]] || die "$name-$KOKKOS_VERSION.tar.gz has no $name/ folder"
  done
  rm -rf "$SRC"
  mv "$tmp" "$SRC"
  echo "$SOURCE_ID" >"$SRC/.source.stamp"
  log "sources: $(du -sh "$SRC" | cut -f1) in deps/src-k$KOKKOS_VERSION ($(elapsed "$t0"))"
}

if ((UPSTREAM)); then step_upstream_sources; else step_sources; fi

# ---------------------------------------------------------------- 3. patches
# Patches apply to deps/src/kokkos in name order. Before a file is first
# patched its pristine copy goes to deps/src/.orig, so a changed patch set is
# re-applied from pristine sources.
shopt -s nullglob
PATCHES=("$PATCH_DIR"/*.patch)
shopt -u nullglob
PATCH_SUM=$( (cd "$PATCH_DIR" 2>/dev/null && sha256sum ./*.patch 2>/dev/null) | sha256sum | cut -c1-16)
PATCH_STAMP=$SRC/kokkos/.patches.stamp
ORIG=$SRC/.orig

patched_files() { sed -nE 's/^\+\+\+ [^/]*\/([^[:space:]]+).*/\1/p' "$1"; }  # the files a patch touches

# patch(1) if present, else git apply (kept from seeing the project's repo).
apply_patch() {  # apply_patch <patch> [forward|reverse-check|forward-check]
  local p=$1 mode=${2:-forward}
  if command -v patch >/dev/null; then
    case $mode in
      forward)       patch -p1 -N -s -f <"$p" ;;
      forward-check) patch -p1 -N -s -f --dry-run <"$p" >/dev/null 2>&1 ;;
      reverse-check) patch -p1 -R -s -f --dry-run <"$p" >/dev/null 2>&1 ;;
    esac
  else
    case $mode in
      forward)       GIT_CEILING_DIRECTORIES=$SRC git apply -p1 "$p" ;;
      forward-check) GIT_CEILING_DIRECTORIES=$SRC git apply -p1 --check "$p" 2>/dev/null ;;
      reverse-check) GIT_CEILING_DIRECTORIES=$SRC git apply -p1 -R --check "$p" 2>/dev/null ;;
    esac
  fi
}

step_patches() {
  local t0
  t0=$(now)
  if [[ -f $PATCH_STAMP && $(<"$PATCH_STAMP") == "$PATCH_SUM" ]]; then
    log "patches: ${#PATCHES[@]} applied already"
    return
  fi
  cd "$SRC/kokkos"
  if [[ -d $ORIG ]]; then  # back to pristine
    (cd "$ORIG" && find . -type f ! -name .created -print0) |
      while IFS= read -r -d '' f; do cp -p "$ORIG/$f" "$f"; done
    [[ -f $ORIG/.created ]] && xargs -r rm -f <"$ORIG/.created"
    rm -f "$ORIG/.created"
  fi
  local p f
  for p in "${PATCHES[@]}"; do
    if apply_patch "$p" forward-check; then
      while read -r f; do  # each file's pristine state, before its first change
        [[ -e $ORIG/$f ]] && continue
        grep -Fxqs "$f" "$ORIG/.created" && continue
        if [[ -e $f ]]; then mkdir -p "$ORIG/$(dirname "$f")"; cp -p "$f" "$ORIG/$f"
        else mkdir -p "$ORIG"; echo "$f" >>"$ORIG/.created"; fi
      done < <(patched_files "$p")
      apply_patch "$p" forward
      log "patches: applied $(basename "$p")"
    elif apply_patch "$p" reverse-check; then
      log "patches: $(basename "$p") was applied already"
    else
      die "patch $(basename "$p") does not apply to deps/src/kokkos"
    fi
  done
  echo "$PATCH_SUM" >"$PATCH_STAMP"
  cd "$ROOT"
  log "patches: done ($(elapsed "$t0"))"
}

# The upstream releases are built as released; only scripts/kokkos_compat.sh
# (CUDA 13 signatures for 4.6.01) may change them, and says so in a marker.
if ((UPSTREAM)); then
  PATCH_SUM="none; compat: $(cat "$SRC/kokkos/.kokkos_compat" 2>/dev/null || echo none)"
  log "patches: none for Kokkos $KOKKOS_VERSION (compat: ${PATCH_SUM#*compat: })"
else
  step_patches
fi

# ---------------------------------------------------------------- vendor
# For nodes without these: the Debian packages' files travel with deps/.
VENDOR_HEADERS=(libdeflate.h zstd.h zstd_errors.h lz4.h blosc.h blosc-export.h)
VENDOR_ARCHIVES=(libdeflate.a libzstd.a liblz4.a libblosc.a libsnappy.a)
# Debian's libblosc.a and libzstd.a are -fPIE, not -fPIC: the Python module
# leaves such a codec out where the node has no shared library (cmake/dependencies.cmake).
declare -A VENDOR_PACKAGE=([libdeflate]=libdeflate-dev [zstd]=libzstd-dev [lz4]=liblz4-dev
  [blosc]=libblosc-dev [snappy]=libsnappy-dev)
# libdeflate.h, libzstd.a, liblz4.so.1, blosc-export.h -> libdeflate, zstd, lz4, blosc
vendor_package() {
  local stem=${1%%[._-]*}
  [[ $stem == libdeflate ]] || stem=${stem#lib}
  echo "${VENDOR_PACKAGE[$stem]:-the package that provides $1}"
}

step_vendor() {
  local dest=$DEPS/vendor f src multiarch copied=()
  mkdir -p "$dest/include"
  for dir in /usr/include/CLI /usr/include/nlohmann; do
    [[ -d $dir ]] || die "--vendor: $dir is missing (install libcli11-dev nlohmann-json3-dev)"
    rm -rf "$dest/include/$(basename "$dir")"
    cp -r "$dir" "$dest/include/"
  done
  [[ -f /usr/src/googletest/CMakeLists.txt ]] || die "--vendor: /usr/src/googletest is missing (install googletest)"
  rm -rf "$dest/googletest"
  cp -r /usr/src/googletest "$dest/googletest"
  copied+=(CLI11 nlohmann-json GoogleTest)

  multiarch=$(gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) \
    || die "--vendor: cannot tell the library folder (no gcc -print-multiarch or dpkg-architecture)"
  # Replaced as a whole, so a rerun leaves exactly this set.
  rm -rf "${dest:?}/lib"
  mkdir -p "$dest/lib"
  for f in "${VENDOR_HEADERS[@]}"; do
    [[ -f /usr/include/$f ]] || die "--vendor: /usr/include/$f is missing (install $(vendor_package "$f"))"
    cp -p "/usr/include/$f" "$dest/include/$f"
  done
  copied+=("${VENDOR_HEADERS[@]}")
  for f in "${VENDOR_ARCHIVES[@]}"; do
    src=/usr/lib/$multiarch/$f
    [[ -f $src ]] || die "--vendor: $src is missing (install $(vendor_package "$f"))"
    cp -p "$src" "$dest/lib/$f"
  done
  copied+=("${VENDOR_ARCHIVES[@]}")
  log "vendor: copied to deps/vendor ($(du -sh "$dest" | cut -f1)): ${copied[*]}"
}
if ((VENDOR)); then step_vendor; fi

if ((SRC_ONLY)); then
  log "sources ready: $(du -sh "$SRC" | cut -f1) in ${SRC#"$ROOT"/}"
  echo "KOKKOS_SRC=$SRC"
  exit 0
fi

# ---------------------------------------------------------------- 4. build
FLAVOUR_DIR=$FLAVOUR$FLAVOUR_SUFFIX     # openmp, cuda, openmp-k4.6.01, ...
PREFIX=$DEPS/install/$FLAVOUR_DIR
BUILD=$DEPS/build/$FLAVOUR_DIR
command -v cmake >/dev/null || die "cmake not found"
if command -v ninja >/dev/null; then GEN=(-G Ninja); else GEN=(-G "Unix Makefiles"); fi

COMMON=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  "-DCMAKE_INSTALL_PREFIX=$PREFIX")
KOKKOS_OPTS=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON
  -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF)
# No explicit instantiations (the kernels instantiate in the app) and no vendor
# TPLs: Kokkos Kernels 3.4 predates the cuSPARSE API of CUDA 12+.
KERNELS_OPTS=(-DKokkosKernels_ADD_DEFAULT_ETI=OFF
  -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_INST_FLOAT=OFF
  -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF
  -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_ORDINAL_INT64_T=OFF
  -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF
  -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF
  -DKokkosKernels_ENABLE_TPL_BLAS=OFF -DKokkosKernels_ENABLE_TPL_LAPACK=OFF
  -DKokkosKernels_ENABLE_TPL_MKL=OFF -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF
  -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF
  "-DKokkos_ROOT=$PREFIX")
# Kokkos Kernels 4 builds by component: the app uses BLAS only.
if ((UPSTREAM)); then
  # cuSOLVER (on by default with CUDA) would insist on cuBLAS and cuSPARSE.
  KERNELS_OPTS+=(-DKokkosKernels_ENABLE_ALL_COMPONENTS=OFF -DKokkosKernels_ENABLE_COMPONENT_BLAS=ON
    -DKokkosKernels_ENABLE_PERFTESTS=OFF -DKokkosKernels_ENABLE_BENCHMARK=OFF
    -DKokkosKernels_ENABLE_TPL_CUSOLVER=OFF)
fi

if [[ $FLAVOUR == cuda ]]; then
  case $CUDA_ARCH in
    sm_90) KARCH=HOPPER90 ;;
    sm_86) KARCH=AMPERE86 ;;
    sm_80) KARCH=AMPERE80 ;;
    sm_75) KARCH=TURING75 ;;
    sm_70) KARCH=VOLTA70 ;;
    *) die "unsupported CUDA architecture '$CUDA_ARCH' (sm_90, sm_86, sm_80, sm_75, sm_70)" ;;
  esac
  # nvcc_wrapper calls 'nvcc' from PATH.
  if ! command -v nvcc >/dev/null; then
    for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
      [[ -n $d && -x $d/bin/nvcc ]] && { export PATH=$d/bin:$PATH; break; }
    done
  fi
  command -v nvcc >/dev/null || die "nvcc not found (set CUDA_HOME or PATH)"
  # The patched nvcc_wrapper's default architecture, used by CMake's
  # compiler checks (its own default sm_35 is rejected by CUDA >= 12).
  export NVCC_WRAPPER_DEFAULT_ARCH=$CUDA_ARCH
  KOKKOS_CXX=$SRC/kokkos/bin/nvcc_wrapper
  KERNELS_CXX=$PREFIX/bin/nvcc_wrapper
  KOKKOS_OPTS+=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_$KARCH=ON")
  CONFIG_ID="cuda $CUDA_ARCH $(nvcc --version | tail -n 1)"
  # 4.6.01 predates CUDA 13: scripts/kokkos_compat.sh must have run on its tree.
  cuda_major=$(nvcc --version | sed -nE 's/.*release ([0-9]+)\..*/\1/p')
  if ((UPSTREAM)) && [[ $KOKKOS_VERSION == 4.6.01 && ${cuda_major:-0} -ge 13 && ! -f $SRC/kokkos/.kokkos_compat ]]; then
    die "Kokkos 4.6.01 does not build with CUDA $cuda_major as released;" \
      "run scripts/kokkos_compat.sh ${SRC#"$ROOT"/}/kokkos first"
  fi
else
  KOKKOS_CXX=$(command -v "${CXX:-g++}") || die "C++ compiler ${CXX:-g++} not found"
  KERNELS_CXX=$KOKKOS_CXX
  CONFIG_ID="openmp $("$KOKKOS_CXX" --version | head -n 1)"
fi

# The install is current when it was built from these sources, patches and options.
BUILD_ID="$SOURCE_ID; patches $PATCH_SUM; $CONFIG_ID; ${COMMON[*]} ${KOKKOS_OPTS[*]} ${KERNELS_OPTS[*]}"
BUILD_ID=${BUILD_ID//$ROOT/.}   # stamp does not depend on where the repo lives
INSTALL_STAMP=$PREFIX/.stamp

build_project() {  # build_project <name> <source dir> <c++ compiler> <cmake args...>
  local name=$1 src=$2 cxx=$3; shift 3
  local t0 dir=$BUILD/$name
  t0=$(now)
  rm -rf "$dir"
  log "build $FLAVOUR_DIR: configuring $name"
  run_logged "$DEPS/logs/$FLAVOUR_DIR-$name-configure.log" \
    cmake -S "$src" -B "$dir" "${GEN[@]}" "-DCMAKE_CXX_COMPILER=$cxx" "$@"
  log "build $FLAVOUR_DIR: building $name (-j$JOBS)"
  run_logged "$DEPS/logs/$FLAVOUR_DIR-$name-build.log" cmake --build "$dir" -j "$JOBS"
  run_logged "$DEPS/logs/$FLAVOUR_DIR-$name-install.log" cmake --install "$dir"
  log "build $FLAVOUR_DIR: $name installed ($(elapsed "$t0"))"
}

if [[ -f $INSTALL_STAMP && $(<"$INSTALL_STAMP") == "$BUILD_ID" ]]; then
  log "build $FLAVOUR_DIR: deps/install/$FLAVOUR_DIR is up to date"
else
  t_build=$(now)
  rm -rf "$PREFIX"
  build_project kokkos "$SRC/kokkos" "$KOKKOS_CXX" "${COMMON[@]}" "${KOKKOS_OPTS[@]}"
  [[ $FLAVOUR != cuda || -x $KERNELS_CXX ]] || die "Kokkos did not install bin/nvcc_wrapper"
  build_project kokkos-kernels "$SRC/kokkos-kernels" "$KERNELS_CXX" "${COMMON[@]}" "${KERNELS_OPTS[@]}"
  echo "$BUILD_ID" >"$INSTALL_STAMP"
  rm -rf "$BUILD"   # objects are not needed once installed
  rmdir "$DEPS/build" 2>/dev/null || true
  log "build $FLAVOUR_DIR: done ($(elapsed "$t_build"))"
fi

if [[ $FLAVOUR == cuda ]]; then
  log "cuda: build the app with CMAKE_CXX_COMPILER=$PREFIX/bin/nvcc_wrapper and NVCC_WRAPPER_DEFAULT_ARCH=$CUDA_ARCH"
fi
echo "CMAKE_PREFIX_PATH=$PREFIX"
