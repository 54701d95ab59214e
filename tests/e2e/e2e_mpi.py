#!/usr/bin/env python3
"""MPI: `mpirun -n R discount_app job.yaml` against one rank and NumPy.

Runs only in an MPI build (DISCOUNT_ENABLE_MPI); on a 2-core machine the
ranks are oversubscribed (one OpenMP thread each). Checked:
  - R = 1, 2, 3 give output datasets bit-identical to each other and to
    NumPy, for date and id chunks, the canonical and the transposed layout;
  - the checksum sink's global and per-date bit sums do not depend on R;
  - a job stopped under 2 ranks (SIGUSR1 forwarded by mpirun: exit 75), or
    with one rank killed by SIGKILL, resumes under 3 ranks to the same bits;
  - bad data met by one rank: every rank stops, exit 65, one stderr line
    naming the rank, no output and no partial left;
  - output.compression: each rank compresses its own parts;
  - `plan` prints once; every rank measures the link limits at once;
  - ranks.timeout: a rank lagging the others by more than it, but recording
    slabs, is waited for (the job ends 0, exact);
"""

import json
import os
import shutil
import signal
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

MPIRUN = shutil.which("mpirun") or shutil.which("mpiexec")
# Root in containers and CI; ranks > cores on small machines.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMP_NUM_THREADS": "1"}
QUIET_KOKKOS = "--kokkos-disable-warnings"  # its oversubscription note on stderr


def mpi(ctx, ranks, *args, timeout=180):
    if not MPIRUN:
        raise E.Skip("no mpirun")
    argv = [MPIRUN, "-n", str(ranks), ctx.app] + [str(a) for a in args] + [QUIET_KOKKOS]
    return E.run(ctx, argv, timeout=timeout, env=MPI_ENV)


def mpi_start(ctx, ranks, yaml, tag, hold=None):
    """hold: an E.Hold whose pause points every rank takes (each counts its own slabs)."""
    argv = [MPIRUN, "-n", str(ranks), ctx.app, "run", "-q", yaml, QUIET_KOKKOS]
    env = dict(MPI_ENV, **(hold.env if hold else {}))
    proc, _, err = E.start(argv, os.path.dirname(yaml), os.path.join(ctx.work, tag), env=env)
    proc.err_path = err
    return proc


def app_errors(text):
    """stderr lines written by the app itself (not mpirun's banners)."""
    return [line for line in text.splitlines() if line.startswith("discount_app:")]


def parallel_hdf5(ctx):
    r = E.expect_rc(E.app(ctx, "--version"), 0, "--version")
    return any(line.startswith("HDF5 ") and "(parallel)" in line for line in r.stdout.splitlines())


def run_ranks(ctx, d, src, expected, memory, rank_counts=(1, 2, 3), axes=None):
    inp = {"axes": list(axes)} if axes else None
    first = None
    for ranks in rank_counts:
        out = f"out{ranks}.h5"
        yaml = E.write_job(os.path.join(d, f"job{ranks}.yaml"), src, out, input=inp, memory=memory)
        r = E.expect_rc(mpi(ctx, ranks, "run", yaml), 0, f"{ranks} rank(s)")
        E.check(app_errors(r.stderr) == [], f"{ranks} ranks: unexpected app errors\n{r}")
        if ranks > 1:
            E.check(f"{ranks} ranks" in r.stdout, f"run does not say it uses {ranks} ranks\n{r}")
            if parallel_hdf5(ctx):
                E.check("MPI-IO" in r.stdout, f"parallel HDF5 build does not write through MPI-IO\n{r}")
        path = os.path.join(d, out)
        got = E.check_output(path, expected, what=f"{ranks} rank(s)")
        E.check(not E.leftovers(path), f"{ranks} ranks left {E.leftovers(path)}")
        E.check(E.progress_of(path).all(), f"{ranks} ranks: progress record not all done")
        if first is None:
            first = got
        else:
            E.assert_bits_equal(got, first, f"{ranks} ranks against 1 rank")


def case_ranks_date_chunks(ctx):
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 23, 3001, 5, seed=11)
    # 2 dates per slab: 12 slabs, the last one partial, split 12/6+6/4+4+4.
    run_ranks(ctx, d, src, E.expected_cv(src), {"max_slab": 2 * 3001 * 5 * 8})


def case_ranks_id_chunks_transposed(ctx):
    d = ctx.dir("job")
    axes = ("id", "date", "num")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 9, 4099, 3, seed=12, axes=axes)
    run_ranks(ctx, d, src, E.expected_cv(src, axes=axes),
              {"chunk_axis": "id", "max_slab": 9 * 3 * 8 * 250}, axes=axes)


def case_more_ranks_than_slabs(ctx):
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 2, 777, 5, seed=13)
    # one slab: ranks 1 and 2 of 3 have nothing to do and still agree
    run_ranks(ctx, d, src, E.expected_cv(src), None, rank_counts=(1, 3))


def case_split_layout_ranks_write_parts(ctx):
    """output.layout: split under 2 and 3 ranks: positional writes into the parts
    (no MPI-IO, no shared file), one dataset equal to NumPy; 6 parts, so each
    rank's share of a fresh run is whole parts of its own."""
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 12, 2003, 3, seed=14)
    expected = E.expected_cv(src)
    for ranks in (2, 3):
        yaml = E.write_job(os.path.join(d, f"split{ranks}.yaml"), src, f"split{ranks}.h5",
                           output={"layout": "split", "parts": 6}, memory={"max_slab": 2003 * 3 * 8})
        r = E.expect_rc(mpi(ctx, ranks, "run", yaml), 0, f"split under {ranks} ranks")
        E.check(app_errors(r.stderr) == [], f"{ranks} ranks: unexpected app errors\n{r}")
        E.check("split over 6 part file(s)" in r.stdout and "MPI-IO" not in r.stdout,
                f"{ranks} ranks: not written as 6 parts by positional writes\n{r}")
        path = os.path.join(d, f"split{ranks}.h5")
        E.check_output(path, expected, what=f"split under {ranks} ranks")
        E.check(not E.leftovers(path), f"{ranks} ranks left {E.leftovers(path)}")


def case_split_compressed_ranks_share_parts(ctx):
    """output.compression under 2 and 3 ranks: each rank compresses its own
    parts before rank 0 publishes (the report counts the ranks that did), one
    compression line on stderr, every part stored as deflate + shuffle chunks
    and the dataset equal to NumPy through h5py's own filters."""
    import h5py
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 12, 20011, 3, seed=15)
    expected = E.expected_cv(src)
    for ranks in (2, 3):
        out = f"z{ranks}.h5"
        report = os.path.join(d, f"z{ranks}.json")
        yaml = E.write_job(os.path.join(d, f"z{ranks}.yaml"), src, out,
                           output={"layout": "split", "parts": 6,
                                   "compression": {"codec": "deflate", "level": 1, "shuffle": "byte"}},
                           memory={"max_slab": 20011 * 3 * 8})
        r = E.expect_rc(mpi(ctx, ranks, "run", "--report", report, yaml), 0, f"compressed under {ranks} ranks")
        lines = [line for line in app_errors(r.stderr) if line.startswith("discount_app: compression: ")]
        E.check(len(lines) == 1 and " 6 part(s), " in lines[0] and len(app_errors(r.stderr)) == 1,
                f"{ranks} ranks: expected one compression line for 6 parts\n{r}")
        with open(report) as f:
            z = json.load(f)["compression"]
        E.check(z["ranks"] == ranks and z["raw_bytes"] == 12 * 20011 * 3 * 8 and 0 < z["stored_bytes"] < z["raw_bytes"],
                f"{ranks} ranks: report's compression object {z}")
        path = os.path.join(d, out)
        E.check_output(path, expected, what=f"compressed under {ranks} ranks")
        E.check(not E.leftovers(path), f"{ranks} ranks left {E.leftovers(path)}")
        with h5py.File(path, "r") as f:
            sources = {v.file_name for v in f["cv"].virtual_sources()}
        E.check(len(sources) == 6, f"{ranks} ranks: {len(sources)} parts mapped")
        for name in sources:
            with h5py.File(os.path.join(d, name), "r") as p:
                ds = p["cv"]
                E.check(ds.chunks is not None and ds.compression == "gzip" and ds.shuffle,
                        f"{ranks} ranks: part {name} is not stored as deflate + shuffle chunks")


def case_mpi_hints_single_layout(ctx):
    """output.mpi_hints with the single layout under 2 ranks: the file is created and
    written through MPI-IO with them (tests/unit/io/output/mpi_hints_check.cpp reads them back)."""
    if not parallel_hdf5(ctx):
        raise E.Skip("HDF5 without MPI-IO: output.mpi_hints has no effect")
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 8, 1501, 3, seed=15)
    yaml = E.write_job(os.path.join(d, "hints.yaml"), src, "hints.h5",
                       output={"mpi_hints": {"cb_buffer_size": "1048576", "romio_cb_write": "disable"}},
                       memory={"max_slab": 1501 * 3 * 8})
    r = E.expect_rc(mpi(ctx, 2, "run", yaml), 0, "mpi_hints under 2 ranks")
    E.check("MPI-IO" in r.stdout, f"not written through MPI-IO\n{r}")
    E.check_output(os.path.join(d, "hints.h5"), E.expected_cv(src), what="mpi_hints run")


def case_checksum_independent_of_ranks(ctx):
    d = ctx.dir("job")
    got = {}
    for ranks in (1, 3):
        doc = os.path.join(d, f"job{ranks}.yaml")
        E.write_text(doc, E.to_yaml({
            "input": {"synthetic": {"dates": 17, "ids": 5003, "nums": 5, "seed": 4}},
            "output": {"mode": "checksum"},
            "memory": {"max_slab": 3 * 5003 * 5 * 8},
            "report": f"report{ranks}.json"}))
        E.expect_rc(mpi(ctx, ranks, "run", "-q", doc), 0, f"checksum, {ranks} rank(s)")
        with open(os.path.join(d, f"report{ranks}.json")) as f:
            got[ranks] = json.load(f)
    one, three = got[1]["checksum"], got[3]["checksum"]
    E.check(one["global_bits"] == three["global_bits"], f"global checksum differs: {one['global_bits_hex']} vs "
            f"{three['global_bits_hex']}")
    E.check(one["date_bits"] == three["date_bits"], "per-date bit sums differ between 1 and 3 ranks")
    E.check(got[3].get("ranks") == 3, f"report of 3 ranks says ranks={got[3].get('ranks')}")
    E.check(got[3]["slabs"]["run"] == got[1]["slabs"]["run"], "slab counts differ between 1 and 3 ranks")
    # Every rank measures its links at once and the report adds them up (a
    # collective: a rank left out would hang the job, not pass this).
    for ranks in (1, 3):
        kernel = got[ranks].get("limits", {}).get("kernel", {})
        E.check(kernel.get("source") == "measured" and kernel.get("gb_per_s", 0) > 0,
                f"{ranks} rank(s): kernel limit not measured: {got[ranks].get('limits')}")


# ---- stops and resumes across rank counts ---------------------------------

DATES, IDS, NUMS = 120, 20011, 5  # 120 one-date slabs, fdatasync after each: long enough to stop mid-run


def stoppable_job(ctx):
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), DATES, IDS, NUMS, seed=21)
    memory = {"max_slab": IDS * NUMS * 8, "pipeline_depth": 2}
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", memory=memory,
                       output={"checkpoint_seconds": 0})
    return d, src, yaml, os.path.join(d, "out.h5")


def wait_for_progress(proc, partial, units):
    """Poll the .partial's progress bytes until `units` dates are recorded.
    Before: gave up after 60 s or when the run had ended, and the callers
    skipped ("disk too fast"). Now the callers hold every rank after its 3rd
    slab (6 dates for 2 ranks), so the run cannot end first: its end is a
    failure, and the time limit a hang guard."""
    def recorded():
        E.check(proc.poll() is None, f"the run ended (rc {proc.returncode}) before {units} dates were recorded")
        try:
            return os.path.exists(partial) and int(E.progress_of(partial).sum()) >= units
        except (OSError, KeyError):
            return False  # being created
    E.wait_for(f"{units} dates recorded", recorded)
    return True


HOLD_AT = 3  # each of 2 ranks holds after its 3rd slab: 6 dates recorded


def check_recorded_dates(partial, expected):
    """Every date the progress record vouches for holds the right values."""
    done = E.progress_of(partial)
    data = E.read_output(partial)
    for date in np.flatnonzero(done):
        E.assert_bits_equal(data[date], expected[date], f"recorded date {date} of the partial")
    return int(done.sum())


def resume_under_three(ctx, d, src, yaml, out, expected):
    E.check(not os.path.exists(out), "<out> exists after a stopped run")
    recorded = check_recorded_dates(E.partial_of(out), expected)
    earlier = np.flatnonzero(E.progress_of(E.partial_of(out)))
    report = os.path.join(d, "report.json")
    r = E.expect_rc(mpi(ctx, 3, "run", "--report", report, yaml), 0, "resume under 3 ranks")
    E.check("resuming" in r.stdout, f"the rerun did not resume\n{r}")
    E.check_output(out, expected, what="resumed under 3 ranks")
    E.check(not E.leftovers(out), f"leftovers {E.leftovers(out)}")
    # The report covers both runs: the stopped one's 2 ranks and this one's 3.
    E.check_job_report(report, out, src, earlier_units=[earlier], ranks=[2, 3])
    return recorded


def case_stop_under_2_resume_under_3(ctx):
    d, src, yaml, out = stoppable_job(ctx)
    expected = E.expected_cv(src)
    hold = E.Hold(ctx, HOLD_AT)  # the stop ends each rank's hold
    proc = mpi_start(ctx, 2, yaml, "stopped", hold=hold)
    wait_for_progress(proc, E.partial_of(out), 2 * HOLD_AT)
    proc.send_signal(signal.SIGUSR1)  # mpirun forwards it to every rank
    rc, _ = E.reap(proc, E.HANG_GUARD) or (None, None)
    E.check(rc != 0, "the run finished although it was held and stopped")
    with open(proc.err_path) as f:
        err = f.read()
    E.check(rc == 75, f"stopped run: exit {rc}, expected 75\n{err}")
    lines = app_errors(err)
    E.check(len(lines) >= 1 and all("interrupted by SIGUSR1" in line for line in lines),
            f"expected 'interrupted' lines only, got:\n{err}")
    recorded = resume_under_three(ctx, d, src, yaml, out, expected)
    print(f"stopped with {recorded} of {DATES} dates recorded; resumed under 3 ranks")


def rank_pids(mpirun_pid):
    """discount_app processes started by this mpirun (its children here)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/comm") as f:
                comm = f.read().strip()
        except OSError:
            continue
        if int(fields[1]) == mpirun_pid and comm.startswith("discount_app"):
            pids.append(int(entry))
    return sorted(pids)


def case_kill9_one_rank_resume_under_3(ctx):
    d, src, yaml, out = stoppable_job(ctx)
    expected = E.expected_cv(src)
    hold = E.Hold(ctx, HOLD_AT)
    proc = mpi_start(ctx, 2, yaml, "killed", hold=hold)
    wait_for_progress(proc, E.partial_of(out), 2 * HOLD_AT)
    victims = rank_pids(proc.pid)
    E.check(len(victims) == 2, f"mpirun's ranks: {victims}")
    os.kill(victims[-1], signal.SIGKILL)
    hold.release(HOLD_AT)  # the surviving rank goes on as an unheld run would
    rc, _ = E.reap(proc, E.HANG_GUARD) or (None, None)
    E.check(rc != 0, "mpirun exited 0 after a rank was killed")
    recorded = resume_under_three(ctx, d, src, yaml, out, expected)
    print(f"killed one of 2 ranks with {recorded} of {DATES} dates recorded; resumed under 3 ranks")


def case_bad_data_on_one_rank(ctx):
    d = ctx.dir("job")
    rng = np.random.default_rng(5)
    mult = E.random_nonzero(rng, (301, 5))
    disc = E.random_nonzero(rng, (12, 301, 5))
    disc[11, 17, 3] = np.nan  # last slab: the last rank meets it
    src = E.write_input(os.path.join(d, "in.h5"), mult, disc)
    yaml = E.write_job(os.path.join(d, "job.yaml"), src, "out.h5", memory={"max_slab": 301 * 5 * 8})
    r = mpi(ctx, 3, "run", "-q", yaml)
    E.expect_rc(r, 65, "NaN met by rank 2")
    lines = app_errors(r.stderr)
    E.check(len(lines) == 1, f"expected one app error line, got {len(lines)}:\n{r}")
    E.check("rank 2" in lines[0] and "date 11" in lines[0], f"the line should name rank 2 and date 11:\n{r}")
    out = os.path.join(d, "out.h5")
    E.check(not os.path.exists(out) and not E.leftovers(out), f"output or partial left: {E.leftovers(out)}")


def case_plan_prints_once(ctx):
    d = ctx.dir("job")
    src = E.generate(ctx, os.path.join(d, "in.h5"), 5, 101, 5)
    yaml = E.write_job(os.path.join(d, "job.yaml"), src, "out.h5", memory={"max_slab": 101 * 5 * 8})
    r = E.expect_rc(mpi(ctx, 2, "plan", yaml), 0, "plan under 2 ranks")
    heads = [line for line in r.stdout.splitlines() if line.startswith("chunk axis ")]
    E.check(len(heads) == 1, f"plan printed more than once:\n{r}")
    E.check("ranks          2" in r.stdout, f"plan does not show the rank split:\n{r}")


LAG_TIMEOUT = 8.0  # ranks.timeout of the lagging-rank case, s
LAG_HOLDS = 4      # rank 1 holds after each of its first slabs ...
LAG_PAUSE = 2.5    # ... this long: it lags rank 0 by LAG_HOLDS x LAG_PAUSE > LAG_TIMEOUT


def case_lagging_rank_recording_work_outlives_the_timeout(ctx):
    """ranks.timeout ends a wait only while no rank records work: rank 1 lags
    rank 0, which waits in a collective, by more than the timeout, one
    recorded slab at a time (each hold comes after a recorded slab); the job
    ends with 0, exact, and its report says a rank waited that long."""
    if not MPIRUN:
        raise E.Skip("no mpirun")
    d = ctx.dir("lag")
    src = E.generate(ctx, os.path.join(d, "in.h5"), DATES, IDS, NUMS, seed=23)
    memory = {"max_slab": IDS * NUMS * 8, "pipeline_depth": 2}
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5", memory=memory,
                       output={"checkpoint_seconds": 0}, ranks={"timeout": LAG_TIMEOUT})
    out, report = os.path.join(d, "out.h5"), os.path.join(d, "report.json")
    lag = E.Hold(ctx, *range(1, LAG_HOLDS + 1))  # rank 1's pause points
    none = E.Hold(ctx)  # rank 0's: none
    rank = [ctx.app, "run", "-q", yaml, "--report", report, QUIET_KOKKOS]
    argv = ([MPIRUN, "-n", "1", "env", f"DISCOUNT_TEST_HOLD={none.dir}"] + rank +
            [":", "-n", "1", "env", f"DISCOUNT_TEST_HOLD={lag.dir}"] + rank)
    proc, _, err_path = E.start(argv, d, os.path.join(ctx.work, "lag"), env=MPI_ENV)
    lag.wait(1, proc)
    # Rank 0 has recorded its share (dates [0, DATES / 2)) and waits for rank 1.
    partial = E.partial_of(out)
    def rank0_done():
        try:
            return bool(E.progress_of(partial)[:DATES // 2].all())
        except (OSError, KeyError):
            return False  # being written
    E.wait_for("rank 0's share recorded", rank0_done)
    for w in range(1, LAG_HOLDS + 1):
        lag.wait(w, proc)
        time.sleep(LAG_PAUSE)  # the lag grows; rank 1's next slab is recorded before its next hold
        lag.release(w)
    rc, _ = E.reap(proc, E.HANG_GUARD) or (None, None)
    with open(err_path) as f:
        err = f.read()
    E.check(rc == 0, f"a lagging rank that records work: exit {rc}, expected 0\n{err}")
    E.check_output(out, E.expected_cv(src), what="after the lagging rank")
    with open(report) as f:
        waited = json.load(f)["collective_seconds"]
    E.check(waited > LAG_TIMEOUT, f"the ranks waited {waited:.1f} s in collectives, not over the timeout "
                                  f"{LAG_TIMEOUT} s: the case did not test the bound")
    print(f"rank 0 waited {waited:.1f} s in collectives against ranks.timeout {LAG_TIMEOUT:.0f} s; exit 0, exact")


CASES = [
    ("ranks_date_chunks", case_ranks_date_chunks),
    ("ranks_id_chunks_transposed", case_ranks_id_chunks_transposed),
    ("more_ranks_than_slabs", case_more_ranks_than_slabs),
    ("checksum_independent_of_ranks", case_checksum_independent_of_ranks),
    ("split_layout_ranks_write_parts", case_split_layout_ranks_write_parts),
    ("split_compressed_ranks_share_parts", case_split_compressed_ranks_share_parts),
    ("mpi_hints_single_layout", case_mpi_hints_single_layout),
    ("stop_under_2_resume_under_3", case_stop_under_2_resume_under_3),
    ("kill9_one_rank_resume_under_3", case_kill9_one_rank_resume_under_3),
    ("bad_data_on_one_rank", case_bad_data_on_one_rank),
    ("plan_prints_once", case_plan_prints_once),
    ("lagging_rank_recording_work_outlives_the_timeout", case_lagging_rank_recording_work_outlives_the_timeout),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
