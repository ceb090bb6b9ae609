"""`kmc check SCENARIO`: explore a scenario and report a verdict per property."""
from __future__ import annotations

import argparse
import json
import sys

from kmc import api
from kmc.errors import UsageError

NAME = "check"
HELP = "explore a scenario (a registered name or a .toml file) and check its properties"
EPILOG = """exit codes:
  0  every property holds and every witness was found
  1  a property is violated or a witness is missing (also in a bounded run)
  2  bad usage or bad input (one line saying what to fix)
  3  internal error
  4  stopped at a bound (--max-states, --max-depth, --time-limit, a simulation) with
     nothing violated and some property undecided"""


def positive(kind):
    """argparse type: a positive int/float; argparse prefixes the flag name to the error."""
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive "
                                             f"{'whole ' if kind is int else ''}number") from None
        if not v > 0:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
        return v
    parse.__name__ = "positive"
    return parse


def non_negative_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} must be >= 0")
    return v


def add_arguments(p):
    p.add_argument("scenario", help="scenario name (see `kmc list`) or path to a .toml file")
    p.add_argument("--variant", help="protocol variant (default: the scenario's default "
                                      "variant, marked * in `kmc list`)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="set a scenario parameter (repeatable)")
    p.add_argument("--explorer", default="bfs", choices=["bfs", "dfs", "simulate", "spark"],
                   help="exploration engine (default: bfs, shortest counterexamples)")
    p.add_argument("--max-states", type=positive(int), metavar="N")
    p.add_argument("--max-depth", type=positive(int), metavar="D")
    p.add_argument("--time-limit", type=positive(float), metavar="S")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="simulation seed (default: 0)")
    p.add_argument("--walks", type=positive(int), default=1000,
                   help="simulation walks (default: 1000)")
    p.add_argument("--walk-length", type=positive(int), default=50,
                   help="steps per simulation walk (default: 50)")
    p.add_argument("--stop-on-violation", action="store_true",
                   help="stop at the end of the BFS level where the first violation is found")
    p.add_argument("--symmetry", action="store_true",
                   help="symmetry reduction through the model's representative()")
    p.add_argument("--deadlock", action="store_true", help="report states with no action")
    p.add_argument("--z3", action="store_true",
                   help="decide invariants with z3 (default: the compiled evaluator)")
    p.add_argument("--out", metavar="DIR", help="write traces, summary.json and a report")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    p.add_argument("--all", action="store_true", dest="show_all",
                   help="print every counterexample (default: the first violated "
                        "property's, in declaration order)")
    g = p.add_argument_group("spark explorer")
    g.add_argument("--master", help="Spark master URL (default: embedded local[*])")
    g.add_argument("--executors", type=positive(int), metavar="N")
    g.add_argument("--partitions", type=positive(int), metavar="N")
    g.add_argument("--checkpoint-dir", metavar="DIR")
    g.add_argument("--resume", action="store_true")


def parse_params(pairs) -> dict:
    out = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-p {item!r} is not KEY=VALUE: write e.g. -p rm=5")
        out[key.strip()] = value.strip()
    return out


def run(args) -> int:
    from kmc.explorers.progress import Progress
    from kmc.reports.summary import render_text, summary, write_summary, write_traces

    spark_opts = {}
    if args.explorer == "spark":
        spark_opts = {k: getattr(args, k) for k in
                      ("master", "executors", "partitions", "checkpoint_dir", "resume")
                      if getattr(args, k) not in (None, False)}
    elif any(getattr(args, k) not in (None, False) for k in
             ("master", "executors", "partitions", "checkpoint_dir", "resume")):
        raise UsageError("--master/--executors/--partitions/--checkpoint-dir/--resume need "
                         "--explorer spark")
    progress = None if args.quiet else Progress(f"kmc {args.scenario}")
    try:
        result = api.check(args.scenario, args.variant, parse_params(args.param),
                           explorer=args.explorer, max_states=args.max_states,
                           max_depth=args.max_depth, time_limit=args.time_limit,
                           seed=args.seed, walks=args.walks, walk_length=args.walk_length,
                           stop_on_violation=args.stop_on_violation,
                           symmetry=args.symmetry,
                           deadlock=True if args.deadlock else None, progress=progress,
                           z3=args.z3,
                           **spark_opts)
    finally:
        if progress is not None:
            progress.close()
    trace_files = {}
    if args.out:
        trace_files = write_traces(result, args.out)
        write_summary(result, args.out, trace_files)
        _write_report(result, args.out, trace_files)
    if args.json:
        json.dump(summary(result, trace_files), sys.stdout, indent=1, default=str)
        print()
    else:
        print(render_text(result, trace_files, show_all=args.show_all))
    return result.exit_code()


def _write_report(result, out_dir, trace_files) -> None:
    """The HTML report, when the reports package provides one."""
    try:
        from kmc.reports.html import write_report
    except ImportError:
        return
    write_report(result, out_dir, trace_files)
