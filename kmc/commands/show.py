"""`kmc show TRACE.json`: a trace file step by step, only the fields that changed.

With ``--pictures DIR`` it also writes the counterexample graph (DOT, GraphML, node-link
JSON, PNG, SVG), the message-sequence picture and the Python replay snippet; with
``--state-graph`` it rebuilds the model and draws the explored state graph as well.
"""
from __future__ import annotations

import json

from kmc.errors import UsageError

NAME = "show"
HELP = "print a trace file step by step (only what changed), optionally with pictures"


def add_arguments(p):
    p.add_argument("trace", help="a trace-*.json file written by `kmc check --out DIR`")
    p.add_argument("--full", action="store_true", help="also print every state in full")
    p.add_argument("--json", action="store_true",
                   help="print the validated trace document itself")
    p.add_argument("--pictures", metavar="DIR",
                   help="write the graph exports, pictures and replay snippet to DIR")
    p.add_argument("--state-graph", action="store_true",
                   help="with --pictures: also draw the explored state graph (rebuilds "
                        "the model from the trace's scenario)")
    from kmc.commands.replay import add_model_argument
    add_model_argument(p)


def run(args) -> int:
    from kmc.reports.show import render
    from kmc.reports.tracefile import TraceFileError, load_trace

    try:
        doc = load_trace(args.trace)
    except TraceFileError as e:
        raise UsageError(str(e)) from None
    if args.state_graph and not args.pictures:
        raise UsageError("--state-graph needs --pictures DIR (where to write the picture)")
    if args.model is not None and not args.state_graph:
        raise UsageError("--model rebuilds the model for --state-graph only: add "
                         "--state-graph --pictures DIR, or drop --model")
    if args.pictures is not None:
        from kmc.reports.inputs import InputError, output_dir
        try:
            output_dir(args.pictures, "--pictures")
        except InputError as e:
            raise UsageError(str(e)) from None
    model = None
    if args.state_graph:  # before anything is printed: a model that cannot load is exit 2
        from kmc.commands.replay import load_model
        _doc, model = load_model(args.trace, args.model)
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(render(doc, full=args.full))
    if args.pictures:
        from kmc.reports.artifacts import drawn, not_drawn, write_artifacts

        from kmc.user_models import blamed

        try:
            with blamed(args.model if model is not None else None):
                files = write_artifacts(doc, args.pictures, model=model,
                                        trace_path=args.trace)
        except OSError as e:
            raise UsageError(f"--pictures {args.pictures}: {e.filename or 'a file'} could "
                             f"not be written ({e.strerror or e}): choose a directory you "
                             "can write to, with free space") from None
        print("\nwrote " + ", ".join(sorted(files.values())))
        if not drawn(doc):
            print(not_drawn(doc))
        elif model is not None and "states_png" not in files:
            print(f"no state graph: the trace no longer replays (see `kmc replay "
                  f"{args.trace}`)")
    return 0
