#!/usr/bin/env bash
# Runs the unit and end-to-end tests N times in a row while busy loops load
# the CPUs, to catch tests that pass or fail by timing. For a developer before
# they stop (a few minutes to an hour), not for every CI run.
#   scripts/stress_tests.sh                       5 rounds of ctest -L 'unit|e2e' in build/openmp, 2 busy loops
#   scripts/stress_tests.sh --build DIR           an existing, built build folder (default build/openmp)
#   scripts/stress_tests.sh --runs N              rounds (default 5)
#   scripts/stress_tests.sh --load N              busy-loop processes beside the tests (default 2; 0: none)
#   scripts/stress_tests.sh -- <ctest args>       instead of -L 'unit|e2e', e.g. -- -L e2e -R 'e2e_progress|e2e_kill'
# It neither configures nor builds. It stops at the first round with a failing
# test, prints which tests failed in which round, and exits 1; each round's
# ctest output is kept in DIR/stress/round-<n>.log. Exit 0: every round passed.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/openmp
runs=5
load=2
ctest_args=(-L 'unit|e2e')
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="${2:?--build needs a folder}"; shift ;;
    --runs) runs="${2:?--runs needs a number}"; shift ;;
    --load) load="${2:?--load needs a number}"; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "scripts/stress_tests.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
  shift
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "scripts/stress_tests.sh: --runs takes a positive number, not '$runs'" >&2; exit 64; }
[[ "$load" =~ ^[0-9]+$ ]] || { echo "scripts/stress_tests.sh: --load takes a number, not '$load'" >&2; exit 64; }
if [[ ! -f "$build/CTestTestfile.cmake" ]]; then
  echo "scripts/stress_tests.sh: $build is not a configured build folder (no CTestTestfile.cmake); build it first" >&2
  exit 66
fi

logs="$build/stress"
mkdir -p "$logs"
busy=()
stop_load() {
  local pid
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${busy[@]}"; do wait "$pid" 2>/dev/null || true; done
  busy=()
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for ((i = 0; i < load; i++)); do
  sh -c 'while :; do :; done' &
  busy+=($!)
done

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
echo "stress: $runs round(s) of ctest ${ctest_args[*]} in $build, beside $load busy loop(s); logs in $logs"
for ((round = 1; round <= runs; round++)); do
  log="$logs/round-$round.log"
  t0=$SECONDS
  rc=0
  ctest --test-dir "$build" --output-on-failure "${ctest_args[@]}" >"$log" 2>&1 || rc=$?
  summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)
  echo "round $round: ${summary:-no ctest summary} ($((SECONDS - t0)) s, ctest exit $rc)"
  if [[ $rc != 0 ]]; then
    echo "round $round failed; the failing tests:"
    # ctest's list: "  12 - e2e_progress.tmux_60_columns (Failed)"
    sed -n '/^The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' | sed "s/^[[:space:]]*/  round $round: /" || true
    [[ -n "$summary" ]] || tail -n 20 "$log"
    echo "the whole output: $log"
    exit 1
  fi
done
echo "stress: all $runs round(s) passed"
