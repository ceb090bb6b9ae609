"""What a trace says is shown as written: `kmc show` and `kmc replay` print a model's
non-ASCII words as themselves and a file's control characters as escapes (a trace file
may come from anyone), and the pictures draw every label literally and whole."""
import copy
import xml.etree.ElementTree as ET

import pytest

from kmc import api
from kmc.cli import main
from kmc.reports import draw
from kmc.reports.artifacts import write_artifacts
from kmc.reports.sequence import draw_sequence
from kmc.reports.show import render
from kmc.reports.summary import write_traces
from kmc.reports.tracefile import load_trace, write_trace

EVIL = "\x1b]0;owned\x07\x1b[2J\nreproduced: forged"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("safety"))
    files = write_traces(api.check("twophase", "broken-commit", {"rm": 3}), out)
    files.update(write_traces(api.check("counter", "unfair", {"n": 3}), out))
    files.update(write_traces(api.check("diehard", "standard", {}), out))
    return {name: load_trace(path) for name, path in files.items()}


def test_show_prints_non_ascii_values_as_themselves(traces):
    doc = copy.deepcopy(traces["TCConsistent"])
    doc["steps"][1]["changed"][0]["new"] = "abgebrochen – é"
    text = render(doc)
    assert '-> "abgebrochen – é"' in text and "\\u00e9" not in text


def test_show_escapes_control_characters_of_the_file(traces):
    doc = copy.deepcopy(traces["TCConsistent"])
    doc["property"] = "TC" + EVIL
    doc["steps"][1]["action"] += EVIL
    doc["steps"][1]["actor"] = "rm0\r"
    text = render(doc, full=True)
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert not any(line.startswith("reproduced") for line in text.splitlines())
    assert "\\x1b[2J\\nreproduced: forged" in text


def test_replay_message_escapes_the_recorded_action(traces, tmp_path, capsys):
    doc = copy.deepcopy(traces["TCConsistent"])
    doc["steps"][2]["action"] += EVIL
    path = write_trace(str(tmp_path / "edited.json"), doc)
    assert main(["replay", path]) == 1
    out = capsys.readouterr().out
    assert out.startswith("diverged at step 2") and "\x1b" not in out
    assert len(out.strip().splitlines()) == 1 and "\\nreproduced: forged" in out


def _texts(svg_path):
    root = ET.parse(svg_path).getroot()
    return {"".join(el.itertext()).strip() for el in root.iter() if el.tag.endswith("text")}


def test_dollar_signs_are_drawn_literally_not_as_tex(traces, tmp_path):
    doc = copy.deepcopy(traces["TCConsistent"])
    for st in doc["steps"][1:]:
        st["action"] = "Pay $a_b$ then $\\foo$"  # TeX math to matplotlib, and invalid
        st["actor"] = "$x$"
    files = write_artifacts(doc, str(tmp_path))
    assert "[$x$] Pay $a_b$ then $\\foo$" in _texts(files["graph_svg"])
    assert "$x$" in _texts(files["sequence_svg"])


@pytest.mark.parametrize("name", ["ReachesN", "NotSolved"])
def test_sequence_verdict_line_fits_in_the_picture(traces, tmp_path, monkeypatch, name):
    """A lasso that stops at its initial state has no lane, diehard one: the verdict line
    under them is wider than the lanes, and must not run off the picture's edge."""
    figures = []
    save = draw.save
    monkeypatch.setattr(draw, "save", lambda fig, stem: figures.append(fig) or save(fig, stem))
    draw_sequence(traces[name], str(tmp_path / name))
    fig, = figures
    renderer = fig.canvas.get_renderer()
    verdict = [t for t in fig.findobj(lambda a: hasattr(a, "get_text"))
               if t.get_text().startswith("step ")]
    assert verdict and f"{name} violated" in verdict[0].get_text()
    width = fig.get_figwidth() * fig.dpi
    for t in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_text()):
        assert t.get_window_extent(renderer).x1 <= width + 1, t.get_text()
