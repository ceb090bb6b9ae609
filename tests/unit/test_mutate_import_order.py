"""A module's import-time code may change another module's globals: a model may give
the NamedTuples of its state module a generated ``_replace``
(``kmc.model.records.fast_replace_all``) from the module that imports it. A mutant of
the state module's class bodies changes only what it changes: the worker compares the
globals once every module is loaded again, as the baseline did, and a class the
importing module patches is no change."""
import os

from kmc.model import memo
from kmc.mutate.isolation import install, mutants_of
from kmc.mutate.pool import run_one
from kmc.mutate.replay import affected
from kmc.mutate.worker import namespace_task

STATE = '''from typing import NamedTuple


class Point(NamedTuple):
    x: int = 0
    y: int = 0


class Bounds(NamedTuple):
    limit: int = 3
'''

MODEL = '''import mutate_order_state as st
from kmc.model.records import fast_replace_all

fast_replace_all(vars(st))


def step(p):
    return p._replace(x=p.x + 1)


def start(limit):
    return st.Bounds(limit=limit)
'''

MEMOISED = '''import mutate_order_state as st
from kmc.model import memo


@memo.pure()
def grown(p):
    return p._replace(y=p.y + 1)


def grow(p):
    return grown(p)


def start(limit):
    return st.Bounds(limit=limit)
'''


def _affected(m, source, snapshot, namespaces, tracked):
    memo.off()  # as a mutant's worker runs
    install(m, source, snapshot)
    found = affected(m, snapshot, None, namespaces, tracked)
    return None if found is None else sorted(found)


def _found(tmp_path, monkeypatch, model_text):
    """What the mutant of ``Bounds.limit``'s default reaches, the model being
    ``model_text``; and the model's path."""
    monkeypatch.syspath_prepend(str(tmp_path))
    paths = {}
    for name, text in (("mutate_order_state", STATE), ("mutate_order_model", model_text)):
        paths[name] = str((tmp_path / f"{name}.py").resolve())
        (tmp_path / f"{name}.py").write_text(text)
    served = {"mutate_order_state": (paths["mutate_order_state"], STATE),
              "mutate_order_model": (paths["mutate_order_model"], model_text)}
    namespaces = run_one(namespace_task, (served,))
    tracked = {p: p for p in paths.values()}
    snapshot = {"mutate_order_model": served["mutate_order_model"]}
    mutants = mutants_of(paths["mutate_order_state"], "mutate_order_state.py",
                         "mutate_order_state", STATE)
    limit_line = STATE.splitlines().index("    limit: int = 3") + 1
    (m, *_rest) = [x for x in mutants if x.line == limit_line]
    return run_one(_affected, (m, STATE, snapshot, namespaces, tracked)), \
        paths["mutate_order_model"]


def test_a_class_patched_by_an_importer_is_not_a_change(tmp_path, monkeypatch):
    found, model = _found(tmp_path, monkeypatch, MODEL)
    step_line = MODEL.splitlines().index("def step(p):") + 1
    start_line = MODEL.splitlines().index("def start(limit):") + 1
    # the default of Bounds changed: what builds a Bounds reads it ...
    assert found is not None and (model, start_line) in found
    # ... and Point, patched by the model's import exactly as in the baseline, did not
    assert (model, step_line) not in found
    assert all(os.path.exists(f) for f, _n in found)


def test_a_memoised_function_is_not_a_change(tmp_path, monkeypatch):
    """A memoised function closes over the switch that turns every table off: the
    baseline's globals are read with the tables off, as a mutant's worker runs, so
    the memoised function and its callers are no change."""
    found, model = _found(tmp_path, monkeypatch, MEMOISED)
    lines = MEMOISED.splitlines()
    start_line = lines.index("def start(limit):") + 1
    assert found is not None and (model, start_line) in found
    for name in ("def grown(p):", "def grow(p):"):
        assert (model, lines.index(name) + 1) not in found, name
