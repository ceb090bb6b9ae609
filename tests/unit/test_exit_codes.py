"""What the exit code and the files say after the command meets a closed pipe, a user
model's own failure, a report path that names an input, a write that fails, a reused
--out directory or names that differ only in characters a file name cannot hold."""
import errno
import json
import os
import subprocess
import sys

import pytest

from kmc.cli import main

SUITE = '[[entry]]\nscenario = "diehard"\n'
MODEL = """from kmc import Model, always
class M(Model):
    def init_states(self): return [0]
    def actions(self, s): return [1]
    def next_state(self, s, a):
        return s + 1 if s < 3 else {}['boom']
    def properties(self): return [always('P', lambda s: True)]
def make(): return M()
def quits(): raise SystemExit(0)
"""


def test_a_violation_printed_into_a_closed_pipe_still_exits_1():
    p = subprocess.Popen([sys.executable, "-m", "kmc", "check", "twophase", "--variant",
                          "broken-commit", "--json", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line (`| head -0`)
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 1, err
    assert "Traceback" not in err and "BrokenPipe" not in err


@pytest.fixture
def model_file(user_model_file):
    return user_model_file(MODEL, "own_model")


def test_a_user_models_failure_is_exit_2_naming_the_line_of_its_code(model_file, capsys):
    assert main(["check", f"{model_file}.py:make", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{model_file}.py:make raised KeyError at {model_file}.py:6 in next_state" in err


def test_a_user_model_that_calls_sys_exit_is_exit_2_not_a_silent_end(model_file, capsys):
    assert main(["check", f"{model_file}.py:quits", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "called sys.exit(0)" in err


def test_with_kmc_debug_a_user_models_failure_shows_its_traceback_and_stays_exit_2(
        model_file, capsys, monkeypatch):
    monkeypatch.setenv("KMC_DEBUG", "1")
    assert main(["check", f"{model_file}.py:make", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "{}['boom']" in err
    assert err.splitlines()[-1].startswith("kmc: error: ")


def test_with_kmc_debug_an_internal_error_is_exit_3_with_its_traceback(capsys, monkeypatch):
    from kmc import api

    def broken(*_a, **_k):
        raise RuntimeError("a bug of kmc's")
    monkeypatch.setattr(api, "check", broken)
    assert main(["check", "twophase", "--quiet"]) == 3
    assert "a bug of kmc's" in capsys.readouterr().err
    monkeypatch.setenv("KMC_DEBUG", "1")
    assert main(["check", "twophase", "--quiet"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_a_report_named_as_the_suite_or_a_stored_trace_leaves_it_as_it_was(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    assert main(["regress", str(suite), "--update", "-j", "1"]) == 0
    stored = tmp_path / "regressions" / "diehard" / "NotSolved.json"
    before = suite.read_text(), stored.read_text()
    for flag in ("--junit", "--markdown"):
        for target in (suite, stored):
            assert main(["regress", str(suite), flag, str(target)]) == 2
    assert (suite.read_text(), stored.read_text()) == before


def test_a_report_that_cannot_be_written_is_exit_2_and_leaves_no_file(tmp_path, capsys,
                                                                       monkeypatch):
    from kmc.reports import inputs

    def full(_src, dst):
        raise OSError(errno.ENOSPC, "No space left on device", dst)
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    monkeypatch.setattr(inputs.os, "replace", full)
    assert main(["regress", str(suite), "--junit", str(tmp_path / "j.xml")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and "j.xml" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]


def test_update_that_cannot_write_is_exit_2_and_leaves_the_suite_whole(tmp_path, capsys,
                                                                       monkeypatch):
    from kmc.reports import inputs

    replace = os.replace

    def full_here(src, dst):  # the disk that holds the suite is full
        if not str(dst).startswith(str(tmp_path)):
            return replace(src, dst)
        raise OSError(errno.ENOSPC, "No space left on device", dst)
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE)
    monkeypatch.setattr(inputs.os, "replace", full_here)
    assert main(["regress", str(suite), "--update", "-j", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--update could not write" in err
    assert suite.read_text() == SUITE
    left = [os.path.join(r, f) for r, _d, fs in os.walk(tmp_path) for f in fs]
    assert not [f for f in left if f.endswith(".tmp")]


def test_out_replaces_an_earlier_runs_traces_and_keeps_other_files(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["check", "stale-read", "--variant", "legacy", "--out", str(out),
                 "--quiet"]) == 1
    assert (out / "trace-NoStaleRead.json").exists()
    (out / "notes.txt").write_text("mine")
    (out / "replay-notes.py").write_text("mine")
    assert main(["check", "stale-read", "--variant", "kip516", "--out", str(out),
                 "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    written = {os.path.basename(p["trace_file"]) for p in summary["properties"].values()
               if p["trace_file"]}
    traces = {p.name for p in out.iterdir() if p.name.startswith("trace-")}
    assert traces == written and "trace-NoStaleRead.json" not in traces
    assert not [p for p in out.iterdir() if p.name.startswith(("graph-", "sequence-"))]
    assert (out / "notes.txt").read_text() == (out / "replay-notes.py").read_text() == "mine"


def test_a_ctrl_c_while_out_is_written_leaves_no_half_run(tmp_path, capsys, monkeypatch):
    from kmc.reports import html

    out = tmp_path / "out"
    assert main(["check", "diehard", "--out", str(out), "--quiet"]) == 1
    (out / "notes.txt").write_text("mine")
    drawn = []

    def interrupted(result, out_dir, trace_files):  # pressed while the pictures are drawn
        drawn.extend(trace_files)
        raise KeyboardInterrupt
    monkeypatch.setattr(html, "write_report", interrupted)
    assert main(["check", "stale-read", "--variant", "legacy", "--out", str(out),
                 "--quiet"]) == 130
    assert drawn and sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_names_that_differ_never_share_a_file():
    from kmc.reports.inputs import file_slug
    from kmc.reports.regress.stored import slug as entry_slug
    from kmc.reports.summary import slug

    for make in (slug, entry_slug):
        names = ["a/b", "a_b", "a b", "a\x01b", "", ".", "x" * 300, "x" * 301]
        files = [make(n) for n in names]
        assert len(set(files)) == len(names)
        assert all(0 < len(f) <= 120 and "/" not in f and f not in (".", "..")
                   for f in files)
    assert slug("NoStaleRead") == "NoStaleRead"  # a plain name is its own file name
    assert entry_slug("recreate-race.kip516.initial_records=1") == \
        "recreate-race.kip516.initial_records=1"
    assert file_slug("a.b", "-_.") == "a.b"


def test_an_entry_its_scenario_cannot_run_is_exit_2_and_named(tmp_path, capsys):
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE + "check_symmetry = true\n\n[[entry]]\nscenario = \"twophase\"\n")
    assert main(["regress", str(suite), "-j", "1"]) == 2
    out = capsys.readouterr().out
    assert "diehard has no symmetry to check" in out and "UsageError" not in out
    assert "1 entry could not run as written" in out


@pytest.mark.parametrize("explorer", ["bfs", "dfs", "simulate"])
def test_a_state_that_is_not_a_value_is_exit_2_on_every_explorer(tmp_path, monkeypatch,
                                                                  capsys, explorer):
    name = f"list_state_{explorer}_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text(
        "from kmc import Model, always\n"
        "class M(Model):\n"
        "    def init_states(self): return [(0,)]\n"
        "    def actions(self, s): return ['inc'] if s[0] < 120 else []\n"
        "    def next_state(self, s, a):\n"
        "        return (s[0] + 1, [1]) if s[0] == 100 else (s[0] + 1,)\n"
        "    def properties(self): return [always('P', lambda s: True)]\n"
        "def make(): return M()\n")
    monkeypatch.chdir(tmp_path)
    try:
        argv = ["check", f"{name}.py:make", "--explorer", explorer, "--quiet",
                "--out", str(tmp_path / "out")]
        assert main(argv + (["--walks", "3", "--walk-length", "200"]
                            if explorer == "simulate" else [])) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "reached a state or action that is not a value" \
            in err
        assert "not lists, dicts or sets" in err and not (tmp_path / "out").exists()
    finally:
        sys.modules.pop(name, None)


def test_one_checkpoint_dir_has_one_url_and_a_damaged_one_is_named(tmp_path):
    from kmc.explorers.errors import ExplorerError
    from kmc.explorers.spark.ckptfiles import read_local, to_url

    real = tmp_path / "ck"
    (real / "levels" / "3.json").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    want = f"file://{real}"
    assert {to_url(str(real)), to_url(str(tmp_path / "link")), to_url(f"file:{real}"),
            to_url(f"file://{real}"), to_url(f"file://localhost{real}")} == {want}
    assert to_url("hdfs://nn:8020/ck/") == "hdfs://nn:8020/ck"
    with pytest.raises(ExplorerError, match="file://ck: a file URL names an absolute path"):
        to_url("file://ck")
    with pytest.raises(ExplorerError, match=r"levels/3.json cannot be read \(Is a directory\)"):
        read_local(str(real), "levels/3.json")
    with pytest.raises(ExplorerError, match="levels/3.npy cannot be read .*damaged"):
        read_local(str(real), "levels/3.npy")


def test_a_checkpoint_dir_in_use_is_refused_and_free_again_after(tmp_path):
    from kmc.explorers.errors import ExplorerError
    from kmc.explorers.spark.ckptfiles import locked

    ck = str(tmp_path / "ck")
    with locked(ck):
        with pytest.raises(ExplorerError, match="is in use by another run"):
            with locked(ck):
                pass
    with locked(ck), locked(str(tmp_path / "other")), locked(None):
        pass
    assert not (tmp_path / "other").exists()  # nothing written there: nothing left


def test_a_ctrl_c_that_a_library_turned_into_its_own_error_is_exit_130(monkeypatch, capsys):
    from types import SimpleNamespace

    from kmc import cli, interrupt

    def run(_args):  # a library caught the KeyboardInterrupt and raised its own error
        interrupt._SEEN.append(2)
        raise ValueError("Invalid bounding box")
    monkeypatch.setattr(interrupt, "_SEEN", [])
    monkeypatch.setattr(cli, "seen", interrupt.seen)
    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_known_args",
                        lambda argv: (SimpleNamespace(_run=run, command="x"), []))
    assert main(["list"]) == 130
    assert capsys.readouterr().err == "kmc: interrupted\n"
