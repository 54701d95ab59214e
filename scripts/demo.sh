#!/usr/bin/env bash
# The main job end to end on the demo input: bootstrap the dependencies,
# build (OpenMP preset), generate data/demo.h5, run inputs/demo.yaml, verify
# it with the app and with an independent h5py/NumPy reader.
#   scripts/demo.sh            everything
#   scripts/demo.sh --no-deps  skip the bootstrap
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" != "--no-deps" ]]; then bash scripts/deps.sh; fi
cmake --preset openmp >/dev/null
cmake --build --preset openmp -j "$(nproc)"
app=build/openmp/app/discount_app
mkdir -p data out
if [[ ! -f data/demo.h5 ]]; then
  "$app" generate --dates 60 --ids 100003 --nums 5 --seed 2026 --out data/demo.h5
fi
"$app" plan inputs/demo.yaml
"$app" inputs/demo.yaml
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
with h5py.File("data/demo.h5", "r") as f, h5py.File("out/demo_cv.h5", "r") as o:
    m, d, cv = f["multBy"][...], f["discount"][...], o["cv"][...]
expected = m[None, :, :] * d
same = cv.shape == expected.shape and np.array_equal(cv.view(np.uint64), expected.view(np.uint64))
print(f"h5py check: cv {cv.shape} {'bit-identical to' if same else 'DIFFERS from'} multBy[None] * discount")
raise SystemExit(0 if same else 1)
PY
echo "demo: done; the run report is out/demo_run.json"
