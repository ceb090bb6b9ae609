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


def load_model(path: str):
    """The trace document and the model its scenario, variant and params rebuild."""
    from kmc import api
    from kmc.reports.tracefile import TraceFileError, load_trace

    try:
        doc = load_trace(path)
    except TraceFileError as e:
        raise UsageError(str(e)) from None
    try:
        model = api.build(doc["scenario"], doc["variant"], doc["params"])
    except UsageError as e:
        raise UsageError(f"{path}: cannot rebuild its model: {e}") from None
    return doc, model


def run(args) -> int:
    from kmc.reports.replay import replay_document

    doc, model = load_model(args.trace)
    out = replay_document(model, doc)
    if args.json:
        print(json.dumps({"reproduced": out.reproduced, "step": out.step,
                          "reason": out.reason, "message": out.message,
                          "differences": out.differences}, indent=1, default=str))
    else:
        print(out.message)
        for d in out.differences[3:12]:  # the message names the first three
            print(f"  {d['path'] or 'state'}: recorded {d['old']!r}, now {d['new']!r}")
    return out.exit_code
