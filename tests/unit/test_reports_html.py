"""`kmc check --out DIR`: index.html (self-contained), summary.json, trace files,
pictures and the runnable replay snippet."""
import base64
import json
import os
import re
import subprocess
import sys

import pytest

from kmc import api
from kmc.cli import main
from kmc.reports.summary import summary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def broken_out(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("out"))
    code = main(["check", "twophase", "--variant", "broken-commit", "--quiet", "--out", out])
    with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
        return code, out, f.read()


def test_report_has_the_verdict_table(broken_out):
    code, out, page = broken_out
    assert code == 1
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    table = re.search(r"<table id=verdicts>(.*?)</table>", page, re.S).group(1)
    for name, p in s["properties"].items():
        row = re.search(rf"<tr><td>(?:<a href='#cx-{name}'>)?{name}(?:</a>)?</td>(.*?)</tr>",
                        table, re.S)
        assert row and p["verdict"].replace("_", " ") in row.group(1)
    assert f"{s['unique_states']:,}" in page
    for action in s["coverage"]:
        assert f"<td>{action}</td>" in page


def test_report_embeds_valid_pictures(broken_out):
    _code, _out, page = broken_out
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(images) == 3  # sequence, state graph, counterexample graph
    for data in images:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<link" not in page and "<script src" not in page  # nothing to fetch


def test_report_has_steps_replay_command_and_snippet(broken_out):
    _code, out, page = broken_out
    trace = os.path.join(out, "trace-TCConsistent.json")
    assert f"kmc replay {trace}" in page
    with open(trace) as f:
        doc = json.load(f)
    steps = re.search(r"<table class=steps>(.*?)</table>", page, re.S).group(1)
    assert steps.count("<tr") == len(doc["steps"]) + 1  # header row + one per state
    for st in doc["steps"][1:]:
        assert f"<td>{st['action']}</td>" in steps
    assert "from kmc.api import build" in page


def test_summary_json_is_the_check_json(broken_out):
    _code, out, _page = broken_out
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    fresh = summary(api.check("twophase", "broken-commit"),
                    {n: p["trace_file"] for n, p in s["properties"].items()})
    drop = ("elapsed_s",)
    assert {k: v for k, v in s.items() if k not in drop} == \
        {k: v for k, v in fresh.items() if k not in drop}


def test_snippet_runs_and_rebuilds_the_violating_state(broken_out):
    _code, out, _page = broken_out
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, os.path.join(out, "replay-TCConsistent.py")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    model = api.build("twophase", "broken-commit", {"rm": 3})
    r = api.check("twophase", "broken-commit", {"rm": 3})
    assert p.stdout.strip() == model.format_state(r.discoveries["TCConsistent"].trace.last)


def test_snippet_fails_when_the_model_changed(broken_out, tmp_path):
    _code, out, _page = broken_out
    with open(os.path.join(out, "replay-TCConsistent.py")) as f:
        code = f.read().replace("'broken-commit'", "'standard'")
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode != 0 and "AssertionError" in p.stderr


def test_report_on_a_run_that_holds(tmp_path):
    out = str(tmp_path)
    assert main(["check", "tcommit", "--quiet", "--out", out]) == 0
    with open(os.path.join(out, "index.html"), encoding="utf-8") as f:
        page = f.read()
    assert "<table id=verdicts>" in page and "class=holds" in page
    assert "Counterexample" not in page
    assert sorted(os.listdir(out)) == ["index.html", "summary.json"]
