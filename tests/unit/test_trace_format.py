"""The trace file: versioned, lossless, validated (docs/trace-format.md)."""
import json

import pytest

from kmc import api
from kmc.model.trace import TRACE_FORMAT, TRACE_VERSION, ReplayError, Trace, state_changes
from kmc.reports.summary import write_traces
from kmc.reports.tracefile import TraceFileError, load_trace, validate


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """The broken-commit TwoPhase run, its trace files and the TCConsistent document."""
    r = api.check("twophase", "broken-commit", {"rm": 3})
    out = tmp_path_factory.mktemp("tp")
    files = write_traces(r, str(out))
    return r, files, load_trace(files["TCConsistent"])


def test_document_names_everything_replay_needs(broken):
    r, _files, doc = broken
    trace = r.discoveries["TCConsistent"].trace
    assert doc["format"] == TRACE_FORMAT and doc["version"] == TRACE_VERSION
    assert (doc["scenario"], doc["variant"], doc["params"]) == ("twophase", "broken-commit",
                                                                {"rm": 3})
    assert doc["property"] == "TCConsistent" and doc["kind"] == "always"
    assert doc["init_index"] == trace.init_index
    assert doc["action_indices"] == trace.action_indices
    assert len(doc["steps"]) == len(trace)


def test_each_step_has_action_actor_state_and_changes(broken):
    r, _files, doc = broken
    model = r.extra["model"]
    trace = r.discoveries["TCConsistent"].trace
    for i, st in enumerate(doc["steps"]):
        assert st["state"] == model.state_to_json(trace.states[i])
        if i == 0:
            assert st["action"] is None and st["changed"] == []
            continue
        a = trace.actions[i - 1]
        assert st["action"] == model.format_action(a)
        assert st["actor"] == model.action_actor(a)
        assert st["action_index"] == trace.action_indices[i - 1]
        assert st["changed"] == state_changes(doc["steps"][i - 1]["state"], st["state"])
        assert st["changed"], "every step of a shortest counterexample changes something"


def test_json_round_trip_is_lossless(broken):
    r, _files, doc = broken
    model = r.extra["model"]
    assert json.loads(json.dumps(doc)) == doc
    again = Trace.from_dict(model, doc)
    assert again.states == r.discoveries["TCConsistent"].trace.states
    meta = {k: doc[k] for k in ("scenario", "variant", "params", "property", "kind",
                                "explorer", "description", "detail", "explanation")
            if k in doc}
    assert json.loads(json.dumps(again.to_dict(model, **meta))) == doc


def test_from_dict_checks_recorded_fingerprints(broken):
    r, _files, doc = broken
    bad = json.loads(json.dumps(doc))
    bad["steps"][2]["fingerprint"] = "0" * 16
    with pytest.raises(ReplayError) as e:
        Trace.from_dict(r.extra["model"], bad)
    assert e.value.step == 2


def test_state_changes_diffs_nested_values():
    old = {"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": [{"k": 1}, {"k": 2}], "s": [1, 2]}
    new = {"a": 1, "b": {"c": [1, 3], "d": "x"}, "e": [{"k": 1}, {"k": 5}], "s": [2, 3, 4]}
    got = {c["path"]: c for c in state_changes(old, new)}
    assert set(got) == {"b.c[1]", "e[1].k", "s"}
    assert (got["b.c[1]"]["old"], got["b.c[1]"]["new"]) == (2, 3)
    assert (got["s"]["added"], got["s"]["removed"]) == ([3, 4], [1])
    assert state_changes(old, old) == []


@pytest.mark.parametrize("edit, words", [
    (lambda d: d.update(format="other"), "not a kmc trace file"),
    (lambda d: d.update(version=99), "version 99"),
    (lambda d: d.pop("scenario"), "'scenario'"),
    (lambda d: d.update(action_indices=[0, -1, 2]), ">= 0"),
    (lambda d: d["steps"].pop(), "steps"),
    (lambda d: d["steps"][1].update(action_index=10 ** 6), "step 1: action_index 1000000"),
    (lambda d: d["steps"][0].update(action_index=0), "step 0: action_index 0"),
])
def test_validate_names_what_is_wrong(broken, edit, words):
    doc = json.loads(json.dumps(broken[2]))
    edit(doc)
    with pytest.raises(TraceFileError, match=None) as e:
        validate(doc, "t.json")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(TraceFileError, match="does not exist"):
        load_trace(str(tmp_path / "missing.json"))
    p = tmp_path / "cut.json"
    p.write_text('{"format": "kmc-tr')
    with pytest.raises(TraceFileError, match="not valid JSON"):
        load_trace(str(p))
