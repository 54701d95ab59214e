"""discount_app.run: a file job in-process, as `discount_app run` runs it."""
import json
import os
import subprocess

import h5py
import numpy as np
import pytest

import discount_app
from conftest import assert_bit_exact, expected_cv, random_nonzero, sigint_when


def make_input(path, rng, dates=19, ids=301, nums=5):
    mult = random_nonzero(rng, (ids, nums))
    disc = random_nonzero(rng, (dates, ids, nums))
    with h5py.File(path, "w") as f:
        f["multBy"] = mult
        f["discount"] = disc
    return mult, disc


def write_job(folder, text):
    path = os.path.join(folder, "job.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


JOB = """input:  {file: in.h5}
output: {file: cv.h5, checkpoint_seconds: 0}
memory: {host_budget: 96KiB, device_budget: 96KiB, chunk_axis: date}
"""


def read_cv(path):
    with h5py.File(path, "r") as f:
        return f["cv"][...]


def test_run_from_a_yaml_file_returns_the_report(tmp_path, rng):
    mult, disc = make_input(tmp_path / "in.h5", rng)
    seen = []
    report = discount_app.run(write_job(tmp_path, JOB), progress=seen.append)
    assert report["outcome"] == "complete"
    assert report["slabs"]["total"] > 4 and report["slabs"]["run"] == report["slabs"]["total"]
    assert_bit_exact(read_cv(tmp_path / "cv.h5"), expected_cv(mult, disc))
    assert [p["written"] for p in seen] == list(range(1, report["slabs"]["total"] + 1))
    assert all(p["total"] == report["slabs"]["total"] for p in seen)
    assert seen[-1]["gb_out"] * 1e9 == pytest.approx(disc.nbytes, rel=1e-9)
    assert seen[-1]["eta_seconds"] == 0


def test_run_writes_compressed_output(tmp_path, rng):
    """output.compression through run(dict): deflate parts (which every HDF5 reads), exact, and the report's
    compression object says what was stored."""
    mult, disc = make_input(tmp_path / "in.h5", rng, dates=7, ids=40001)
    report = discount_app.run({"input": {"file": str(tmp_path / "in.h5")},
                               "output": {"file": str(tmp_path / "cv.h5"), "compression": {"codec": "deflate"}}})
    assert_bit_exact(read_cv(tmp_path / "cv.h5"), expected_cv(mult, disc))
    z = report["compression"]
    assert z["codec"] == "deflate 4 + shuffle" and z["raw_bytes"] == mult.size * 7 * 8
    parts = [p for p in os.listdir(tmp_path) if p.startswith("cv.h5.parts-")]
    with h5py.File(tmp_path / parts[0] / "part-00000.h5", "r") as f:
        assert f["cv"].compression == "gzip" and f["cv"].shuffle


def test_report_has_the_cli_reports_content(tmp_path, rng, app_binary):
    make_input(tmp_path / "in.h5", rng)
    report = discount_app.run(write_job(tmp_path, JOB))
    os.unlink(tmp_path / "cv.h5")
    subprocess.run([app_binary, "run", "-q", str(tmp_path / "job.yaml"), "--report", str(tmp_path / "cli.json")],
                   check=True)
    with open(tmp_path / "cli.json") as f:
        cli = json.load(f)
    assert set(report) == set(cli)
    for key in ("outcome", "slabs", "input_bytes", "output_bytes", "space", "slicing", "plan"):
        assert report[key] == cli[key], key


def test_run_from_a_dict_resolves_paths_against_the_current_directory(tmp_path, rng, monkeypatch):
    os.makedirs(tmp_path / "data")
    mult, disc = make_input(tmp_path / "data" / "in.h5", rng, 7, 55, 3)
    monkeypatch.chdir(tmp_path)
    report = discount_app.run({"input": {"file": "data/in.h5", "axes": ["date", "id", "num"]},
                               "output": {"file": "data/cv.h5"},
                               "compute": {"space": "host", "parallel_dims": ["id"]},
                               "memory": {"host_budget": "256KiB"}})
    assert report["outcome"] == "complete"
    assert_bit_exact(read_cv(tmp_path / "data" / "cv.h5"), expected_cv(mult, disc))
    again = discount_app.run({"input": {"file": "data/in.h5"}, "output": {"file": "data/cv.h5"}})
    assert again["outcome"] == "already complete"


def test_ctrl_c_keeps_the_partial_and_the_next_call_resumes(tmp_path, rng, hold):
    mult, disc = make_input(tmp_path / "in.h5", rng)
    job = write_job(tmp_path, JOB)
    h = hold(3)
    with sigint_when("slab 3 held", lambda: h.reached(3), lambda: h.release(3)):
        with pytest.raises(discount_app.Interrupted) as info:
            discount_app.run(job)
    assert isinstance(info.value, KeyboardInterrupt) and info.value.exit_code == 75
    assert "cv.h5.partial" in info.value.message and "resume" in info.value.message
    assert os.path.exists(tmp_path / "cv.h5.partial") and not os.path.exists(tmp_path / "cv.h5")
    h.release(3)
    report = discount_app.run(job)
    assert report["outcome"] == "complete"
    assert 0 < report["slabs"]["skipped_resumed"] < report["slabs"]["total"]
    assert_bit_exact(read_cv(tmp_path / "cv.h5"), expected_cv(mult, disc))


def test_progress_callable_errors_stop_the_job_and_propagate(tmp_path, rng):
    make_input(tmp_path / "in.h5", rng)

    def progress(p):
        if p["written"] == 2:
            raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        discount_app.run(write_job(tmp_path, JOB), progress=progress)
    assert os.path.exists(tmp_path / "cv.h5.partial")


def cli_error(app, job):
    done = subprocess.run([app, "run", "-q", job], capture_output=True, text=True)
    return done.returncode, done.stderr.strip()


@pytest.mark.parametrize("name,text,cls", [
    ("missing input", "input: {file: nowhere.h5}\noutput: {file: cv.h5}\n", discount_app.InputMissingError),
    ("unknown key", "input: {file: in.h5, fiel: x}\noutput: {file: cv.h5}\n", discount_app.ConfigError),
    ("output exists", "input: {file: in.h5}\noutput: {file: exists.h5}\n", discount_app.CannotCreateError),
    ("budget too small", "input: {file: in.h5}\noutput: {file: cv.h5}\nmemory: {host_budget: 1KiB}\n",
     discount_app.ConfigError),
])
def test_errors_carry_the_cli_message_and_exit_code(tmp_path, rng, app_binary, name, text, cls):
    make_input(tmp_path / "in.h5", rng, 3, 11, 2)
    open(tmp_path / "exists.h5", "w").close()
    job = write_job(tmp_path, text)
    with pytest.raises(cls) as info:
        discount_app.run(job)
    code, stderr = cli_error(app_binary, job)
    assert info.value.exit_code == code == cls.exit_code
    assert stderr == "discount_app: error: " + info.value.message
    assert isinstance(info.value, discount_app.Error)


def test_config_of_another_type_is_refused():
    with pytest.raises(TypeError):
        discount_app.run(42)


def test_help_shows_signatures_and_docstrings():
    import pydoc
    text = pydoc.render_doc(discount_app, renderer=pydoc.plaintext)
    for words in ("run(config", "progress", "multiply(mult", "device_budget", "Interrupted", "exit_code"):
        assert words in text, words


# Keys holding YAML that a dict written out as YAML text would have turned into configuration
# (an output elsewhere, another dataset): refused as unknown keys, naming them.
INJECTED_KEYS = [
    {"input": {"file": "in.h5", "nonfinite: error\noutput:\n  file: evil.h5\n#": "x"}},
    {"input": {"file": "in.h5"}, "output:\n  file: evil.h5\nx": 1},
    {"input": {"file": "in.h5"}, "output": {"file": "cv.h5", "overwrite: true\n  dataset": "evil"}},
]


@pytest.mark.parametrize("config", INJECTED_KEYS, ids=["nested", "top level", "in output"])
def test_dict_keys_cannot_inject_configuration(tmp_path, rng, monkeypatch, config):
    make_input(tmp_path / "in.h5", rng, 5, 33, 3)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(discount_app.ConfigError) as info:
        discount_app.run(config)
    bad = next(k for section in (config, *[v for v in config.values() if isinstance(v, dict)])
               for k in section if "\n" in k)
    assert info.value.exit_code == 78
    assert "unknown key '" + bad.split("\n")[0] in info.value.message, info.value.message
    assert sorted(os.listdir(tmp_path)) == ["in.h5"]  # no output of any name


def test_dict_values_are_single_values(tmp_path, rng, monkeypatch):
    mult, disc = make_input(tmp_path / "in.h5", rng, 5, 33, 3)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(discount_app.ConfigError) as info:
        discount_app.run({"input": {"file": "in.h5"}, "output": {"file": "cv.h5"},
                          "memory": {"chunk_axis": "id\nhost_budget: 1KiB"}})
    assert "'memory.chunk_axis' must be one of" in info.value.message
    odd = "cv.h5\noverwrite: true\ndataset: evil"  # a file name, however it reads
    report = discount_app.run({"input": {"file": "in.h5"}, "output": {"file": odd}})
    assert report["outcome"] == "complete"
    assert sorted(os.listdir(tmp_path)) == sorted(["in.h5", odd])
    assert_bit_exact(read_cv(tmp_path / odd), expected_cv(mult, disc))


def self_holding():
    config = {"input": {"file": "in.h5"}, "output": {"file": "cv.h5"}}
    config["input"]["synthetic"] = config
    return config


@pytest.mark.parametrize("config,words", [
    (lambda: {"input": {"file": "in.h5"}, "output": {"file": "cv.h5"}, 42: "x"}, ["key 42", "top level"]),
    (lambda: {"input": {b"file": "in.h5"}, "output": {"file": "cv.h5"}}, ["key b'file'", "'input'"]),
    (lambda: {"input": {"file": "in.h5"}, "output": {"file": "cv.h5"}, "memory": {("host_budget",): 1}},
     ["key ('host_budget',)", "'memory'"]),
    (lambda: {"input": {"file": object()}, "output": {"file": "cv.h5"}}, ["input.file", "'object'"]),
    (self_holding, ["input.synthetic", "deeper"]),
], ids=["int key", "bytes key", "tuple key", "object value", "dict holding itself"])
def test_dict_keys_are_the_yaml_names_as_strings(tmp_path, monkeypatch, config, words):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(discount_app.ConfigError) as info:
        discount_app.run(config())
    assert info.value.message.startswith("run(config=dict): ")
    for w in words:
        assert w in info.value.message, info.value.message
    assert os.listdir(tmp_path) == []
