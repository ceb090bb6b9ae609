"""Trace files: write, read and validate the versioned JSON of docs/trace-format.md.

Everything that renders a counterexample (``kmc show``, pictures, the HTML report) reads
this document, so a trace file alone is enough to look at a counterexample; ``kmc
replay`` additionally rebuilds the model from the scenario, variant and params it names.
"""
from __future__ import annotations

import json
import os

from kmc.model.lasso import LASSO_VERSION
from kmc.model.trace import TRACE_FORMAT, TRACE_VERSION
from kmc.reports.inputs import InputError, check_depth, read_text, write_atomic

#: versions this code reads (version 1 files lack fingerprints, messages and changes;
#: version 3 is version 2 plus a lasso's loop_start)
READABLE_VERSIONS = (1, TRACE_VERSION, LASSO_VERSION)


class TraceFileError(ValueError):
    """A trace file cannot be used. One line: what is wrong and the fix."""


def trace_document(model, trace, **meta) -> dict:
    """The document for one counterexample or witness (``meta``: scenario, variant,
    params, property, kind, detail...)."""
    return trace.to_dict(model, **meta)


def write_trace(path: str, doc: dict) -> str:
    """Write atomically: never a half-written file, nothing left behind on failure."""
    return write_atomic(path, json.dumps(doc, indent=1, default=str))


#: how deep a trace file may nest: a state's own nesting (a user model's cons list, say)
#: plus the document's few levels; json's C parser recurses once per level, within
#: Python's recursion limit (1000)
TRACE_DEPTH = 400


def load_trace(path: str) -> dict:
    """Read and validate a trace file; raises TraceFileError."""
    if not os.path.lexists(path):  # a looping or dangling link: read_text names it
        raise TraceFileError(f"trace file {path} does not exist: check the path "
                             "(`kmc check ... --out DIR` writes DIR/trace-*.json)")
    try:
        text = read_text(path, "trace file")
        check_depth(text, f"trace file {path}", TRACE_DEPTH)
    except InputError as e:
        raise TraceFileError(str(e)) from None
    try:
        doc = json.loads(text, object_pairs_hook=_no_repeated_keys)
    except RepeatedKey as e:
        raise TraceFileError(f"{path}: key {e} appears twice in one object: kmc writes "
                             "each once, so the file was edited") from None
    except json.JSONDecodeError as e:
        raise TraceFileError(f"{path} is not valid JSON (line {e.lineno}): it is not a "
                             "kmc trace file, or it was truncated") from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        raise TraceFileError(f"{path} holds a number too long to read: it is not a kmc "
                             "trace file, or it was edited") from None
    validate(doc, path)
    return doc


#: a JSON value's type in words, for what a field should be
_TYPE_WORDS = {str: "a string", dict: "an object", int: "a whole number", list: "a list"}


class RepeatedKey(ValueError):
    pass


def _no_repeated_keys(pairs) -> dict:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen = set()
        for k, _v in pairs:
            if k in seen:
                raise RepeatedKey(json.dumps(k))
            seen.add(k)
    return out


def validate(doc, where: str = "trace") -> None:
    """Raise TraceFileError naming the first field that is missing or malformed."""
    if not isinstance(doc, dict) or doc.get("format") != TRACE_FORMAT:
        raise TraceFileError(f"{where} is not a kmc trace file (expected \"format\": "
                             f"\"{TRACE_FORMAT}\"): pass a trace-*.json written by kmc check")
    v = doc.get("version")
    if type(v) is not int or v not in READABLE_VERSIONS:  # true and 2.0 equal 1 and 2
        raise TraceFileError(f"{where} has trace format version {v!r}; this kmc reads "
                             f"versions {', '.join(map(str, READABLE_VERSIONS))}: "
                             "regenerate it with this kmc's `kmc check --out`")
    need = {"scenario": str, "variant": str, "params": dict, "property": str,
            "init_index": int, "action_indices": list, "steps": list}
    for key, typ in need.items():
        val = doc.get(key)
        if not isinstance(val, typ) or isinstance(val, bool):
            raise TraceFileError(f"{where}: field {key!r} is missing or not "
                                 f"{_TYPE_WORDS[typ]}: the file was edited or truncated")
    if doc["init_index"] < 0 or not all(isinstance(i, int) and not isinstance(i, bool)
                                        and i >= 0 for i in doc["action_indices"]):
        raise TraceFileError(f"{where}: init_index and action_indices must be whole "
                             "numbers >= 0")
    steps = doc["steps"]
    if len(steps) != len(doc["action_indices"]) + 1:
        raise TraceFileError(f"{where}: {len(steps)} steps for "
                             f"{len(doc['action_indices'])} actions (expected one more "
                             "step than actions): the file was edited or truncated")
    if doc.get("kind") not in KINDS:
        raise TraceFileError(f"{where}: kind {doc.get('kind')!r} is not one of "
                             f"{', '.join(KINDS)}: the file was edited")
    _check_loop(doc, where)
    for key in ("model", "explorer", "description", "explanation", "decided_by"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], str):
            raise TraceFileError(f"{where}: field {key!r} must be a string")
    if "lanes" in doc and not (isinstance(doc["lanes"], list)
                               and all(isinstance(x, str) for x in doc["lanes"])):
        raise TraceFileError(f"{where}: field 'lanes' must be a list of names")
    for i, st in enumerate(steps):
        _check_step(st, i, where)
        if "index" in st and st["index"] != i:
            raise TraceFileError(f"{where}: step {i} says index {st['index']!r}: the file "
                                 "was edited")
        taken = doc["action_indices"][i - 1] if i else None
        if "action_index" in st and st["action_index"] != taken:
            # replay follows action_indices; a step that says otherwise was edited
            raise TraceFileError(f"{where}: step {i}: action_index {st['action_index']!r} "
                                 f"but action_indices gives {taken!r}: the file was edited")


#: property kinds a trace may record (the built-in deadlock check included)
KINDS = ("always", "quiescent", "sometimes", "Deadlock", "eventually", "leads_to")
LIVENESS_KINDS = ("eventually", "leads_to")


def _check_loop(doc, where: str) -> None:
    """A liveness trace is a lasso (version 3, loop_start an index of its steps); no
    other trace has a loop."""
    loop = doc.get("loop_start")
    if doc.get("kind") not in LIVENESS_KINDS:
        if loop is not None or doc.get("version") == LASSO_VERSION:
            raise TraceFileError(f"{where}: {_a(doc.get('kind'))} trace is no lasso (no "
                                 f"loop_start, not version {LASSO_VERSION}): the file was "
                                 "edited")
        return
    if doc.get("version") != LASSO_VERSION or not isinstance(loop, int) or \
            isinstance(loop, bool) or not 0 <= loop < len(doc["steps"]):
        raise TraceFileError(f"{where}: {_a(doc['kind'])} trace is a lasso: it needs "
                             f"version {LASSO_VERSION} and loop_start, the index of a "
                             "step: the file was edited or truncated")


def _a(kind) -> str:
    """``an always``, ``a sometimes``: a property kind with its article."""
    return f"{'an' if str(kind)[:1] in tuple('aeiou') else 'a'} {kind}"


STEP_KINDS = (None, "step", "input", "fault")
_STEP_TYPES = {"index": (int,), "action_index": (int, type(None)),
               "action": (str, type(None)), "actor": (str, type(None)),
               "message": (dict, type(None)), "fault": (bool,),
               "fingerprint": (str,), "changed": (list,)}


def _check_step(st, i: int, where: str) -> None:
    """A step's fields have the types docs/trace-format.md gives them."""
    if not isinstance(st, dict) or "state" not in st:
        raise TraceFileError(f"{where}: step {i} has no state")
    for key, types in _STEP_TYPES.items():
        if key in st and (not isinstance(st[key], types)
                          or (isinstance(st[key], bool) and bool not in types)):
            raise TraceFileError(f"{where}: step {i}: field {key!r} has the wrong type "
                                 f"({type(st[key]).__name__}): the file was edited")
    if st.get("kind") not in STEP_KINDS:
        raise TraceFileError(f"{where}: step {i}: kind {st.get('kind')!r} is not one of "
                             "step, input, fault")
    fp = st.get("fingerprint")
    if fp is not None and not (len(fp) == 16 and all(c in "0123456789abcdef" for c in fp)):
        raise TraceFileError(f"{where}: step {i}: fingerprint {fp[:20]!r} is not 16 hex "
                             "digits: the file was edited")
    msg = st.get("message")
    if msg is not None and not all(isinstance(msg.get(k), str) for k in ("from", "to",
                                                                         "label")):
        raise TraceFileError(f"{where}: step {i}: message needs string from, to and "
                             "label")
    for c in st.get("changed", ()):
        if not isinstance(c, dict) or not isinstance(c.get("path"), str):
            raise TraceFileError(f"{where}: step {i}: each change needs a string path")


def describe(doc: dict) -> str:
    """``twophase [broken-commit] rm=3``"""
    head = f"{doc.get('scenario')} [{doc.get('variant')}]"
    params = doc.get("params") or {}
    if params:
        head += " " + " ".join(f"{k}={v}" for k, v in params.items())
    return head


def verdict_word(doc: dict) -> str:
    kind = doc.get("kind")
    if kind == "sometimes":
        return "witness found"
    return "violated"


def loop_words(doc: dict) -> str | None:
    """How a lasso goes on after its last step, or None for a finite trace."""
    loop = doc.get("loop_start")
    if loop is None:
        return None
    last = len(doc["steps"]) - 1
    if loop == last:
        return f"stays at step {loop} forever (no fair action is enabled there)"
    return f"repeats from step {loop} forever (step {last} is step {loop} again)"
