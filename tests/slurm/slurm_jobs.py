#!/usr/bin/env python3
"""The batch scripts in examples/slurm/ under a real one-node Slurm.

Each case starts its own private cluster (tests/slurm/slurm_cluster.py: own
folder, own free ports, so cases run in parallel), submits a script with
sbatch as a user would (site lines overridden on the sbatch command line),
and ends with an exact check of the output against NumPy:
  cpu_small            discount_cpu.sbatch on a small job;
  time_limit_requeue   --time=1 runs out mid-run: Slurm's SIGUSR1 warning
                       (--signal=B:USR1@20), exit 75, `scontrol requeue` by
                       the script, the requeued run resumes; one log holds
                       both runs (--open-mode=append);
  scancel_resubmit     scancel mid-run leaves only <out>.partial, whose
                       recorded dates are right; a resubmission resumes;
  mpi_srun_2_tasks     cpu_cluster.sbatch: the MPI build, 2 tasks through
                       `srun --mpi=pmix`, one output; SIGUSR1 to the batch
                       shell reaches both ranks, the requeued job resumes
                       (MPI builds only).
Exit 77 (skip) with the reason when Slurm, munge or root is missing.

Pacing. A job only meets its time limit if it is still running a minute
after it starts, and Slurm checks limits every 30 s, so the warning lands
anywhere in a 30 s window. Rather than a job sized to outlast that window on
every machine, the test holds the app with SIGSTOP once it has recorded a
few dates (letting it run in short SIGCONT bursts until then), and lets it go
when the signal came (the time-limit case: the script logs the forwarded
SIGUSR1) or at scancel (Slurm sends SIGCONT before SIGTERM). The app, the
script and Slurm are untouched; only the app's pace is the test's.
"""

import os
import re
import signal
import sys
import time

# The app holds <out>.partial open while the test reads its progress record.
os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
sys.path.insert(0, HERE)
import e2e_common as E  # noqa: E402
import slurm_cluster as S  # noqa: E402

SCRIPTS = os.path.normpath(os.path.join(HERE, "..", "..", "examples", "slurm"))
# Odd sizes; one date per slab and a checkpoint after each, so a stop lands
# between recorded dates.
# Enough slabs (one date each, made durable one by one) that the app is still
# running when the test catches it, even on an idle machine.
DATES, IDS, NUMS = 200, 3001, 5
ONE_DATE = IDS * NUMS * 8


class Slurm:
    """A cluster for one case; on failure prints the daemons' and the job's logs."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.logs = []

    def __enter__(self):
        self.c = S.Cluster(log=lambda m: print(m, flush=True))
        self.c.__enter__()
        return self.c

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and exc_type is not E.Skip:
            for name in ("slurmctld", "slurmd"):
                print(self.c.logs(name, 40))
            for p in sorted(os.listdir(self.ctx.work)):
                if p.endswith(".log"):
                    with open(os.path.join(self.ctx.work, p), errors="replace") as f:
                        print(f"--- job log {p} ---\n{f.read()}")
        self.c.__exit__(exc_type, exc, tb)
        return False


def job_input(ctx, dates=DATES, ids=IDS, nums=NUMS, seed=7, memory=None, checkpoint=0):
    d = ctx.work
    src = E.generate(ctx, os.path.join(d, "in.h5"), dates, ids, nums, seed=seed)
    memory = memory or {"max_slab": ids * nums * 8, "pipeline_depth": 2}
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", memory=memory,
                       output={"checkpoint_seconds": checkpoint})
    return src, yaml, os.path.join(d, "out.h5")


def job_env(ctx):
    return {"DISCOUNT_APP": ctx.app}


def cpu_args(c, *extra):
    """Site lines of discount_cpu.sbatch overridden for the test cluster."""
    return [f"--partition={c.partition}", "--cpus-per-task=1", *extra]


def read_log(path):
    with open(path, errors="replace") as f:
        return f.read()


def job_log(ctx, prefix, job):
    return os.path.join(ctx.work, f"{prefix}-{job}.log")


def in_order(text, *needles):
    """Each needle occurs after the previous one; returns the positions."""
    at, pos = [], 0
    for n in needles:
        i = text.find(n, pos)
        E.check(i >= 0, f"log lacks {n!r} (in this order: {needles}):\n{text}")
        at.append(i)
        pos = i + len(n)
    return at


def check_done(out, src):
    E.check_output(out, E.expected_cv(src), what="the job's output")
    E.check(not E.leftovers(out), f"leftovers: {E.leftovers(out)}")
    E.check(E.progress_of(out).all(), "progress record not all done")


# ---- pacing -----------------------------------------------------------------

def find_apps(c, count=1, timeout=60):
    """The pids of the job's `count` discount_app processes (their environment
    holds our SLURM_CONF)."""
    deadline = time.monotonic() + timeout
    found = set()
    while time.monotonic() < deadline:
        for pid in c._our_pids():
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == "discount_app":
                        found.add(pid)
            except OSError:
                pass
        if len(found) >= count:
            return sorted(found)
        time.sleep(0.005)
    raise E.Failure(f"{len(found)} of {count} discount_app processes started within {timeout} s")


def find_app(c, timeout=60):
    return find_apps(c, 1, timeout)[0]


def signal_all(pids, signo):
    for pid in pids:
        os.kill(pid, signo)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def recorded(partial):
    try:
        return int(E.progress_of(partial).sum())
    except Exception:  # noqa: BLE001 -- not created yet, or caught mid-update: ask again
        return -1


def hold_after(pids, partial, units, timeout=60, longest=0.05):
    """Stop the app (every rank of it) at once; let it run in short bursts
    (growing to `longest` seconds) until `units` dates are recorded; leave it
    stopped. Returns the dates recorded."""
    pids = [pids] if isinstance(pids, int) else pids
    signal_all(pids, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    burst = 0.002
    while time.monotonic() < deadline:
        n = recorded(partial)
        if n >= units:
            return n
        if not all(alive(p) for p in pids):
            raise E.Failure(f"the app ended before {units} dates were recorded ({n}): job too small for this "
                            "machine?")
        signal_all(pids, signal.SIGCONT)
        time.sleep(burst)
        signal_all(pids, signal.SIGSTOP)
        burst = min(burst * 1.5, longest)
    raise E.Failure(f"{units} dates not recorded within {timeout} s")


def wait_until(what, predicate, timeout, step=0.2):
    """E.wait_for, polling at most every `step` seconds (the predicates ask Slurm)."""
    return E.wait_for(what, predicate, timeout=timeout, step=step)


def check_recorded_dates(partial, src):
    """Every date the progress record vouches for holds the right values."""
    done = E.progress_of(partial)
    data = E.read_output(partial)
    expected = E.expected_cv(src)
    for date in np.flatnonzero(done):
        E.assert_bits_equal(data[date], expected[date], f"recorded date {date} of the partial")
    return int(done.sum())


# ---- cases ------------------------------------------------------------------

def cpu_small(ctx):
    src, yaml, out = job_input(ctx, dates=7, ids=4099, nums=3, seed=3,
                               memory={"max_slab": 2 * 4099 * 3 * 8}, checkpoint=10)
    with Slurm(ctx) as c:
        job = c.sbatch(cpu_args(c, "--cpus-per-task=2", os.path.join(SCRIPTS, "discount_cpu.sbatch"), yaml),
                       cwd=ctx.work, env=job_env(ctx))
        info = c.wait_job(job, 120)
        log = read_log(job_log(ctx, "discount-cpu", job))
        print(log)
        E.check(info["JobState"] == "COMPLETED" and info["ExitCode"] == "0:0",
                f"job {job}: {info['JobState']} exit {info['ExitCode']}")
        in_order(log, f"discount: run 1 of job {job}", "2 threads", "4 slab(s)", "discount: done")
        E.check(info.get("NumCPUs") == "2", f"job had {info.get('NumCPUs')} CPUs, asked 2")
        E.check(info.get("Account") == "myproject", f"the script's account line was not used: {info.get('Account')}")
    check_done(out, src)


def time_limit_requeue(ctx):
    src, yaml, out = job_input(ctx, seed=8)
    partial = E.partial_of(out)
    with Slurm(ctx) as c:
        # The limit's warning comes 20-50 s after the start (--time=1, @20, checks every 30 s).
        job = c.sbatch(cpu_args(c, "--time=1", "--signal=B:USR1@20", os.path.join(SCRIPTS, "discount_cpu.sbatch"),
                                yaml), cwd=ctx.work, env=job_env(ctx))
        log_path = job_log(ctx, "discount-cpu", job)
        t0 = time.monotonic()
        pid = find_app(c)
        held = hold_after(pid, partial, 3)
        wait_until("Slurm's SIGUSR1 warning", lambda: os.path.exists(log_path)
                   and "discount: SIGUSR1" in read_log(log_path), 90)
        t_sig = time.monotonic() - t0
        os.kill(pid, signal.SIGCONT)
        first = wait_until("the requeue", lambda: int(c.job(job).get("Restarts", 0)) >= 1 and c.job(job), 60)
        print(f"SIGUSR1 {t_sig:.1f} s after the start, {held} dates recorded then; requeued "
              f"{time.monotonic() - t0:.1f} s after the start ({first['JobState']}, {first.get('Reason')})")
        info = c.wait_job(job, 150)
        t_end = time.monotonic() - t0
        log = read_log(log_path)
        print(log)
        E.check(info["JobState"] == "COMPLETED" and info["ExitCode"] == "0:0",
                f"job {job}: {info['JobState']} exit {info['ExitCode']}")
        E.check(info["Restarts"] == "1", f"job {job} restarted {info['Restarts']} times, expected once")
        # One log, both runs: the first run's lines survived the requeue.
        in_order(log, f"discount: run 1 of job {job}", "discount: SIGUSR1", "interrupted by SIGUSR1",
                 "requeueing to resume", f"discount: run 2 of job {job}", "resuming: ", "discount: done")
        m = re.search(r"resuming: (\d+) of (\d+) dates already done", log)
        E.check(m and held <= int(m.group(1)) < DATES and int(m.group(2)) == DATES,
                f"resumed with {m and m.group(0)}; {held} of {DATES} dates were recorded before the stop")
        print(f"done {t_end:.1f} s after the first start; {m.group(0)}")
    check_done(out, src)


def scancel_resubmit(ctx):
    src, yaml, out = job_input(ctx, seed=9)
    partial = E.partial_of(out)
    script = os.path.join(SCRIPTS, "discount_cpu.sbatch")
    with Slurm(ctx) as c:
        job = c.sbatch(cpu_args(c, script, yaml), cwd=ctx.work, env=job_env(ctx))
        pid = find_app(c)
        held = hold_after(pid, partial, 3)
        c.cmd("scancel", job)  # Slurm sends SIGCONT, then SIGTERM
        info = c.wait_job(job, 60)
        wait_until("the cancelled app's exit", lambda: not alive(pid), 45)
        log = read_log(job_log(ctx, "discount-cpu", job))
        print(log)
        E.check(info["JobState"] == "CANCELLED", f"job {job}: {info['JobState']}, expected CANCELLED")
        E.check("interrupted by SIGTERM" in log, "the app did not stop in order on scancel's SIGTERM")
        E.check(not os.path.exists(out), "a cancelled job left a final output")
        E.check(os.path.exists(partial), "a cancelled job left no .partial")
        done = check_recorded_dates(partial, src)
        E.check(held <= done < DATES, f"{done} dates recorded after scancel; {held} before, {DATES} in all")

        again = c.sbatch(cpu_args(c, script, yaml), cwd=ctx.work, env=job_env(ctx))
        info = c.wait_job(again, 120)
        log = read_log(job_log(ctx, "discount-cpu", again))
        print(log)
        E.check(info["JobState"] == "COMPLETED" and info["ExitCode"] == "0:0",
                f"resubmitted job {again}: {info['JobState']} exit {info['ExitCode']}")
        in_order(log, f"resuming: {done} of {DATES} dates already done", "discount: done")
    check_done(out, src)


def mpi_srun_2_tasks(ctx):
    """cpu_cluster.sbatch, 2 ranks through srun --mpi=pmix: stopped mid-run by
    SIGUSR1 to the batch shell (what --signal=B:USR1 does), which srun passes
    to both ranks; exit 75, requeue, the ranks resume and finish one output."""
    r = E.expect_rc(E.app(ctx, "--version"), 0, "--version")
    if "MPI" not in r.stdout:
        raise E.Skip("not an MPI build (DISCOUNT_ENABLE_MPI)")
    src, yaml, out = job_input(ctx, dates=DATES, ids=5003, nums=5, seed=10)
    with Slurm(ctx) as c:
        plugins = c.cmd("srun", "--mpi=list").stdout + c.cmd("srun", "--mpi=list").stderr
        E.check("pmix" in plugins, f"srun offers no pmix plugin:\n{plugins}")
        # The node shape of cpu_cluster.sbatch, shrunk to one node of this machine.
        args = [f"--partition={c.partition}", "--nodes=1", "--ntasks-per-node=2", "--ntasks-per-socket=2",
                "--cpus-per-task=1", os.path.join(SCRIPTS, "cpu_cluster.sbatch"), yaml]
        job = c.sbatch(args, cwd=ctx.work, env=job_env(ctx))
        ranks = find_apps(c, 2)
        held = hold_after(ranks, E.partial_of(out), 3)
        c.cmd("scancel", "--batch", "--signal=USR1", job)
        log_path = job_log(ctx, "discount-cpu", job)
        wait_until("the script's SIGUSR1 line", lambda: "discount: SIGUSR1" in read_log(log_path), 30)
        signal_all(ranks, signal.SIGCONT)
        info = c.wait_job(job, 180)
        log = read_log(log_path)
        print(log)
        E.check(info["JobState"] == "COMPLETED" and info["ExitCode"] == "0:0",
                f"job {job}: {info['JobState']} exit {info['ExitCode']}")
        E.check(info["Restarts"] == "1", f"job {job} restarted {info['Restarts']} times, expected once")
        first = in_order(log, f"discount: run 1 of job {job}: 2 ranks on 1 nodes, 1 threads each",
                         "discount: SIGUSR1", "requeueing to resume", f"discount: run 2 of job {job}")
        run1 = log[first[0]:first[3]]
        # The app's one line (rank 0's), and srun's word that both ranks ended with 75.
        E.check("interrupted by SIGUSR1" in run1 and "tasks 0-1: Exited with exit code 75" in run1,
                "run 1: the ranks did not both stop on SIGUSR1 with exit 75")
        m = re.search(r"by 2 ranks, resuming: (\d+) of \d+ dates already done", log)
        E.check(m and held <= int(m.group(1)) < DATES, f"run 2 did not resume past the {held} dates recorded")
        in_order(log, f"discount: run 2 of job {job}", "rank 0 of 2", "ranks: 2", "discount: done")
    check_done(out, src)


def needs_slurm(case):
    """Skip before any work where no cluster can start."""
    def run(ctx):
        why = S.unavailable()
        if why:
            raise E.Skip(why)
        case(ctx)
    return run


CASES = [(name, needs_slurm(fn)) for name, fn in [
    ("cpu_small", cpu_small),
    ("time_limit_requeue", time_limit_requeue),
    ("scancel_resubmit", scancel_resubmit),
    ("mpi_srun_2_tasks", mpi_srun_2_tasks),
]]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
