"""Every hostile or mistaken input of tests/hostile_cases.py is a one-line exit 2, before
any work and with nothing written; and `kmc show` refuses a trace file whose fields have
the wrong types (generated with hypothesis) instead of crashing."""
import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hostile_cases import _trace, cases, listing, materialise
from kmc.cli import main

CASES = cases()


@pytest.mark.parametrize("name,files,argv", CASES, ids=[c[0] for c in CASES])
def test_each_case_is_one_line_exit_2_and_leaves_nothing(tmp_path, capsys, monkeypatch,
                                                          name, files, argv):
    d = str(tmp_path)
    materialise(d, files)
    before = listing(d)
    monkeypatch.chdir(d)
    code = main([a.replace("{d}", d) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (name, out[-500:], err)
    assert out == "", (name, out[-500:])  # refused before any work
    assert err.count("\n") == 1 and err.startswith("kmc: error: ")
    assert listing(d) == before


FIELDS = ["kind", "model", "explorer", "lanes", "detail", "description"]
STEP_FIELDS = ["index", "action_index", "action", "actor", "message", "fault", "kind",
               "fingerprint", "changed", "state"]
junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=4),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                      st.integers(),
                                                                      max_size=2))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(top=st.dictionaries(st.sampled_from(FIELDS), junk, max_size=2),
       step=st.integers(0, 3),
       fields=st.dictionaries(st.sampled_from(STEP_FIELDS), junk, max_size=2))
def test_show_refuses_or_renders_any_retyped_trace(tmp_path, capsys, top, step, fields):
    doc = _trace()
    doc.update(top)
    doc["steps"][step].update(fields)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    code = main(["show", str(path)])
    _, err = capsys.readouterr()
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err


def test_a_write_that_fails_after_the_run_still_prints_the_result(tmp_path, capsys,
                                                                  monkeypatch):
    import errno

    from kmc.reports import summary

    def full_disk(result, out_dir):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "trace.json"))
    monkeypatch.setattr(summary, "write_traces", full_disk)
    code = main(["check", "twophase", "--variant", "broken-commit", "--out", str(tmp_path),
                 "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "TCConsistent" in out and "violated" in out  # the result is there
    assert err.count("\n") == 1 and "could not be written (No space left on device)" in err
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
