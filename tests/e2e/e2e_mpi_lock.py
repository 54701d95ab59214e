#!/usr/bin/env python3
"""One job per output under MPI: the ranks of one job share the output's lock
(rank 0 holds it for them all), and a job whose output is locked by another
process is refused on every rank, exit 73, before any output file exists.

The other holder is this test itself (fcntl.flock on `<out>.partial.lock`),
so the refusal cannot depend on timing. MPI builds only (label mpi).
"""

import fcntl
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402
import e2e_mpi as M  # noqa: E402

NUMS = 5


def output_files(directory):
    return sorted(n for n in os.listdir(directory) if n.startswith("out.h5"))


def case_ranks_share_the_lock_and_respect_another(ctx):
    d = ctx.dir("job")
    dates, ids = 9, 4099
    src = E.generate(ctx, os.path.join(d, "in.h5"), dates, ids, NUMS, seed=41)
    expected = E.expected_cv(src)
    yaml = E.write_job(os.path.join(d, "job.yaml"), "in.h5", "out.h5",
                       memory={"max_slab": ids * NUMS * 8, "pipeline_depth": 2})
    lock_path = os.path.join(d, "out.h5.partial.lock")
    holder = f"pid {os.getpid()} on host {os.uname().nodename}"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, (holder + "\n").encode())
        r = M.mpi(ctx, 2, "run", yaml)
        E.expect_rc(r, E.EX_CANTCREAT, "2 ranks on a locked output")
        errors = M.app_errors(r.stderr)
        E.check(len(errors) == 1 and holder in errors[0] and "another job" in errors[0], f"refusal:\n{r}")
        E.check(output_files(d) == ["out.h5.partial.lock"], f"files after the refusal: {output_files(d)}")
    finally:
        os.close(fd)  # releases the flock; the file stays, as after a kill -9
    r = E.expect_rc(M.mpi(ctx, 2, "run", yaml), 0, "2 ranks once the lock is free")
    E.check(M.app_errors(r.stderr) == [], f"the job's own ranks refused each other:\n{r}")
    E.check_output(os.path.join(d, "out.h5"), expected, what="2 ranks")
    E.check(output_files(d) == ["out.h5"], f"leftovers: {output_files(d)}")


CASES = [
    ("ranks_share_the_lock_and_respect_another", case_ranks_share_the_lock_and_respect_another),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
