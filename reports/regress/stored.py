"""Stored counterexamples: the trace JSON of every expected violation, kept beside the
suite (``regressions/<entry id>/<property>.json``) and replayed on every run.

A replay goes through the Model contract only (``model.trace.Trace.replay``): the stored
initial-state index and action indices must still be enabled, step by step, and the
property must still fail on the last state. A model change that closes the hole, or that
changes the actions a trace relies on, is reported even when the fresh run happens to
find another counterexample of the same length.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile

from kmc.invariants.properties import DEADLOCK, QUIESCENT
from kmc.model.trace import ReplayError, Trace
from kmc.reports.inputs import file_slug, write_staged


def slug(name: str) -> str:
    """A file-name-safe form of an entry id or a property name, never another's
    (``reports.inputs.file_slug``)."""
    return file_slug(name, "-_.=")


def entry_dir(traces_dir: str, entry_id: str) -> str:
    return os.path.join(traces_dir, slug(entry_id))


def trace_path(traces_dir: str, entry_id: str, prop: str) -> str:
    return os.path.join(entry_dir(traces_dir, entry_id), slug(prop) + ".json")


def check_stored(traces_dir: str, entry_id: str, violated: dict, model) -> list[str]:
    """Replay the stored counterexample of each expected violation; one sentence per
    trace that is missing or no longer reproduces."""
    out = []
    for prop, length in sorted(violated.items()):
        path = trace_path(traces_dir, entry_id, prop)
        rel = os.path.relpath(path)
        try:
            with open(path) as f:
                doc = json.load(f)
        except FileNotFoundError:
            out.append(f"stored counterexample for {prop} is missing ({rel}): run "
                       "`kmc regress --update` to record it")
            continue
        except (OSError, ValueError) as e:
            out.append(f"stored counterexample {rel} is unreadable ({e}): run "
                       "`kmc regress --update` to rewrite it")
            continue
        problem = reproduce(model, doc, prop, length)
        if problem:
            out.append(f"stored counterexample for {prop} no longer reproduces ({rel}): "
                       f"{problem}")
            continue
        problem = replays_as_recorded(model, doc)
        if problem:
            out.append(f"stored counterexample for {prop} no longer replays as recorded "
                       f"({rel}): {problem}; run `kmc regress --update` to re-record it")
    return out


def replays_as_recorded(model, doc: dict) -> str | None:
    """None when ``kmc replay`` reproduces the trace file step by step: every recorded
    state and action label is the model's own (the check above follows the indices
    only, so a model whose states gained a field still reaches the violation by them,
    while the file no longer replays); otherwise why not."""
    from kmc.reports.replay import replay_document
    from kmc.reports.tracefile import TraceFileError, validate

    try:
        validate(doc)
    except TraceFileError as e:
        return str(e)
    outcome = replay_document(model, doc)
    return None if outcome.reproduced else outcome.message


def reproduce(model, doc: dict, prop: str, length: int | None = None) -> str | None:
    """None when the trace document still drives ``model`` into a state that violates
    ``prop``; otherwise why not."""
    if not isinstance(doc, dict):
        return "not a trace document"
    if doc.get("property", prop) != prop:
        return f"the file is the trace of {doc.get('property')!r}, not of {prop}"
    init, actions = doc.get("init_index"), doc.get("action_indices")
    if not isinstance(init, int) or not isinstance(actions, list) or \
            not all(isinstance(a, int) for a in actions):
        return "it has no init_index / action_indices (not a kmc trace file)"
    try:
        trace = Trace.replay(model, init, actions)
    except ReplayError as e:
        return str(e)
    if length is not None and len(trace) != length:
        return (f"it has {len(trace)} states but the expectation says {length}: run "
                "`kmc regress --update` to re-record it")
    last = trace.last
    succs = [(a, t) for a, t in model.successors(last) if model.within_boundary(t)]
    if prop == DEADLOCK:
        return None if not succs else "its last state is no longer a deadlock"
    p = next((p for p in model.properties() if p.name == prop), None)
    if p is None:
        return f"the model no longer declares {prop}"
    if p.kind == QUIESCENT and any(not model.is_fault(a) for a, _t in succs):
        return "its last state is no longer quiescent (a protocol step is enabled)"
    if p.check(last):
        return f"{prop} now holds on its last state"
    return None


def trace_documents(result, props) -> dict:
    """property -> trace document (the format of ``reports.summary.write_traces``, so
    stored traces are the files `kmc check --out` writes and `kmc replay` reads)."""
    from kmc.reports.summary import write_traces

    if not props:
        return {}
    sub = dataclasses.replace(result, discoveries={p: result.discoveries[p] for p in props})
    docs = {}
    with tempfile.TemporaryDirectory(prefix="kmc-regress-") as tmp:
        for p, path in write_traces(sub, tmp).items():
            with open(path) as f:
                docs[p] = json.load(f)
    return docs


def store(traces_dir: str, entry_id: str, docs: dict) -> tuple[list, list]:
    """Write ``docs`` as the entry's stored counterexamples and delete the ones no longer
    expected. Returns (written paths, removed paths)."""
    return commit(stage(traces_dir, entry_id, docs))


@dataclasses.dataclass
class Staged:
    """An entry's new stored counterexamples, written to temporary files beside their
    places (``stage``) but not yet in them: --update stages every entry's files before
    it moves any into place (``commit``), so a file that cannot be written leaves the
    suite's directory as it was (``discard``)."""
    folder: str
    made: list  # the directories ``stage`` created, deepest last
    writes: list  # (temporary file, final path)
    removes: list  # stored files no longer expected


def stage(traces_dir: str, entry_id: str, docs: dict) -> Staged:
    d = entry_dir(traces_dir, entry_id)
    keep = {trace_path(traces_dir, entry_id, p) for p in docs}
    removes = [os.path.join(d, name) for name in
               (sorted(os.listdir(d)) if os.path.isdir(d) else [])
               if name.endswith(".json") and os.path.join(d, name) not in keep]
    plan = Staged(d, [], [], removes)
    try:
        if docs:
            plan.made = _make_dirs(d)
        for p, doc in sorted(docs.items()):
            path = trace_path(traces_dir, entry_id, p)
            tmp = write_staged(path, json.dumps(doc, indent=1, default=str) + "\n")
            plan.writes.append((tmp, path))
    except BaseException:
        discard(plan)
        raise
    return plan


def commit(plan: Staged) -> tuple[list, list]:
    """Move the staged files into place and remove the ones no longer expected (and the
    entry's directory, once empty). Returns (written paths, removed paths)."""
    for tmp, path in plan.writes:
        os.replace(tmp, path)
    for path in plan.removes:
        os.remove(path)
    if os.path.isdir(plan.folder) and not os.listdir(plan.folder):
        os.rmdir(plan.folder)
    return [path for _tmp, path in plan.writes], list(plan.removes)


def discard(plan: Staged) -> None:
    """Delete the staged files and the directories staging made: as if never staged."""
    for tmp, _path in plan.writes:
        try:
            os.unlink(tmp)
        except OSError:
            pass
    for folder in reversed(plan.made):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def _make_dirs(folder: str) -> list:
    """``os.makedirs(folder)``; returns the directories it created, outermost first."""
    missing = []
    p = os.path.abspath(folder)
    while not os.path.isdir(p) and os.path.dirname(p) != p:
        missing.append(p)
        p = os.path.dirname(p)
    made = []
    for p in reversed(missing):
        os.mkdir(p)
        made.append(p)
    return made
