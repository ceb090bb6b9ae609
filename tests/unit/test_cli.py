"""The `kmc` command: exit codes, the --json contract, one-line errors for bad input."""
import json
import os
import subprocess
import sys

import pytest

from kmc.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(args, capsys):
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_check_holds_exit_0_and_json_contract(capsys):
    code, out, _ = run(["check", "twophase", "-p", "rm=3", "--json", "--quiet"], capsys)
    assert code == 0
    d = json.loads(out)
    for key in ("scenario", "variant", "params", "explorer", "unique_states",
                "generated_states", "max_depth", "complete", "elapsed_s", "properties",
                "coverage", "collision_probability"):
        assert key in d
    assert (d["scenario"], d["variant"], d["params"]) == ("twophase", "standard", {"rm": 3})
    assert (d["unique_states"], d["generated_states"], d["max_depth"]) == (288, 1146, 11)
    assert d["properties"]["TCConsistent"] == {
        "kind": "always", "verdict": "holds", "trace_length": None, "trace_file": None,
        "description": "not (any(rmState[i] == 'committed' for i in RM) and "
                       "any(rmState[i] == 'aborted' for i in RM))"}
    assert d["properties"]["SomeCommit"]["verdict"] == "witness_found"
    assert d["coverage"]["TMCommit"] >= 1


def test_violation_exit_1_with_trace(capsys):
    code, out, _ = run(["check", "diehard", "--quiet"], capsys)
    assert code == 1
    assert "NotSolved" in out and "counterexample" in out and "BigToSmall" in out


def test_out_dir_writes_trace_and_summary(tmp_path, capsys):
    code, out, _ = run(["check", "diehard", "--quiet", "--json", "--out", str(tmp_path)],
                       capsys)
    d = json.loads(out)
    path = d["properties"]["NotSolved"]["trace_file"]
    assert code == 1 and os.path.exists(path)
    assert json.load(open(path))["action_indices"]
    assert json.load(open(tmp_path / "summary.json"))["unique_states"] == d["unique_states"]


@pytest.mark.parametrize("args, words", [
    (["check", "nosuch"], "unknown scenario 'nosuch'"),
    (["check", "twophase", "--variant", "x"], "no variant 'x'"),
    (["check", "twophase", "-p", "rm=0"], "out of range"),
    (["check", "twophase", "-p", "cats=2"], "no parameter 'cats'"),
    (["check", "twophase", "-p", "rm"], "KEY=VALUE"),
    (["check", "twophase", "--max-states", "0"], "--max-states"),
    (["check", "twophase", "--max-depth", "two"], "--max-depth"),
    (["check", "twophase", "--explorer", "magic"], "invalid choice"),
    (["check", "missing-file.toml"], "does not exist"),
    (["check", "twophase", "--master", "local[2]"], "--explorer spark"),
    (["frobnicate"], "invalid choice"),
    ([], "no command"),
])
def test_bad_input_is_one_line_exit_2(args, words, capsys):
    code, out, err = run(args, capsys)
    assert code == 2
    assert words in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_scenario_toml_file(tmp_path, capsys):
    f = tmp_path / "s.toml"
    f.write_text('scenario = "twophase"\nvariant = "broken-commit"\n'
                 '[params]\nrm = 2\n[bounds]\nmax_depth = 30\n')
    code, out, _ = run(["check", str(f), "--json", "--quiet"], capsys)
    d = json.loads(out)
    assert code == 1 and d["variant"] == "broken-commit" and d["params"] == {"rm": 2}


def test_a_scenario_files_time_limit_may_be_fractional(tmp_path, capsys):
    """As with --time-limit and a suite entry's bounds: seconds, not whole seconds."""
    f = tmp_path / "s.toml"
    f.write_text('scenario = "twophase"\n[bounds]\ntime_limit = 30.5\n')
    code, out, _ = run(["check", str(f), "--json", "--quiet"], capsys)
    assert code == 0 and json.loads(out)["stopped_by"] in (None, "", "all properties decided")


@pytest.mark.parametrize("text, words", [
    ("scenario = ", "not valid TOML"),
    ("variant = 'x'", "missing `scenario"),
    ('scenario = "twophase"\n[bounds]\nmax_depth = -1', "positive integer"),
    ('scenario = "twophase"\n[bounds]\nmax_depth = 2.5', "positive integer"),
    ('scenario = "twophase"\n[bounds]\ntime_limit = 0.0', "positive number"),
    ('scenario = "twophase"\n[bounds]\nspeed = 1', "unknown bound"),
    ('scenario = "twophase"\nflavour = 1', "unknown key"),
    ('scenario = "twophase"\n[params]\nrm = "many"', "whole number"),
])
def test_bad_scenario_files(tmp_path, text, words, capsys):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    code, _, err = run(["check", str(f)], capsys)
    assert code == 2 and words in err and err.count("\n") == 1


def test_list_json_names_scenarios_params_variants_properties(capsys):
    code, out, _ = run(["list", "--json"], capsys)
    table = {s["name"]: s for s in json.loads(out)["scenarios"]}
    assert code == 0
    assert table["twophase"]["params"]["rm"]["default"] == 3
    assert "broken-commit" in table["twophase"]["variants"]
    assert table["diehard"]["properties"] == {"NotSolved": "always"}


def test_list_json_gives_ranges_to_whole_numbers_and_choices_to_strings(capsys):
    _, out, _ = run(["list", "--json"], capsys)
    table = {s["name"]: s for s in json.loads(out)["scenarios"]}
    assert table["twophase"]["params"]["rm"]["min"] == 1
    flag = table["expand"]["params"]["liveness"]
    assert flag["default"] is False and flag["min"] is None and flag["max"] is None
    reset = table["kraft-stray"]["params"]["reset"]
    assert reset["choices"] == ["earliest", "latest", "none"] and reset["min"] is None


def test_bounded_run_reports_incomplete_and_unknown(capsys):
    code, out, _ = run(["check", "twophase", "-p", "rm=5", "--max-states", "100", "--json",
                        "--quiet"], capsys)
    d = json.loads(out)
    assert d["complete"] is False and d["stopped_by"] == "max_states"
    assert d["unique_states"] == 100
    assert d["properties"]["TCConsistent"]["verdict"] == "unknown"
    assert code == 4  # stopped at a bound: nothing violated, some property undecided


def test_console_script_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "kmc", "check", "tcommit", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "34 distinct states" in out.stdout


def test_max_memory_stops_a_local_run_with_exit_4_and_names_spark(capsys):
    from kmc.explorers.memory import resident_bytes
    run(["check", "stale-read", "--quiet"], capsys)  # every import done: a stable baseline
    limit = resident_bytes() + (8 << 20)  # lifecycle-large's widest levels outgrow it
    code, out, _ = run(["check", "lifecycle-large", "--max-memory", str(limit), "--quiet"],
                       capsys)
    assert code == 4 and "stopped by max_memory" in out
    assert "limit: run it on Spark" in out
    limit = resident_bytes() + (16 << 20)  # a walk's keys outgrow it
    code, out, _ = run(["check", "counter", "--explorer", "simulate", "--walks", "1",
                        "--walk-length", str(10 ** 8), "--max-memory", str(limit)], capsys)
    assert code == 4 and "stopped by max_memory" in out
    assert "limit: shorter or fewer walks or raise --max-memory" in out
    code, _, err = run(["check", "twophase", "--max-memory", "4096"], capsys)
    assert code == 2 and "is below what kmc already holds" in err
    code, _, err = run(["check", "twophase", "--explorer", "spark", "--max-memory", "1g"],
                       capsys)
    assert code == 2 and "--max-memory guards --explorer bfs, dfs or simulate" in err
    from kmc.commands.check import size
    assert (size("8g"), size("500m"), size("1048576"), size("none")) == \
        (8 << 30, 500 << 20, 1048576, None)


# A Ctrl-C that cuts short an `exec` of source text (as dataclasses do while a model's
# modules load) and leaves an object half-built whose finalizer then fails (as a z3
# context does): the run still ends with exit code 130 and the one line.
INTERRUPTED_IN_EXEC = """
import sys
import kmc.cli as cli

class HalfBuilt:
    def __init__(self):
        exec("raise KeyboardInterrupt")
        self.handle = 1
    def __del__(self):
        self.handle

def build_parser():
    HalfBuilt()
cli.build_parser = build_parser
sys.exit(cli.main(["list"]))
"""


def test_a_ctrl_c_inside_exec_still_exits_130_with_one_line(tmp_path):
    # run as `python -m`, like `python -m kmc`: only that path ends by SIGINT (status -2)
    # when CPython saw the interrupt leave an exec
    (tmp_path / "interrupted_in_exec.py").write_text(INTERRUPTED_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])}
    out = subprocess.run([sys.executable, "-m", "interrupted_in_exec"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr) == (130, "kmc: interrupted\n")


# A Ctrl-C that lands in a finalizer: Python drops the KeyboardInterrupt there (it only
# reports it as ignored) and the command runs on; it still ends as interrupted.
INTERRUPTED_IN_FINALIZER = """
import os, signal, sys
import kmc.cli as cli

class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10000):  # the handler runs here, inside the finalizer
            pass

plain = cli.build_parser
def build_parser():
    Finalized()
    return plain()
cli.build_parser = build_parser
sys.argv = ["kmc", "list"]
cli.entry()
"""


def test_a_ctrl_c_python_drops_in_a_finalizer_still_exits_130(tmp_path):
    (tmp_path / "interrupted_in_finalizer.py").write_text(INTERRUPTED_IN_FINALIZER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT])}
    out = subprocess.run([sys.executable, "-m", "interrupted_in_finalizer"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stderr) == (130, "kmc: interrupted\n")
    assert "twophase" in out.stdout  # the command ran on to its end


def test_list_quotes_the_default_run_or_says_what_the_quoted_entry_sets(tmp_path):
    from kmc import catalog
    from kmc.commands.list import expected
    from kmc.reports.regress.suite import parse_suite, recorded

    suite = parse_suite(
        '[[entry]]\nscenario = "twophase"\nvariant = "broken-commit"\nparams = { rm = 2 }\n'
        'expect = "violates TCConsistent"\nlength = 6\n\n'
        '[[entry]]\nscenario = "twophase"\nvariant = "broken-commit"\n'
        'expect = "violates TCConsistent"\nlength = 7\n\n'
        '[[entry]]\nscenario = "twophase"\nvariant = "standard"\nparams = { rm = 2 }\n'
        'stop_on_violation = true\nexpect = "holds"\n', str(tmp_path / "s.toml"))
    table = recorded(suite)
    sc = catalog.get("twophase")
    assert expected(sc, "broken-commit", table) == "violates TCConsistent (7)"
    assert expected(sc, "standard", table) == "holds with rm=2, stop_on_violation"
