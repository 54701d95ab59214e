#!/usr/bin/env bash
# Downloads Debian unstable's Kokkos 5 packages (libkokkos-dev and its shared
# library package) as .deb files into deps/kokkos5/, for a machine that cannot
# install them (Debian 12 is too old to run them; the GPU node unpacks them
# with dpkg -x, see scripts/gpu_check.sh --kokkos5). The apt entries are derived
# from this system's own Debian sources with the suite changed to unstable, in
# a private apt configuration (deps/apt-kokkos5, removed afterwards): nothing
# is installed and no archive host is written into the project.
#   scripts/fetch_kokkos5.sh [VERSION]     (default 5.2.2; prints the files)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WANT=${1:-5.2.2}
DEST=$ROOT/deps/kokkos5
APT=$ROOT/deps/apt-kokkos5
die() { printf 'fetch_kokkos5: %s\n' "$*" >&2; exit 1; }
command -v apt-get >/dev/null || die "needs apt-get"
src=/etc/apt/sources.list.d/debian.sources
[[ -f $src ]] || die "$src not found (deb822 Debian sources expected)"

rm -rf "$APT"
mkdir -p "$APT/parts" "$APT/lists/partial" "$APT/cache/archives/partial" "$DEST"
trap 'rm -rf "$APT"' EXIT
# The first stanza that is not the security archive, with Suites: unstable.
awk 'BEGIN { RS = ""; ORS = "\n\n" } !/Suites:[^\n]*-security/ && !done {
       sub(/Suites:[^\n]*/, "Suites: unstable"); print; done = 1 }' "$src" >"$APT/parts/unstable.sources"
grep -q '^Suites: unstable' "$APT/parts/unstable.sources" || die "no main-archive stanza in $src"

opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APT/parts"
  -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache=$APT/cache" -o Dir::State::Status=/dev/null
  -o APT::Architecture=amd64)
[[ $(id -u) -eq 0 ]] && opts+=(-o APT::Sandbox::User=root)
# apt's output names the archive host: show it only on failure, never log it.
out=$(apt-get "${opts[@]}" -q update 2>&1) || { tail -n 20 <<<"$out" >&2; die "apt-get update failed"; }
dev_version=$(apt-cache "${opts[@]}" show libkokkos-dev 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
[[ -n $dev_version ]] || die "unstable has no libkokkos-dev"
[[ $dev_version == "$WANT"* ]] || die "unstable has libkokkos-dev $dev_version, not $WANT"
# The shared library package libkokkos-dev depends on (libkokkos5.2 for 5.2.x).
lib=$(apt-cache "${opts[@]}" show "libkokkos-dev=$dev_version" | sed -n 's/^Depends: //p' | head -n 1 |
  tr ',' '\n' | sed -E 's/^ *([^ (]+).*/\1/' | grep -E '^libkokkos[0-9]' | head -n 1)
[[ -n $lib ]] || die "cannot tell which library package libkokkos-dev $dev_version needs"
out=$(cd "$DEST" && apt-get "${opts[@]}" -q download "libkokkos-dev=$dev_version" "$lib=$dev_version" 2>&1) ||
  { tail -n 20 <<<"$out" >&2; die "apt-get download failed"; }
ls -l "$DEST"/*.deb
(cd "$DEST" && sha256sum ./*.deb >SHA256SUMS)
echo "fetch_kokkos5: libkokkos-dev $dev_version and $lib in deps/kokkos5 ($(du -sh "$DEST" | cut -f1))"
