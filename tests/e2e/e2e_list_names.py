#!/usr/bin/env python3
"""input.file lists whose file, folder and dataset names hold any character.

An input.file list is read through an HDF5 virtual dataset, whose mapping
reads `%b` in a source file or dataset name as a block number and `%%` as one
`%`; the app escapes every name it writes there. Here the listed files sit in
a folder, and are named, with every printable ASCII character a file name
can hold (all but '/': %, %b, %%, spaces, quotes, backslash, *?[], $, #, :,
...) and UTF-8 (é, 日本); input.discount and input.multiplier name datasets
with % and %b in them (and, in one case, names with % but no %b, which HDF5
would silently take for others); $TMPDIR, where the virtual file is made, is such a
folder too. Split along date and along id, random non-zero data: cv equals
NumPy's product over the files (read with h5py) bit for bit, `verify --full`
agrees, and nothing is left in $TMPDIR.
"""

import os
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common as E  # noqa: E402

ASCII = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "/")
FOLDER = "in %b %% é 日本 " + ASCII
FILES = [ASCII + " %b0.h5", "%b%%.h5", "日本 é '\"\\ *?[ab] $HOME #x :y 100% %%b 2.h5"]
DISCOUNT = "grp %b %%/disc %b 100% é *?[] \\ \"' $x #y :z"
MULTIPLIER = "%b m %% 日本"
# No %b: HDF5 would take these names, reading `%%` as `%`, and look for other files and datasets.
PERCENT = {"folder": "p %% 100%", "files": ["a %% 1.h5", "100% b.h5", "%%.h5"], "discount": "d %% 5%",
           "multiplier": "m%%"}
EVERY = {"folder": FOLDER, "files": FILES, "discount": DISCOUNT, "multiplier": MULTIPLIER}
DATES, IDS, NUMS = 11, 13, 3
CUTS = {"date": [0, 4, 5, DATES], "id": [0, 6, 7, IDS]}


def write_files(folder, along, seed, names):
    """The three files along `along`, written with h5py; returns the expected cv."""
    rng = np.random.default_rng(seed)
    mult = E.random_nonzero(rng, (IDS, NUMS))
    disc = E.random_nonzero(rng, (DATES, IDS, NUMS))
    cuts = CUTS[along]
    for n, (a, b) in enumerate(zip(cuts, cuts[1:])):
        with h5py.File(os.path.join(folder, names["files"][n]), "w") as f:
            f.create_dataset(names["discount"], data=disc[a:b] if along == "date" else disc[:, a:b])
            if along == "id":
                f.create_dataset(names["multiplier"], data=mult[a:b])
            elif n == 0:
                f.create_dataset(names["multiplier"], data=mult)
    return mult[None, :, :] * disc


def expected_from_files(folder, along, names):
    """cv computed by NumPy from what h5py reads back from the files (independent of the app)."""
    discs, mults = [], []
    for name in names["files"]:
        with h5py.File(os.path.join(folder, name), "r") as f:
            discs.append(f[names["discount"]][...])
            if names["multiplier"] in f:
                mults.append(f[names["multiplier"]][...])
    disc = np.concatenate(discs, axis=0 if along == "date" else 1)
    mult = mults[0] if along == "date" else np.concatenate(mults, axis=0)
    return mult[None, :, :] * disc


def names_case(along, yaml_in_folder, names=EVERY):
    """yaml_in_folder: the job file sits in the folder and lists bare names (one starts with '%');
    otherwise it sits beside the folder and lists '<folder>/<name>'."""
    def case(ctx):
        base = ctx.dir("job")
        folder = os.path.join(base, names["folder"])
        tmp = os.path.join(base, "tmp %b %% é")
        os.makedirs(folder)
        os.makedirs(tmp)
        made = write_files(folder, along, 71 if along == "date" else 72, names)
        expected = expected_from_files(folder, along, names)
        E.assert_bits_equal(made, expected, "h5py round trip")
        where = folder if yaml_in_folder else base
        listed = names["files"] if yaml_in_folder else [os.path.join(names["folder"], n) for n in names["files"]]
        job = E.write_job(os.path.join(where, "job.yaml"), listed, "out %b %%.h5",
                          input={"discount": names["discount"], "multiplier": names["multiplier"]})
        env = {"TMPDIR": tmp}
        E.expect_rc(E.run(ctx, [ctx.app, "run", "-q", job], cwd=base, env=env), 0, "run")
        E.check_output(os.path.join(where, "out %b %%.h5"), expected)
        E.expect_rc(E.run(ctx, [ctx.app, "verify", "--full", job], cwd=base, env=env), 0, "verify --full")
        p = E.expect_rc(E.run(ctx, [ctx.app, "plan", "--no-measure", job], cwd=base, env=env), 0, "plan")
        E.check(f"3 files along {along}" in p.stdout, f"plan does not describe the list:\n{p}")
        left = [e for e in os.listdir(tmp) if not e.startswith("ompi.")]
        E.check(left == [], f"temporary files left behind: {left}")
    return case


CASES = [
    ("date_split_folder_names", names_case("date", yaml_in_folder=False)),
    ("date_split_bare_names", names_case("date", yaml_in_folder=True)),
    ("id_split_folder_names", names_case("id", yaml_in_folder=False)),
    ("id_split_bare_names", names_case("id", yaml_in_folder=True)),
    ("percent_without_b", names_case("date", yaml_in_folder=False, names=PERCENT)),
]

if __name__ == "__main__":
    sys.exit(E.main(CASES, __doc__))
