#!/usr/bin/env bash
# The C++ sources in the style of .clang-format (clang-format from Debian,
# installed by scripts/deps.sh).
#   scripts/format.sh           reformat every tracked C++ file in place
#   scripts/format.sh --check   list the files that differ and exit 1 (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
  *) echo "scripts/format.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
esac
command -v clang-format >/dev/null || { echo "scripts/format.sh: clang-format is missing (scripts/deps.sh installs it)" >&2; exit 69; }
mapfile -t files < <(git ls-files -- 'lib/*.cpp' 'lib/*.hpp' 'app/*.cpp' 'app/*.hpp' 'tests/*.cpp' 'tests/*.hpp' \
  'python/*.cpp' 'benchmarks/*.cpp' 'scripts/*.cpp' 'scripts/*.hpp' 'scripts/*.cu')
if ((check == 0)); then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --style=file "$f" | cmp -s - "$f" || bad+=("$f")
done
if ((${#bad[@]})); then
  printf 'scripts/format.sh: %d file(s) differ from .clang-format (run scripts/format.sh):\n' "${#bad[@]}" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "[format] ${#files[@]} C++ files match .clang-format"
