"""Shared helpers for the discount_app end-to-end tests.

Every e2e script is a table of named cases. The script runs with
    --app PATH   the discount_app binary (absolute; ctest passes $<TARGET_FILE>)
    --work DIR   a scratch directory owned by this test (wiped at start)
    --list       print the case names, one a line, and exit (CMake registers
                 one ctest test per case at configure time)
    --case NAME  run only this case (repeatable); default: all cases
Exit status: 0 all passed, 1 a case failed, 77 every selected case skipped
(ctest's SKIP_RETURN_CODE). Each case works in DIR/<case>, which is wiped
before it runs, removed when it passes and kept when it fails.

The checks are independent of the app: inputs are read with h5py, the
expected result is computed with NumPy, and results are compared bit for bit
through uint64 views.
"""

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np
import h5py

CANON = ("date", "id", "num")
MiB = 1024 * 1024
KiB = 1024
SKIP = 77

# sysexits-style codes (docs/errors.md)
EX_OK, EX_USAGE, EX_DATA, EX_NOINPUT, EX_SOFTWARE = 0, 64, 65, 66, 70
EX_CANTCREAT, EX_IOERR, EX_TEMPFAIL, EX_CONFIG = 73, 74, 75, 78


class Skip(Exception):
    """Raised by a case that cannot run here; the reason is printed."""


class Failure(AssertionError):
    pass


def need_modules(*names):
    """Skips the case when a Python module it needs is not installed here."""
    import importlib
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise Skip(f"the Python module {name} is needed ({e})")


def check(cond, msg):
    if not cond:
        raise Failure(msg)


# --------------------------------------------------------------------------
# Test context and case runner


class Context:
    def __init__(self, app, work):
        self.app = app
        self.work = work

    def dir(self, name):
        path = os.path.join(self.work, name)
        os.makedirs(path, exist_ok=True)
        return path


def _unprotect(path):
    """Undo chattr +i left behind by a crashed run so the tree can be removed."""
    if shutil.which("chattr") and os.path.exists(path):
        subprocess.run(["chattr", "-R", "-i", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wipe(path):
    if os.path.lexists(path):
        _unprotect(path)
        shutil.rmtree(path, ignore_errors=False)
    os.makedirs(path)


def main(cases, doc=""):
    """cases: list of (name, function(ctx)) in order."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--app")
    parser.add_argument("--work")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--case", action="append")
    args = parser.parse_args()
    names = [n for n, _ in cases]
    check(len(set(names)) == len(names), "duplicate case names")
    if args.list:
        print("\n".join(names))
        return 0
    if not args.app or not args.work:
        parser.error("--app and --work are required")
    app = os.path.abspath(args.app)
    if not os.access(app, os.X_OK):
        print(f"error: {app} is not executable", file=sys.stderr)
        return 1
    selected = cases
    if args.case:
        unknown = set(args.case) - set(names)
        if unknown:
            parser.error(f"unknown case(s): {sorted(unknown)}")
        selected = [(n, f) for n, f in cases if n in args.case]
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    failed, skipped = [], []
    for name, fn in selected:
        case_dir = os.path.join(work, name)
        wipe(case_dir)
        t0 = time.monotonic()
        try:
            fn(Context(app, case_dir))
        except Skip as e:
            skipped.append(name)
            print(f"SKIP {name}: {e}", flush=True)
            continue
        except Exception:
            failed.append(name)
            print(f"FAIL {name} ({time.monotonic() - t0:.2f} s)", flush=True)
            traceback.print_exc(file=sys.stdout)
            sys.stdout.flush()
            continue
        print(f"ok   {name} ({time.monotonic() - t0:.2f} s)", flush=True)
        # A passing case leaves nothing behind (the kill tests write ~200 MB);
        # a failing one keeps its directory for a post-mortem.
        _unprotect(case_dir)
        shutil.rmtree(case_dir, ignore_errors=True)
    if failed:
        print(f"{len(failed)} of {len(selected)} case(s) failed: {' '.join(failed)}")
        return 1
    if skipped and len(skipped) == len(selected):
        return SKIP
    return 0


# --------------------------------------------------------------------------
# Running the app


class Result:
    def __init__(self, argv, rc, stdout, stderr, wall, maxrss_kib):
        self.argv, self.rc, self.stdout, self.stderr = argv, rc, stdout, stderr
        self.wall, self.maxrss_kib = wall, maxrss_kib

    def __str__(self):
        rss = f"  maxrss {self.maxrss_kib} KiB" if self.maxrss_kib is not None else ""
        return (f"command: {' '.join(self.argv)}\nexit: {self.rc}  wall {self.wall:.2f} s{rss}\n--- stdout ---\n{self.stdout}--- stderr ---\n{self.stderr}")

    @property
    def stderr_lines(self):
        return self.stderr.splitlines()


def app_env(extra=None):
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "2")
    if extra:
        env.update(extra)
    return env


def start(argv, cwd, log_prefix, env=None):
    """Start argv with stdout/stderr going to files; returns (Popen, out_path, err_path)."""
    out_path, err_path = log_prefix + ".stdout", log_prefix + ".stderr"
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=app_env(env))
    return proc, out_path, err_path


def reap(proc, timeout=None):
    """wait4() the child so its own rusage is known; returns (rc, maxrss_kib)
    or None on timeout. rc is negative -signo for a signal, as in subprocess."""
    deadline = None if timeout is None else time.monotonic() + timeout
    delay = 0.001
    while True:
        try:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            # Popen reaped it first (send_signal polls an ended child): its
            # code is known, its rusage is not.
            return proc.returncode, 0
        if pid == proc.pid:
            rc = os.waitstatus_to_exitcode(status)
            proc.returncode = rc
            return rc, usage.ru_maxrss
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


_counter = [0]


TIME = "/usr/bin/time"


def run(ctx, argv, cwd=None, timeout=120, env=None, rss=False):
    """Run a command to completion; returns Result.

    rss=True measures the command's peak RSS with GNU time (Result.maxrss_kib).
    It is not taken from our own wait4(): Linux carries the forking
    process's high-water RSS (this Python, with NumPy and h5py: ~50 MB) into
    the child's ru_maxrss, which would hide a small app's figure."""
    _counter[0] += 1
    prefix = os.path.join(ctx.work, f"cmd{_counter[0]:03d}")
    if rss:
        if not os.access(TIME, os.X_OK):
            raise Skip(f"{TIME} (GNU time) is needed to measure peak RSS")
        argv = [TIME, "-f", "%M", "-o", prefix + ".rss"] + list(argv)
    t0 = time.monotonic()
    proc, out_path, err_path = start(argv, cwd or ctx.work, prefix, env)
    got = reap(proc, timeout)
    if got is None:
        proc.kill()
        reap(proc)
        raise Failure(f"timed out after {timeout} s: {' '.join(argv)}")
    rc, _ = got
    wall = time.monotonic() - t0
    maxrss = None
    if rss:
        with open(prefix + ".rss") as f:
            maxrss = int(f.read().split()[-1])
    with open(out_path, errors="replace") as f:
        out = f.read()
    with open(err_path, errors="replace") as f:
        err = f.read()
    return Result(argv, rc, out, err, wall, maxrss)


# --------------------------------------------------------------------------
# Waiting for events, never for time. A test that must act while a run is in
# flight (a signal, a kill, a look at the terminal) holds the run at a slab it
# chooses, so the run cannot end first however fast the machine is. Every wait
# has a hang guard: generous, so a loaded machine never trips it, and never the
# pass condition.

HANG_GUARD = 180  # seconds


def wait_for(what, predicate, timeout=HANG_GUARD, step=0.002):
    """Poll predicate() until it returns something true (returned); a Failure
    after `timeout` seconds (a hang guard, not the pass condition)."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            raise Failure(f"{what}: not within {timeout} s (hang guard)")
        time.sleep(delay)
        delay = min(delay * 2, step)


class Hold:
    """Pause points in a run, through the app's test-only hook
    DISCOUNT_TEST_HOLD=<dir> (lib/common/test_hooks.hpp): after the w-th slab
    it writes in this run, the run creates <dir>/held-<w> and waits while
    <dir>/hold-<w> exists; a stop signal (or an error) ends the wait. Pass
    `env` to the run; `wait(w)` for it to get there; `release(w)` to let it go on."""

    _count = [0]

    def __init__(self, ctx, *slabs):
        Hold._count[0] += 1
        self.dir = os.path.join(ctx.work, f"hold{Hold._count[0]:02d}")
        wipe(self.dir)
        for w in slabs:
            with open(self._path("hold", w), "w"):
                pass

    def _path(self, kind, w):
        return os.path.join(self.dir, f"{kind}-{w}")

    @property
    def env(self):
        return {"DISCOUNT_TEST_HOLD": self.dir}

    def reached(self, w):
        return os.path.exists(self._path("held", w))

    def wait(self, w, proc=None, ended=None, timeout=HANG_GUARD):
        """Until the run holds after its w-th slab. proc (a Popen) or ended (a
        callable that returns a description once the run has ended): the run
        ending first is a failure, reported at once."""
        def there():
            if self.reached(w):
                return True
            if proc is not None:
                got = reap(proc, timeout=0)
                if got is not None:
                    raise Failure(f"the run ended (rc {got[0]}) before it held after slab {w}")
            if ended is not None:
                how = ended()
                if how:
                    raise Failure(f"the run ended ({how}) before it held after slab {w}")
            return False
        wait_for(f"the run holding after slab {w}", there, timeout)

    def release(self, *slabs):
        for w in slabs:
            if os.path.exists(self._path("hold", w)):
                os.unlink(self._path("hold", w))


def takes_o_direct(path):
    """True on file systems known to take O_DIRECT writes (ext4, XFS)."""
    r = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() in ("ext2/ext3", "xfs")


def app(ctx, *args, **kw):
    return run(ctx, [ctx.app] + [str(a) for a in args], **kw)


def has_kokkos_kernels(ctx):
    """Whether the binary was built with Kokkos Kernels (compute.kernel: blas), from --version."""
    out = expect_rc(app(ctx, "--version"), 0, "--version").stdout
    check("compiled in: " in out, f"--version does not list the optional parts:\n{out}")
    return "Kokkos Kernels yes" in out


def expect_rc(result, rc, what=""):
    check(result.rc == rc, f"{what}: expected exit {rc}, got {result.rc}\n{result}")
    return result


def generate(ctx, path, dates, ids, nums, seed=1, axes=CANON):
    r = app(ctx, "generate", "--dates", dates, "--ids", ids, "--nums", nums, "--out", path,
            "--seed", seed, "--axes", ",".join(axes))
    expect_rc(r, 0, "generate")
    return path


# --------------------------------------------------------------------------
# YAML


_PLAIN = re.compile(r"^[A-Za-z0-9_./%-]+$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    s = str(v)
    # A leading % is a YAML directive indicator, so such a scalar is quoted.
    if _PLAIN.match(s) and s.lower() not in _RESERVED and not re.match(r"^[0-9.+%-]", s):
        return s
    return json.dumps(s)


def to_yaml(doc, indent=0):
    """Block-style YAML for nested dicts; lists become flow sequences."""
    lines = []
    pad = " " * indent
    for key, value in doc.items():
        if isinstance(value, dict):
            lines.append(f"{pad}{key}:")
            lines.append(to_yaml(value, indent + 2).rstrip("\n"))
        elif isinstance(value, (list, tuple)):
            lines.append(f"{pad}{key}: [{', '.join(_scalar(x) for x in value)}]")
        else:
            lines.append(f"{pad}{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def write_job(path, input_file, output_file, input=None, output=None, compute=None, memory=None, **top):
    """Write a job YAML. Paths are written as given (relative ones resolve
    against the YAML's directory); input_file None leaves input.file out."""
    doc = {"input": {"file": input_file} if input_file is not None else {}, "output": {"file": output_file}}
    doc["input"].update(input or {})
    doc["output"].update(output or {})
    if compute:
        doc["compute"] = dict(compute)
    if memory:
        doc["memory"] = dict(memory)
    doc.update(top)
    return write_text(path, to_yaml(doc))


def plan_slabs(ctx, job):
    r = expect_rc(app(ctx, "plan", job), 0, "plan")
    m = re.search(r"(\d+) slab\(s\)", r.stdout)
    check(m, f"plan output has no slab count:\n{r}")
    return int(m.group(1)), r.stdout


# --------------------------------------------------------------------------
# HDF5 and NumPy


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_digest(directory):
    """Names, sizes and content digests of every file under directory."""
    out = {}
    for root, _, files in os.walk(directory):
        for name in files:
            p = os.path.join(root, name)
            out[os.path.relpath(p, directory)] = file_digest(p)
    return out


def random_nonzero(rng, shape, dtype=np.float64):
    """Random values with random signs and exponents, never zero."""
    mag = rng.uniform(0.5, 2.0, size=shape) * np.exp2(rng.integers(-20, 20, size=shape))
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    return (mag * sign).astype(dtype)


def write_input(path, mult, disc, mult_name="multBy", disc_name="discount", disc_kwargs=None,
                mult_kwargs=None, mult_dtype=None, disc_dtype=None):
    """Write an input file with h5py directly (independent of `generate`)."""
    with h5py.File(path, "w") as f:
        f.create_dataset(mult_name, data=mult, dtype=mult_dtype or mult.dtype, **(mult_kwargs or {}))
        f.create_dataset(disc_name, data=disc, dtype=disc_dtype or disc.dtype, **(disc_kwargs or {}))
    return path


def read_dataset(path, name):
    with h5py.File(path, "r") as f:
        ds = f[name]
        return ds[...], ds.dtype


def expected_cv(input_path, axes=CANON, dates=None, ids=None, mult="multBy", disc="discount"):
    """cv in the file's axes order, from the inputs, computed with NumPy in float64."""
    with h5py.File(input_path, "r") as f:
        m = f[mult][...].astype(np.float64)
        d = f[disc][...].astype(np.float64)
    axes = tuple(axes)
    canon = np.transpose(d, [axes.index(a) for a in CANON])  # -> [date][id][num]
    ds = slice(*dates) if dates else slice(None)
    idsl = slice(*ids) if ids else slice(None)
    cv = m[idsl][None, :, :] * canon[ds, idsl, :]
    back = np.transpose(cv, [CANON.index(a) for a in axes])
    return np.ascontiguousarray(back)


def first_difference(actual, expected):
    a = actual.view(np.uint64)
    e = expected.view(np.uint64)
    bad = np.argwhere(a != e)
    idx = tuple(int(x) for x in bad[0])
    return (f"{len(bad)} of {a.size} elements differ; first at {idx}: "
            f"got {actual[idx]!r} (0x{int(a[idx]):016x}), expected {expected[idx]!r} (0x{int(e[idx]):016x})")


def assert_bits_equal(actual, expected, what):
    check(actual.shape == expected.shape, f"{what}: shape {actual.shape}, expected {expected.shape}")
    check(actual.dtype == np.float64 and expected.dtype == np.float64,
          f"{what}: dtypes {actual.dtype} / {expected.dtype}, expected float64")
    a = np.ascontiguousarray(actual)
    e = np.ascontiguousarray(expected)
    if not np.array_equal(a.view(np.uint64), e.view(np.uint64)):
        raise Failure(f"{what}: not bit-identical: {first_difference(a, e)}")


def read_output(path, dataset="cv"):
    """The output dataset, checked to be stored as little-endian float64."""
    check(os.path.exists(path), f"output {path} does not exist")
    with h5py.File(path, "r") as f:
        check(dataset in f, f"{path}: dataset '{dataset}' missing (has {list(f.keys())})")
        ds = f[dataset]
        check(ds.dtype == np.dtype("<f8"), f"{path}:{dataset} has dtype {ds.dtype}, expected <f8 (float64)")
        return ds[...]


def check_output(path, expected, dataset="cv", what=None):
    actual = read_output(path, dataset)
    assert_bits_equal(actual, expected, what or f"{path}:{dataset}")
    return actual


def partial_of(out):
    return out + ".partial"


def leftovers(out):
    return [p for p in (out + ".partial", out + ".partial.tmp") if os.path.lexists(p)]


RANGES = "discount_app/done_ranges"
ENTRY_BYTES = 64


def entry_valid(raw):
    """A done-range entry counts only when its last word is the FNV-1a 64 of
    its first 56 bytes (never 0): a torn or never-finished write reads as empty."""
    h = 0xcbf29ce484222325
    for b in raw[:56]:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return int.from_bytes(raw[56:64], "little") == (h or 1)


def decode_ranges(raw):
    """The valid (begin, end, run) entries of a done-range table's raw bytes."""
    out = []
    for j in range(0, len(raw) - ENTRY_BYTES + 1, ENTRY_BYTES):
        e = raw[j:j + ENTRY_BYTES]
        if any(e) and entry_valid(e):
            out.append((int.from_bytes(e[0:8], "little", signed=True), int.from_bytes(e[8:16], "little", signed=True),
                        int.from_bytes(e[16:20], "little", signed=True)))
    return out


def record_units(f):
    """Units along the chunk axis of an output file opened with h5py."""
    chunk = f["discount_app"].attrs["chunk_axis"]
    chunk = chunk.decode() if isinstance(chunk, bytes) else str(chunk)
    found = []
    f.visititems(lambda name, obj: found.append(obj) if isinstance(obj, h5py.Dataset) and "axes" in obj.attrs
                 and not name.startswith("discount_app") else None)
    ds = found[0]
    axes = ds.attrs["axes"]
    axes = (axes.decode() if isinstance(axes, bytes) else str(axes)).split(",")
    return ds.shape[axes.index(chunk)]


def done_ranges(path):
    """(begin, end, run) of every valid done range a .partial (or finished) output records."""
    with h5py.File(path, "r") as f:
        return decode_ranges(f[RANGES][...].tobytes())


def unit_runs_of(path):
    """Per unit of the chunk axis: the run whose range covers it (the latest
    when several do), 0 where none does."""
    with h5py.File(path, "r") as f:
        units = record_units(f)
        ranges = decode_ranges(f[RANGES][...].tobytes())
    runs = np.zeros(units, dtype=np.int64)
    for b, e, run in ranges:
        runs[b:e] = np.maximum(runs[b:e], run)
    return runs


def progress_of(path):
    """Per unit of the chunk axis, 1 where the record holds it as done."""
    with h5py.File(path, "r") as f:
        units = record_units(f)
        ranges = decode_ranges(f[RANGES][...].tobytes())
    done = np.zeros(units, dtype=np.uint8)
    for b, e, _ in ranges:
        done[b:e] = 1
    return done


class ProgressReader:
    """Units a running job has recorded as done, read straight from the raw
    bytes of the .partial's done-range table (its offset looked up with h5py
    once per file, so the app's writes are never waited for)."""

    def __init__(self, partial):
        self.partial = partial
        self.at = None

    def __call__(self):
        try:
            fd = os.open(self.partial, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            ino = os.fstat(fd).st_ino
            if self.at is None or self.at[0] != ino:
                with h5py.File(self.partial, "r") as f:
                    ds = f[RANGES]
                    self.at = (ino, ds.id.get_offset(), ds.shape[0] * ENTRY_BYTES)
            _, offset, n = self.at
            ranges = decode_ranges(os.pread(fd, n, offset))
        finally:
            os.close(fd)
        covered = set()
        for b, e, _ in ranges:
            covered.update(range(b, e))
        return len(covered)


def check_job_report(report_path, out, input_path, earlier_units=(), ranks=None, chunk="date"):
    """A finished job's JSON report covers every run that wrote `out`: the
    runs' units are disjoint and together every unit of the chunk axis, their
    slabs are disjoint and together every slab, the totals are the whole
    job's bytes (cv, and the discount plus each run's ranks' multBy reads for
    date chunks), and the last run is this one. `earlier_units`: for each
    earlier run, in order, the units the .partial recorded as done when it
    stopped (read with h5py by the caller); ranks: each run's rank count.
    Returns the report."""
    with open(report_path) as f:
        doc = json.load(f)
    with h5py.File(input_path, "r") as f:
        mult_bytes, disc_shape = f["multBy"].size * 8, f["discount"].shape
    with h5py.File(out, "r") as f:
        cv = f["cv"]
        units_total = cv.shape[0] if chunk == "date" else cv.shape[1]
        unit_bytes = cv.size * 8 // units_total
        cv_bytes = cv.size * 8
        table = f["discount_app/runs"][...]
    unit_run = unit_runs_of(out)
    check(unit_run.all(), f"{out}: a unit is not recorded as done")
    runs = doc.get("runs")
    check(isinstance(runs, list) and len(runs) == len(earlier_units) + 1,
          f"report lists {len(runs or [])} runs, expected {len(earlier_units) + 1}: {runs}")
    seen_units, seen_slabs = set(), set()
    for n, run in enumerate(runs):
        check(run["run"] == n + 1, f"run {n}: numbered {run['run']}")
        check(run["unit_axis"] == chunk, f"run {n}: unit_axis {run['unit_axis']}")
        units = set()
        for b, e in run["units"]:
            units |= set(range(b, e))
        check(len(units) == run["unit_count"], f"run {n}: unit_count {run['unit_count']} != {len(units)}")
        check(not units & seen_units, f"run {n} repeats units {sorted(units & seen_units)[:10]}")
        check(not set(run["slabs"]) & seen_slabs, f"run {n} repeats slabs {sorted(set(run['slabs']) & seen_slabs)}")
        seen_units |= units
        seen_slabs |= set(run["slabs"])
        if n < len(earlier_units):
            want = set(int(u) for u in earlier_units[n])
            check(units == want, f"run {n + 1}: the report says it wrote {len(units)} units, the .partial recorded "
                                 f"{len(want)} after it stopped")
        # The file's own record agrees (h5py, not the app's JSON).
        check(set(np.flatnonzero(unit_run == run["run"]).tolist()) == units,
              f"run {n + 1}: the output's done ranges disagree with the report")
        row = table[n]
        check(int(row["run"]) == run["run"] and row["start_time"].decode() == run["start_time"]
              and row["host"].decode() == run["host"], f"run {n + 1}: the output's run table says {row}")
        check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", run["start_time"]) is not None
              and run["start_time"] <= run["end_time"], f"run {n + 1}: times {run['start_time']} {run['end_time']}")
        check(run["output_bytes"] == len(units) * unit_bytes, f"run {n + 1}: output_bytes {run['output_bytes']}")
        if ranks is not None:
            check(run["ranks"] == ranks[n], f"run {n + 1}: ranks {run['ranks']}, expected {ranks[n]}")
        check(run["this_run"] == (n == len(runs) - 1), f"run {n + 1}: this_run {run['this_run']}")
    check(seen_units == set(range(units_total)), f"the runs' units miss {sorted(set(range(units_total)) - seen_units)}")
    check(seen_slabs == set(range(doc["slabs"]["total"])),
          f"the runs' slabs miss {sorted(set(range(doc['slabs']['total'])) - seen_slabs)}")
    check(doc["output_bytes"] == cv_bytes == sum(r["output_bytes"] for r in runs),
          f"output_bytes {doc['output_bytes']} is not the job's {cv_bytes}")
    disc_bytes = int(np.prod(disc_shape)) * 8
    resident = sum(r["ranks"] for r in runs) * mult_bytes if chunk == "date" else mult_bytes
    check(doc["input_bytes"] == disc_bytes + resident, f"input_bytes {doc['input_bytes']}, expected the job's "
                                                      f"{disc_bytes} + multBy reads {resident}")
    this = doc["this_run"]
    check(this["run"] == len(runs) and this["output_bytes"] == runs[-1]["output_bytes"]
          and this["slabs"] == doc["slabs"]["run"] == len(runs[-1]["slabs"]), f"this_run {this} vs {runs[-1]}")
    check(this["wall_seconds"] == doc["wall_seconds"], "this_run's wall time is not the report's")
    return doc


def poison(path, size=4096):
    """A garbage file in place of an output (so a test notices if it survives)."""
    with open(path, "wb") as f:
        f.write(b"POISON" + os.urandom(size))
    return path


def mtime_ns(path):
    return os.stat(path).st_mtime_ns


# --------------------------------------------------------------------------
# A read-only directory as root: root ignores mode bits, so use the
# immutable attribute, or else a read-only tmpfs mount.


class ReadOnlyDir:
    def __init__(self, path):
        self.path = path
        self.how = None

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        os.chmod(self.path, 0o555)
        if self._blocks():
            self.how = "chmod 555"
            return self
        if shutil.which("chattr"):
            if subprocess.run(["chattr", "+i", self.path], stderr=subprocess.DEVNULL).returncode == 0:
                if self._blocks():
                    self.how = "chattr +i"
                    return self
                subprocess.run(["chattr", "-i", self.path], stderr=subprocess.DEVNULL)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", self.path],
                          stderr=subprocess.DEVNULL).returncode == 0:
            if self._blocks():
                self.how = "read-only tmpfs"
                return self
            subprocess.run(["umount", self.path])
        os.chmod(self.path, 0o755)
        raise Skip("cannot make a directory read-only for this user (chmod, chattr +i and a read-only "
                   "tmpfs mount all failed)")

    def _blocks(self):
        probe = os.path.join(self.path, ".probe")
        try:
            with open(probe, "w"):
                pass
        except OSError:
            return True
        os.unlink(probe)
        return False

    def __exit__(self, *exc):
        if self.how == "chattr +i":
            subprocess.run(["chattr", "-i", self.path])
        elif self.how == "read-only tmpfs":
            subprocess.run(["umount", self.path])
        os.chmod(self.path, 0o755)
        return False


def _record_name(name):
    """A name as a part record writes it: bytes other than [A-Za-z0-9._-] as %XX."""
    plain = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
    return "".join(chr(b) if b in plain else "%%%02X" % b for b in os.fsencode(name))


def write_part_record(folder, output, parts):
    """The record a split output's part folder carries (lib/io/posix/part_record.hpp), as the app writes it."""
    lines = ["discount_app part set 1", "output " + _record_name(output),
             "folder " + _record_name(os.path.basename(folder))]
    lines += ["part " + _record_name(p) for p in parts] + [f"end {len(parts)}"]
    with open(os.path.join(folder, "discount_app-parts.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def text(value):
    """An HDF5 string attribute as str, whichever way h5py returns it."""
    return value.decode() if isinstance(value, bytes) else str(value)


def damaged_hdf5_env():
    """The environment for a run that reads a damaged HDF5 file: under AddressSanitizer no leak
    check, since HDF5's own allocations on its error paths are never freed (its exit-time clean-up is
    off) and LeakSanitizer would turn the documented exit code into 1. None elsewhere."""
    return {"ASAN_OPTIONS": os.environ["ASAN_OPTIONS"] + ":detect_leaks=0"} if "ASAN_OPTIONS" in os.environ else None
