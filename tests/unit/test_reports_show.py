"""`kmc show`: step by step, only the fields that changed, actions labelled by actor."""
import json
import os

import pytest

from kmc import api
from kmc.cli import main
from kmc.reports.show import render
from kmc.reports.summary import write_traces
from kmc.reports.tracefile import load_trace


@pytest.fixture(scope="module")
def doc_path(tmp_path_factory):
    r = api.check("twophase", "broken-commit", {"rm": 3})
    return write_traces(r, str(tmp_path_factory.mktemp("show")))["TCConsistent"]


def _blocks(text):
    """step number -> lines printed for that step."""
    out, cur = {}, None
    for line in text.splitlines():
        head = line[:4].strip()
        if head.isdigit():
            cur = int(head)
            out[cur] = [line]
        elif cur is not None and line.strip():
            out[cur].append(line)
    return out


def test_each_step_shows_actor_action_and_only_changed_fields(doc_path):
    doc = load_trace(doc_path)
    blocks = _blocks(render(doc))
    assert sorted(blocks) == list(range(len(doc["steps"])))
    for st in doc["steps"][1:]:
        head, *body = blocks[st["index"]]
        assert st["actor"] in head and st["action"] in head
        printed = {line.split(":")[0].strip() for line in body}
        assert printed == {c["path"] for c in st["changed"]}


def test_violating_step_and_offending_tuple_are_marked(doc_path):
    doc = load_trace(doc_path)
    last = len(doc["steps"]) - 1
    text = render(doc)
    assert "<- TCConsistent violated" in _blocks(text)[last][0]
    doc["detail"] = {"r1": 0, "r2": 1}
    doc["decided_by"] = "z3"
    assert 'offending (from z3\'s model): {"r1": 0, "r2": 1}' in render(doc)


def test_full_prints_every_state(doc_path):
    doc = load_trace(doc_path)
    text = render(doc, full=True)
    assert text.count("state:") == len(doc["steps"]) - 1


def test_cli_show_and_pictures(doc_path, tmp_path, capsys):
    assert main(["show", doc_path]) == 0
    assert "TCConsistent (always) violated" in capsys.readouterr().out
    pics = str(tmp_path / "pics")
    assert main(["show", doc_path, "--pictures", pics, "--state-graph"]) == 0
    names = set(os.listdir(pics))
    for stem in ("graph-TCConsistent.", "sequence-TCConsistent.", "states-TCConsistent."):
        assert {stem + "png", stem + "svg"} <= names
    assert "replay-TCConsistent.py" in names
    assert "wrote " in capsys.readouterr().out
    assert main(["show", doc_path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == load_trace(doc_path)


def test_cli_show_bad_input(tmp_path, capsys, doc_path):
    assert main(["show", str(tmp_path / "nope.json")]) == 2
    assert main(["show", doc_path, "--state-graph"]) == 2
    err = capsys.readouterr().err
    assert err.count("kmc: error:") == 2 and "Traceback" not in err


def test_pictures_that_cannot_all_be_written_leave_none_behind(doc_path, tmp_path, capsys,
                                                                monkeypatch):
    """A full disk half-way (here: the sequence picture): the files written before it
    go again, the user's own files stay, and a directory made for them goes too."""
    import errno

    from kmc.reports import artifacts

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device", "sequence-TCConsistent.png")

    monkeypatch.setattr(artifacts, "draw_sequence", full)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    (mine / "graph-TCConsistent.dot").write_text("an earlier picture")
    for pics, before in ((mine, {"notes.txt", "graph-TCConsistent.dot"}),
                         (tmp_path / "fresh", None)):
        assert main(["show", doc_path, "--pictures", str(pics)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "could not be written" in err
        if before is None:
            assert not pics.exists()
        else:
            assert set(os.listdir(pics)) == before
