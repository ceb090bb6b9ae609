"""`kmc replay TRACE.json`: re-execute a trace file against the current model.

Exit 0 when the trace reproduces its violation (or witness), 1 when it diverges (the
first diverging step and why are printed), 2 when the file is unreadable or invalid or
its scenario cannot be rebuilt.
"""
from __future__ import annotations

import json

from kmc.errors import UsageError

NAME = "replay"
HELP = "re-execute a trace file (from `kmc check --out`) against the current model"


def add_arguments(p):
    p.add_argument("trace", help="a trace-*.json file written by `kmc check --out DIR`")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    add_model_argument(p)


def add_model_argument(p):
    p.add_argument("--model", metavar="FILE.py:FACTORY",
                   help="the user model to rebuild the trace with (FILE.py:factory or "
                        "module:factory): a trace file names its scenario but never "
                        "chooses code to run")


def load_model(path: str, model_ref: str | None = None):
    """The trace document and the model its scenario, variant and params rebuild. Only
    a registered scenario is rebuilt from the file's own words; a user model runs only
    when the command line names it (``model_ref``)."""
    from kmc import api, catalog
    from kmc.reports.tracefile import TraceFileError, load_trace

    try:
        doc = load_trace(path)
    except TraceFileError as e:
        raise UsageError(str(e)) from None
    ref = doc["scenario"]
    if model_ref is not None:
        if not catalog.is_user_ref(model_ref):
            raise UsageError(f"--model {model_ref}: name a model as FILE.py:factory or "
                             "module:factory")
        ref = model_ref
    elif catalog.is_user_ref(ref) or ref.endswith(".toml") or "/" in ref:
        from kmc.reports.show import printable
        raise UsageError(f"{path} names the model {ref!r}, not a registered scenario: a "
                         "trace file does not choose code to run; if you trust it, pass it "
                         f"on the command line: --model {printable(ref)}")
    try:
        if model_ref is not None:
            model = _build_user(ref, doc)
        else:
            model = api.build(ref, doc["variant"], doc["params"])
    except BrokenModel:
        raise
    except UsageError as e:
        if model_ref is not None:  # the trace may be another model's
            raise UsageError(f"{path} was recorded on {doc['scenario']!r} (variant "
                             f"{doc['variant']!r}), and --model {model_ref} cannot rebuild "
                             f"it ({e}): name the model it was recorded with") from None
        raise UsageError(f"{path}: cannot rebuild its model: {e}") from None
    return doc, model


class BrokenModel(UsageError):
    """The --model factory builds no model at all, whichever trace it is given."""


def _build_user(ref: str, doc: dict):
    """The user model built with the trace's parameters as recorded: they are the values
    its factory received (already converted from the command line), so they are not read
    as TOML literals a second time (a recorded string "3" stays a string); then validated
    as `kmc check` validates it (actions() answering a set would make the replay differ
    from run to run)."""
    from kmc import api, catalog

    sc = catalog.get(ref)
    if doc["variant"] not in sc.variants:
        # a factory that cannot build a model at all, with its own defaults, says so
        # first (its error is the problem to fix, not the trace's variant)
        try:
            api.build_model(sc, sc.variants[0], {})
        except UsageError as e:
            raise BrokenModel(str(e)) from None
        raise UsageError(f"scenario {ref!r} has no variant {doc['variant']!r}: use one of "
                         f"{', '.join(sc.variants)}")
    return api.validated(api.build_model(sc, doc["variant"], dict(doc["params"])), ref)


def run(args) -> int:
    from kmc.reports.replay import replay_document

    from kmc.user_models import blamed

    doc, model = load_model(args.trace, args.model)
    with blamed(args.model):
        out = replay_document(model, doc)
    if args.json:
        print(json.dumps({"reproduced": out.reproduced, "step": out.step,
                          "reason": out.reason, "message": out.message,
                          "differences": out.differences}, indent=1, default=str))
    else:  # the message quotes the file's words: escaped as `kmc show` escapes them
        from kmc.reports.show import printable
        print(printable(out.message))
        for d in out.differences[3:12]:  # the message names the first three
            print(printable(f"  {d['path'] or 'state'}: recorded {d['old']!r}, "
                            f"now {d['new']!r}"))
    return out.exit_code
