"""`kmc replay`: reproduce a trace, or pinpoint the first step that diverges and why."""
import json

import pytest

from kmc import api
from kmc.cli import main
from kmc.model.validation.diehard import DieHard
from kmc.reports import replay as rp
from kmc.reports.summary import write_traces
from kmc.reports.tracefile import load_trace


@pytest.fixture(scope="module")
def diehard(tmp_path_factory):
    r = api.check("diehard")
    out = tmp_path_factory.mktemp("dh")
    path = write_traces(r, str(out))["NotSolved"]
    return r.extra["model"], path, load_trace(path)


def _edited(doc, tmp_path, edit):
    d = json.loads(json.dumps(doc))
    edit(d)
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(d))
    return d, str(p)


def test_cli_reproduces_the_violation(diehard, capsys):
    _model, path, doc = diehard
    assert main(["replay", path]) == 0
    last = len(doc["steps"]) - 1
    assert capsys.readouterr().out.strip() == f"reproduced: NotSolved violated at step {last}"


def test_witness_traces_reproduce_too(tmp_path, capsys):
    r = api.check("twophase", params={"rm": 2})
    path = write_traces(r, str(tmp_path))["SomeCommit"]
    assert main(["replay", path]) == 0
    assert "reproduced: witness for SomeCommit found at step" in capsys.readouterr().out


class EmptyToOne(DieHard):
    """DieHard where emptying the small jug leaves one gallon in it: a changed model."""

    def declare(self, spec):
        super().declare(spec)
        spec.rules = [r if r[0] != "EmptySmallJug" else (r[0], r[1], r[2], {"small": "1"},
                                                         r[4], r[5]) for r in spec.rules]


def test_a_changed_successor_is_pinpointed(diehard):
    _model, _path, doc = diehard
    out = rp.replay_document(EmptyToOne(), doc)
    first = next(st["index"] for st in doc["steps"][1:] if st["action"] == "EmptySmallJug")
    assert not out.reproduced and out.exit_code == 1
    assert (out.step, out.reason) == (first, rp.OTHER_SUCCESSOR)
    assert [d["path"] for d in out.differences] == ["small"]
    assert out.differences[0]["new"] == 1
    assert f"diverged at step {first}" in out.message and "small" in out.message


class NoFillBig(DieHard):
    """DieHard without its FillBigJug rule: every later action index shifts."""

    def declare(self, spec):
        super().declare(spec)
        spec.rules = [r for r in spec.rules if r[0] != "FillBigJug"]


def test_a_missing_action_is_pinpointed(diehard):
    _model, _path, doc = diehard
    out = rp.replay_document(NoFillBig(), doc)
    first = next(st["index"] for st in doc["steps"][1:] if st["action"] == "FillBigJug")
    assert (out.step, out.reproduced) == (first, False)
    assert out.reason in (rp.OTHER_ACTION, rp.NOT_ENABLED)
    assert "FillBigJug" in out.message


def test_edited_files_diverge_at_the_edited_step(diehard, tmp_path, capsys):
    model, _path, doc = diehard
    k = 3
    d, path = _edited(doc, tmp_path, lambda d: d["steps"][k]["state"].update(big=99))
    out = rp.replay_document(model, d)
    assert (out.step, out.reason) == (k, rp.OTHER_SUCCESSOR)
    assert main(["replay", path]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"diverged at step {k}: different successor")
    # the step's fingerprint is still the model's state's: the file's view was edited
    assert "the file's state was edited" in out and "next_state() changed" not in out
    n = len(model.actions(model.init_states()[0]))
    d, _ = _edited(doc, tmp_path, lambda d: d["action_indices"].__setitem__(0, n))
    out = rp.replay_document(model, d)
    assert (out.step, out.reason) == (1, rp.NOT_ENABLED)
    d, _ = _edited(doc, tmp_path, lambda d: d.update(init_index=5))
    assert (rp.replay_document(model, d).step, rp.replay_document(model, d).reason) == \
        (0, rp.MODEL_CHANGED)


def test_a_prefix_no_longer_violates(diehard, tmp_path):
    model, _path, doc = diehard

    def cut(d):
        d["action_indices"].pop()
        d["steps"].pop()
    d, _ = _edited(doc, tmp_path, cut)
    out = rp.replay_document(model, d)
    assert (out.reason, out.step) == (rp.PROPERTY_HOLDS, len(d["steps"]) - 1)
    d, _ = _edited(doc, tmp_path, lambda d: d.update(property="Gone"))
    assert rp.replay_document(model, d).reason == rp.MODEL_CHANGED


@pytest.mark.parametrize("content", ["not json", '{"format": "kmc-trace", "version": 2}',
                                     "[]"])
def test_invalid_files_exit_2_with_one_line(tmp_path, capsys, content):
    p = tmp_path / "t.json"
    p.write_text(content)
    assert main(["replay", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kmc: error: ") and err.count("\n") == 1


def test_unknown_scenario_exits_2(diehard, tmp_path, capsys):
    _model, _path, doc = diehard
    _d, path = _edited(doc, tmp_path, lambda d: d.update(scenario="no-such-scenario"))
    assert main(["replay", path]) == 2
    assert "cannot rebuild its model" in capsys.readouterr().err


def test_a_value_retyped_in_the_file_is_a_divergence(diehard, tmp_path):
    """Python finds true == 1 == 1.0; a state whose int became a bool or a float is
    another state, and replay says where."""
    model, _path, doc = diehard
    k = 3
    for retyped in (float(doc["steps"][k]["state"]["big"]), bool(doc["steps"][k]["state"]
                                                                 ["big"])):
        d, _ = _edited(doc, tmp_path, lambda d: d["steps"][k]["state"].update(big=retyped))
        out = rp.replay_document(model, d)
        assert (out.step, out.reason) == (k, rp.OTHER_SUCCESSOR), retyped


def test_a_trace_of_another_kind_of_property_is_a_divergence(diehard, tmp_path):
    model, _path, doc = diehard
    d, _ = _edited(doc, tmp_path, lambda d: d.update(kind="sometimes"))
    out = rp.replay_document(model, d)
    assert out.reason == rp.MODEL_CHANGED and "sometimes property" in out.message


@pytest.mark.parametrize("version", ["true", "2.0", '"2"'])
def test_a_version_that_only_equals_a_readable_one_is_refused(diehard, tmp_path, capsys,
                                                              version):
    _model, path, _doc = diehard
    p = tmp_path / "t.json"
    p.write_text(open(path).read().replace('"version": ', f'"version": {version}, "v": ', 1))
    assert main(["replay", str(p)]) == 2
    assert "trace format version" in capsys.readouterr().err


def test_a_changed_successor_keeps_blaming_next_state(diehard, tmp_path, capsys):
    """Both the state and its fingerprint differ: the model's step is what changed."""
    model, _path, doc = diehard
    k = 3

    def edit(d):
        d["steps"][k]["state"].update(big=99)
        d["steps"][k]["fingerprint"] = "0" * 16
    _d, path = _edited(doc, tmp_path, edit)
    assert main(["replay", path]) == 1
    out = capsys.readouterr().out
    assert "next_state() changed" in out and "edited" not in out


def test_a_looping_link_is_named_as_one(tmp_path, capsys):
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    assert main(["show", str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert "symbolic links" in err and "does not exist" not in err, err
