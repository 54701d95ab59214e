#!/usr/bin/env python3
"""Kill and resume: the .partial protocol under SIGKILL, SIGTERM, SIGUSR1, SIGINT.

The job is 40 dates x 20011 ids x 5 with one date per slab and
pipeline_depth 2, so a run writes (and fdatasyncs) 40 slabs and takes long
enough for kills to land mid-run. Invariants checked after every kill and,
by polling, while every run is in flight:
  - <out> never exists unless it is complete (bit-identical to a clean run);
  - every date the .partial's progress record marks done holds exactly the
    clean run's values (data is durable before progress vouches for it);
  - reruns resume and the final dataset is bit-identical to a clean run,
    which itself is checked against NumPy.
Kills are triggered by progress, not by wall time (storage speed varies a
lot): the test reads the progress bytes of the .partial while the run is in
flight and signals once a seeded number of units is recorded, plus a seeded
jitter (0-1 ms); the first kill lands a few ms after start-up (creation of the
.partial). A run that a test must stop mid-run is held one slab past the
kill's target (DISCOUNT_TEST_HOLD, lib/common/test_hooks.hpp), so it cannot
finish before the kill lands however fast the machine is; the SIGTERM/SIGUSR1/SIGINT cases
hold it after its 5th slab and signal it there (the stop ends the hold).
"""

import os
import random
import re
import shutil
import signal
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

DATES, IDS, NUMS = 40, 20011, 5
DATE_BYTES = IDS * NUMS * 8


class Job:
    """A job directory: input, YAML, output, and the clean reference result."""

    def __init__(self, ctx, memory=None, seed=5, output=None):
        self.ctx = ctx
        self.output = dict(output or {})
        self.d = ctx.dir("job")
        self.src = E.generate(ctx, os.path.join(self.d, "in.h5"), DATES, IDS, NUMS, seed=seed)
        self.memory = dict({"max_slab": DATE_BYTES, "pipeline_depth": 2}, **(memory or {}))
        self.yaml = self.write_yaml("job.yaml", self.memory)
        self.out = os.path.join(self.d, "out.h5")
        # the clean run, in its own directory, checked against NumPy
        ref_dir = ctx.dir("reference")
        ref_yaml = E.write_job(os.path.join(ref_dir, "job.yaml"), self.src, "out.h5", memory=self.memory)
        # the chunk axis the plan takes (memory.chunk_axis: auto by default), planned before any output exists
        self.chunk = chunk_axis_of(E.plan_slabs(ctx, ref_yaml)[1])
        self.units = DATES if self.chunk == "date" else IDS
        t0 = time.monotonic()
        E.expect_rc(E.app(ctx, "run", "-q", ref_yaml), 0, "clean run")
        self.clean_seconds = time.monotonic() - t0
        self.ref = E.check_output(os.path.join(ref_dir, "out.h5"), E.expected_cv(self.src), what="clean run")
        slabs, plan = E.plan_slabs(ctx, self.yaml)
        self.slabs = slabs
        m = re.search(r"^chunk axis +(date|id), (\d+) per slab, (\d+) slab", plan, re.M)
        E.check(m and m.group(1) == self.chunk and int(m.group(3)) == slabs, f"plan:\n{plan}")
        self.per_slab = int(m.group(2))  # units per slab (the last may have fewer)
        print(f"clean run: {self.clean_seconds:.2f} s for {slabs} slabs")

    def write_yaml(self, name, memory):
        # Checkpoint after every slab, so kills land between recorded slabs
        # (the default, every 10 s, would record a short run only at its end).
        return E.write_job(os.path.join(self.d, name), "in.h5", "out.h5", memory=memory,
                           output=dict({"checkpoint_seconds": 0}, **self.output))

    def start(self, *extra, yaml=None, hold=None):
        """hold: an E.Hold whose pause points the run takes."""
        self.ctx_counter = getattr(self, "ctx_counter", 0) + 1
        prefix = os.path.join(self.ctx.work, f"run{self.ctx_counter:02d}")
        proc, _, err = E.start([self.ctx.app, "run"] + list(extra) + [yaml or self.yaml], self.d, prefix,
                               env=hold.env if hold else None)
        proc.err_path = err
        return proc

    def hold_for(self, target=None):
        """An E.Hold for the next run: with `target` (recorded units, counted
        over the whole job), the run holds one slab past the slab that
        reaches it, so a kill sent once the target is seen lands in that next
        slab's write or at the hold, never after the run's end; without, or at
        the latest, it holds before its last pending slab. Runs write their
        pending slabs in order. Returns (hold, the most units recorded before
        the hold: the highest reachable target)."""
        partial = E.partial_of(self.out)
        done = E.progress_of(partial) if os.path.exists(partial) else np.zeros(self.units, dtype=np.uint8)
        per = self.per_slab
        pending = [s for s in range(self.slabs) if not done[s * per:(s + 1) * per].all()]
        E.check(len(pending) >= 2, f"test setup: {len(pending)} slab(s) left, too few to stop a run mid-way")
        recorded = [int(done.sum())]  # recorded[w]: units recorded after this run's w-th slab
        for s in pending:
            recorded.append(recorded[-1] + min(per, self.units - s * per))
        last = len(pending) - 1
        at = last
        if target is not None:
            E.check(target <= recorded[last], f"test setup: target {target} is past the hold ({recorded[last]})")
            at = min(last, next(w for w in range(len(recorded)) if recorded[w] >= target) + 1)
        return E.Hold(self.ctx, at), recorded[last]

    # ---- invariants ------------------------------------------------------

    old_digest = None  # an older <out> that overwrite: true replaces only at the very end

    def check_out_complete_if_present(self, when):
        if os.path.exists(self.out):
            if self.old_digest and E.file_digest(self.out) == self.old_digest:
                return True
            E.check_output(self.out, self.ref, what=f"<out> present {when}")
            return True
        return False

    def check_partial(self, when):
        """Every unit the progress record marks done holds the clean run's values.
        Returns (done, total) or None if there is no .partial."""
        partial = E.partial_of(self.out)
        if not os.path.exists(partial):
            return None
        done = E.progress_of(partial)
        with E.h5py.File(partial, "r") as f:
            cv = f["cv"]
            E.check(cv.shape == self.ref.shape and cv.dtype == np.dtype("<f8"),
                    f"{when}: .partial cv is {cv.shape} {cv.dtype}")
            units = np.flatnonzero(done)
            if self.chunk == "date":
                got, want = cv[...][units], self.ref[units]
            else:
                got, want = cv[...][:, units], self.ref[:, units]
        E.check(set(np.unique(done).tolist()) <= {0, 1}, f"{when}: progress bytes not 0/1: {np.unique(done)}")
        E.assert_bits_equal(got, want, f"{when}: units marked done in the .partial")
        return int(done.sum()), done.size

    def progress_now(self):
        """Units the running job has recorded as done, read straight from the
        done-range table of the .partial (e2e_common.ProgressReader); None
        while there is no .partial."""
        if getattr(self, "_progress", None) is None:
            self._progress = E.ProgressReader(E.partial_of(self.out))
        return self._progress()

    def watch(self, proc, seconds=None, done_at_least=None):
        """Poll while proc runs, until `seconds` passed or the progress record
        shows `done_at_least` units; <out> must never be incomplete meanwhile.
        Returns the exit status if the process ended (it is reaped), else None.
        Waiting for progress, the time limit is a hang guard (a failure)."""
        deadline = time.monotonic() + (seconds if seconds is not None else E.HANG_GUARD)
        seen_out = False
        while time.monotonic() < deadline:
            if not seen_out and os.path.exists(self.out):
                seen_out = True
                # The rename is the last step: the file must already be whole.
                self.check_out_complete_if_present("while the run was in flight")
            got = E.reap(proc, timeout=0)
            if got is not None:
                return got[0]
            if done_at_least is not None:
                done = self.progress_now()
                if done is not None and done >= done_at_least:
                    return None
            time.sleep(0.0005)
        if seconds is None:
            raise E.Failure(f"progress did not reach {done_at_least} within {E.HANG_GUARD} s (hang guard)")
        return None

    def finish(self, *extra):
        r = E.app(self.ctx, "run", *extra, self.yaml, cwd=self.d)
        E.expect_rc(r, 0, "final rerun")
        E.check_output(self.out, self.ref, what="after resume")
        E.check(not E.leftovers(self.out), f"leftovers after completion: {E.leftovers(self.out)}")
        E.check(E.progress_of(self.out).all(), "finished output's progress record is not all done")
        return r


def chunk_axis_of(plan_text):
    m = re.search(r"^chunk axis +(date|id),", plan_text, re.M)
    E.check(m, f"plan names no chunk axis:\n{plan_text}")
    return m.group(1)


def stderr_of(proc):
    with open(proc.err_path, errors="replace") as f:
        return f.read()


def kill9_loop(ctx, kills, seed, memory=None, output=None):
    """kill -9 at seeded moments: the first during start-up (a few ms in), the
    others once the progress record reaches a seeded count, plus a seeded
    jitter of 0-1 ms so the kill lands anywhere in the next slab's write.
    Before: on very fast storage a run could finish before a kill (the loop
    then ended early). Now each run is held one slab past its target (the
    first after its first slab), so every kill lands mid-run; the first, a
    few ms in, may still land before any progress is recorded. At least
    kills - 2 must land mid-run."""
    job = Job(ctx, memory=memory, output=output)
    rng = random.Random(seed)
    landed = 0
    for k in range(kills):
        state = job.check_partial(f"before kill {k}")
        done, total = state if state else (0, job.units)
        if k == 0:
            hold = E.Hold(ctx, 1)
            proc = job.start("-q", hold=hold)
            what = f"{rng.uniform(2, 60):.0f} ms after start"
            rc = job.watch(proc, seconds=float(what.split()[0]) / 1000)
        else:
            # spread the remaining kills over what is left to do
            step = max(1, (total - done) // (kills - k + 1))
            _, reachable = job.hold_for()
            target = min(reachable, done + rng.randint(1, step))
            hold, _ = job.hold_for(target)
            proc = job.start("-q", hold=hold)
            jitter = rng.uniform(0, 0.001)
            what = f"at {target}/{total} units done + {jitter * 1000:.1f} ms"
            rc = job.watch(proc, done_at_least=target)
            if rc is None:
                time.sleep(jitter)
        exited = rc is not None
        if not exited:
            proc.send_signal(signal.SIGKILL)
            rc, _ = E.reap(proc, timeout=60)
        when = f"after kill {k} ({what})"
        present = job.check_out_complete_if_present(when)
        state = job.check_partial(when)
        print(f"kill {k} {what}: rc {rc}, partial {state}, out present {present}")
        if exited:
            E.check(rc == 0, f"run {k} ended by itself with rc {rc}:\n{stderr_of(proc)}")
            E.check(present, "run exited 0 but <out> is missing")
            break
        E.check(rc == -signal.SIGKILL, f"expected death by SIGKILL, got rc {rc}")
        E.check(not present, "<out> exists after a kill before the run could finish")
        if state and 0 < state[0] < state[1]:
            landed += 1
    print(f"{landed} kill(s) landed mid-run with progress recorded")
    need = max(1, kills - 2)
    E.check(landed >= need, f"only {landed} kill(s) landed mid-run, need {need}: the test proved too little")
    job.finish("-q")
    return job


def sigkill_resume(ctx):
    kill9_loop(ctx, kills=5, seed=20240607)


def sigkill_resume_chunk_id(ctx):
    kill9_loop(ctx, kills=3, seed=77, memory={"chunk_axis": "id", "max_slab": 500 * DATES * NUMS * 8})


def sigkill_resume_split(ctx):
    """The same kills with output.layout: split (the record stays in the master; the data in 5 parts)."""
    kill9_loop(ctx, kills=4, seed=4242, output={"layout": "split", "parts": 5})


def interrupt(signo, twice=False):
    def case(ctx):
        job = Job(ctx)
        # Before: signalled once 5 units were recorded, racing the run's end.
        # Now the run holds after its 5th slab until the signal ends the hold.
        hold = E.Hold(ctx, 5)
        proc = job.start(hold=hold)
        hold.wait(5, proc=proc)
        rc = job.watch(proc, done_at_least=5)
        E.check(rc is None, f"the run ended (rc {rc}) before {signal.Signals(signo).name} could be sent:\n"
                            f"{stderr_of(proc)}")
        proc.send_signal(signo)
        if twice:
            time.sleep(0.001)
            proc.send_signal(signo)
        rc, _ = E.reap(proc, timeout=60)
        err = stderr_of(proc)
        name = signal.Signals(signo).name
        print(f"rc {rc}; stderr:\n{err}")
        E.check(not os.path.exists(job.out), f"<out> exists after {name}")
        if twice:
            # A second signal may end the process at once (default action) or be
            # absorbed by the orderly shutdown: either way the rerun must finish.
            E.check(rc in (75, -signo), f"rc {rc} after two {name}s, expected 75 or -{signo}")
        else:
            E.check(rc == 75, f"rc {rc} after {name}, expected 75")
            last = err.splitlines()[-1] if err.strip() else ""
            E.check("resume" in last and name in last, f"last stderr line should name {name} and say how to resume: "
                                                       f"{last!r}")
            E.check(os.path.exists(E.partial_of(job.out)), f"no .partial kept after {name}")
        state = job.check_partial(f"after {name}")
        print(f"partial after {name}: {state}")
        if not twice:
            E.check(5 <= state[0] < state[1], f"progress {state} after {name}: expected at least the 5 units "
                                              f"seen before the signal and not all")
        r = job.finish()
        if state and state[0] > 0:
            E.check("resum" in r.stdout, f"the rerun did not say it resumes:\n{r.stdout}")
    return case


def resume_with_other_slabs(ctx):
    """Budgets are not part of the job's identity: a rerun with other slabs resumes."""
    job = Job(ctx)
    kill_mid_run(job)
    other = job.write_yaml("job.yaml", dict(job.memory, max_slab=3 * DATE_BYTES, pipeline_depth=4))
    E.check(E.plan_slabs(ctx, other)[0] == 14, "the other plan should have 14 slabs")
    job.finish("-q")


def resume_with_other_slabs_split(ctx):
    """Split layout: the parts keep the first plan's bounds (every 8 dates); the
    rerun's 3-date slabs cross them and are written part by part."""
    job = Job(ctx, output={"layout": "split", "parts": 5})
    kill_mid_run(job)
    other = job.write_yaml("job.yaml", dict(job.memory, max_slab=3 * DATE_BYTES, pipeline_depth=4))
    E.check(E.plan_slabs(ctx, other)[0] == 14, "the other plan should have 14 slabs")
    job.finish("-q")


def kill_mid_run(job):
    # Before: raced the run's end. Now the run is held one slab past the target.
    hold, _ = job.hold_for(job.units // 3)
    proc = job.start("-q", hold=hold)
    E.check(job.watch(proc, done_at_least=job.units // 3) is None, "the run finished before the kill")
    proc.send_signal(signal.SIGKILL)
    E.reap(proc)
    state = job.check_partial("after kill")
    E.check(state and 0 < state[0] < state[1], f"kill did not land mid-run: {state}")
    return state


def input_changed_after_kill(ctx):
    """A .partial must not be resumed against different input data."""
    job = Job(ctx)
    kill_mid_run(job)
    partial = E.partial_of(job.out)
    digest = E.file_digest(partial)
    time.sleep(0.01)
    r = E.app(ctx, "generate", "--dates", DATES, "--ids", IDS, "--nums", NUMS, "--out", job.src, "--seed", 6, "--force")
    E.expect_rc(r, 0, "regenerate the input")
    r = E.app(ctx, "run", "-q", job.yaml, cwd=job.d)
    E.expect_rc(r, 73, "resume against a changed input")
    E.check("--restart" in r.stderr, f"the error should point to --restart:\n{r}")
    E.check(not os.path.exists(job.out) and E.file_digest(partial) == digest, "the refused run touched the outputs")
    E.expect_rc(E.app(ctx, "run", "-q", "--restart", job.yaml, cwd=job.d), 0, "--restart")
    E.check_output(job.out, E.expected_cv(job.src), what="after --restart on the new input")
    E.check(not E.leftovers(job.out), f"leftovers: {E.leftovers(job.out)}")


def copied_input_resumes(ctx):
    """A job script that stages the input anew for each run (a new file, a new
    time stamp, the same bytes) resumes its .partial."""
    job = Job(ctx)
    done, _ = kill_mid_run(job)
    staged = job.src + ".staged"
    shutil.copyfile(job.src, staged)  # a byte-identical copy: new inode, new mtime
    os.replace(staged, job.src)
    r = job.finish()
    E.check(f"resuming: {done} of" in r.stdout or "resuming:" in r.stdout, f"the rerun did not resume:\n{r}")


def changed_input_names_it(ctx):
    """Other bytes in the input: the refusal names the input's content, was and now."""
    job = Job(ctx)
    kill_mid_run(job)
    r = E.app(ctx, "generate", "--dates", DATES, "--ids", IDS, "--nums", NUMS, "--out", job.src + ".new", "--seed", 9)
    E.expect_rc(r, 0, "generate other data")
    os.replace(job.src + ".new", job.src)
    r = E.expect_rc(E.app(ctx, "run", "-q", job.yaml, cwd=job.d), 73, "resume against other content")
    E.check(len(r.stderr_lines) == 1, str(r))
    E.check("belongs to a different job: input: was HDF5 file of" in r.stderr and "sampled content" in r.stderr
            and ", now HDF5 file of" in r.stderr and "--restart" in r.stderr, f"the refusal should name the input:\n{r}")


def input_touched_in_place_rechecks(ctx):
    """The same input file with a newer time stamp may have been edited where
    the sample does not look: the resume reads the input under the done
    ranges again, finds it unchanged here, and resumes every one of them
    (e2e_resume_integrity covers real edits)."""
    job = Job(ctx)
    done, _ = kill_mid_run(job)
    st = os.stat(job.src)
    os.utime(job.src, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    r = job.finish()
    E.check(f"resuming: {done} of" in r.stdout and "recomputed" not in r.stderr, str(r))


def chunk_axis_change_names_it(ctx):
    """A setting that changes the result's layout on disk: the refusal names it, was and now."""
    job = Job(ctx)
    kill_mid_run(job)
    other = job.write_yaml("job.yaml", dict(job.memory, chunk_axis="id"))
    r = E.expect_rc(E.app(ctx, "run", "-q", other, cwd=job.d), 73, "resume with another chunk axis")
    E.check("belongs to a different job: memory.chunk_axis: was date, now id" in r.stderr, str(r))


# One date of 20011 x 5 float64 is 782 KiB: with pipeline_depth 2 and the
# resident multBy a date slab needs 2.3 MiB, so under 2 MiB auto takes id slabs.
SMALL_HOST = {"host_budget": "2MiB"}


def auto_keeps_id_on_resume(ctx):
    """memory.chunk_axis: auto chose id under a small budget; killed, then
    resumed with the default budget, under which auto alone would choose
    date: the run keeps the partial's id slabs, says so, and is exact."""
    job = Job(ctx, memory=SMALL_HOST)
    E.check(job.chunk == "id", f"test setup: auto should choose id under {SMALL_HOST}, chose {job.chunk}")
    done, total = kill_mid_run(job)
    roomy = dict(job.memory)
    del roomy["host_budget"]
    fresh = E.write_job(os.path.join(ctx.dir("fresh"), "job.yaml"), job.src, "out.h5", memory=roomy)
    E.check(chunk_axis_of(E.plan_slabs(ctx, fresh)[1]) == "date", "test setup: the default budget should take date")
    job.yaml = job.write_yaml("job.yaml", roomy)
    plan = E.plan_slabs(ctx, job.yaml)[1]
    E.check("chunk axis     id, " in plan and "(auto: kept from the existing partial)" in plan, f"plan:\n{plan}")
    r = job.finish()
    E.check("[discount_app] chunk  id (auto: kept from the existing partial)" in r.stdout, f"header:\n{r.stdout}")
    E.check(f"resuming: {done} of {total} ids already done" in r.stdout, f"the rerun did not resume:\n{r.stdout}")


def auto_kept_date_that_no_longer_fits(ctx):
    """auto chose date; a resume under a budget no date slab fits keeps
    date (the partial's layout) and is refused, saying why and what to do;
    the partial is untouched and resumes once the budget is back."""
    job = Job(ctx)
    E.check(job.chunk == "date", f"test setup: auto should choose date with the default budget, chose {job.chunk}")
    kill_mid_run(job)
    partial = E.partial_of(job.out)
    digest = E.file_digest(partial)
    small = job.write_yaml("small.yaml", dict(job.memory, **SMALL_HOST))
    r = E.expect_rc(E.app(ctx, "run", "-q", small, cwd=job.d), 78, "resume under a budget no date fits")
    E.check(len(r.stderr_lines) == 1 and "memory.host_budget = 2 MiB is too small" in r.stderr
            and "auto keeps the date slabs of the existing partial; --restart starts over" in r.stderr, str(r))
    E.check(E.file_digest(partial) == digest and not os.path.exists(job.out), "the refused run touched the outputs")
    job.finish("-q")


def overwrite_kill_keeps_old_output(ctx):
    """overwrite: true replaces <out> only at the end: a kill leaves the old file whole."""
    job = Job(ctx)
    job.yaml = E.write_job(job.yaml, "in.h5", "out.h5", output={"overwrite": True, "checkpoint_seconds": 0},
                           memory=job.memory)
    E.poison(job.out)
    digest = job.old_digest = E.file_digest(job.out)
    kill_mid_run(job)
    E.check(E.file_digest(job.out) == digest, "a killed overwrite run changed the old <out>")
    job.finish("-q")
    E.check(E.file_digest(job.out) != digest, "the old <out> was not replaced")


def rerun_after_completion_is_noop(ctx):
    job = Job(ctx)
    job.finish("-q")
    digest, mtime = E.file_digest(job.out), E.mtime_ns(job.out)
    time.sleep(0.02)  # an mtime change would be visible
    r = E.app(ctx, "run", job.yaml, cwd=job.d)
    E.expect_rc(r, 0, "rerun after completion")
    E.check(E.mtime_ns(job.out) == mtime and E.file_digest(job.out) == digest, "the no-op rerun touched <out>")
    E.check(not E.leftovers(job.out), f"the no-op rerun left {E.leftovers(job.out)}")
    # other budgets: still the same job, still nothing to do
    other = job.write_yaml("other.yaml", dict(job.memory, max_slab=5 * DATE_BYTES))
    E.expect_rc(E.app(ctx, "run", "-q", other, cwd=job.d), 0, "rerun with other budgets")
    E.check(E.mtime_ns(job.out) == mtime and E.file_digest(job.out) == digest, "rerun with other budgets touched <out>")
    # a different job onto the same output: refused, output untouched
    changed = E.write_job(os.path.join(job.d, "changed.yaml"), "in.h5", "out.h5", input={"dates": [0, 39]},
                          memory=job.memory)
    r = E.app(ctx, "run", "-q", changed, cwd=job.d)
    E.expect_rc(r, 73, "a different job onto a complete output without overwrite")
    E.check(E.mtime_ns(job.out) == mtime and E.file_digest(job.out) == digest, "a refused run touched <out>")
    E.check(not E.leftovers(job.out), f"a refused run left {E.leftovers(job.out)}")


def report_covers_whole_job(ctx):
    """kill -9 twice, then a resume with a JSON report: the report lists the
    three runs, each with the units the .partial recorded for it, and totals
    the whole job's bytes; the output is exact."""
    job = Job(ctx)
    earlier = []
    for k, share in enumerate((3, 3)):
        before = set(np.flatnonzero(E.progress_of(E.partial_of(job.out))).tolist()) if k else set()
        target = len(before) + (job.units - len(before)) // share
        hold, _ = job.hold_for(target)  # the run cannot end before the kill
        proc = job.start("-q", hold=hold)
        E.check(job.watch(proc, done_at_least=target) is None, f"run {k + 1} finished before the kill")
        proc.send_signal(signal.SIGKILL)
        E.reap(proc)
        done = set(np.flatnonzero(E.progress_of(E.partial_of(job.out))).tolist())
        E.check(before < done < set(range(job.units)), f"kill {k + 1} did not land mid-run: {len(done)} done")
        job.check_partial(f"after kill {k + 1}")
        earlier.append(sorted(done - before))
    report = os.path.join(job.d, "report.json")
    job.finish("-q", "--report", report)
    doc = E.check_job_report(report, job.out, job.src, earlier_units=earlier, ranks=[1, 1, 1])
    print("runs: " + ", ".join(f"{r['run']}: {r['unit_count']} dates" for r in doc["runs"]))


CASES = [
    ("sigkill_5_times_resume", sigkill_resume),
    ("sigkill_resume_chunk_id", sigkill_resume_chunk_id),
    ("sigkill_resume_split", sigkill_resume_split),
    ("sigterm_resume", interrupt(signal.SIGTERM)),
    ("sigusr1_resume", interrupt(signal.SIGUSR1)),
    ("sigint_resume", interrupt(signal.SIGINT)),
    ("sigterm_twice_resume", interrupt(signal.SIGTERM, twice=True)),
    ("resume_with_other_slabs", resume_with_other_slabs),
    ("resume_with_other_slabs_split", resume_with_other_slabs_split),
    ("input_changed_after_kill", input_changed_after_kill),
    ("copied_input_resumes", copied_input_resumes),
    ("changed_input_names_it", changed_input_names_it),
    ("input_touched_in_place_rechecks", input_touched_in_place_rechecks),
    ("chunk_axis_change_names_it", chunk_axis_change_names_it),
    ("auto_keeps_id_on_resume", auto_keeps_id_on_resume),
    ("auto_kept_date_that_no_longer_fits", auto_kept_date_that_no_longer_fits),
    ("overwrite_kill_keeps_old_output", overwrite_kill_keeps_old_output),
    ("rerun_after_completion_is_noop", rerun_after_completion_is_noop),
    ("report_covers_whole_job", report_covers_whole_job),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
