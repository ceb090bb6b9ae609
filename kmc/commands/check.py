"""`kmc check SCENARIO`: explore a scenario and report a verdict per property."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys

from kmc import api
from kmc.errors import UsageError

NAME = "check"
HELP = ("explore a scenario (a registered name, a .toml file, or your own model as "
        "FILE.py:factory) and check its properties")
EPILOG = """exit codes:
  0  every property holds and every witness was found
  1  a property is violated or a witness is missing (also in a bounded run)
  2  bad usage or bad input (one line saying what to fix)
  3  internal error
  4  stopped at a bound (--max-states, --max-depth, --time-limit, --max-memory, a
     simulation) with nothing violated and some property undecided"""


def positive(kind):
    """argparse type: a positive int/float; argparse prefixes the flag name to the error."""
    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive "
                                             f"{'whole ' if kind is int else ''}number") from None
        if v != v or v == float("inf"):
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive finite number")
        if not v > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
        return v
    parse.__name__ = "positive"
    return parse


class Once(argparse.Action):
    """An option given once: twice with two values is a mistake (which one was meant?),
    as ``-p`` given twice is."""

    def __call__(self, parser, namespace, values, option_string=None):
        before = getattr(namespace, self.dest, None)
        if before is not None and before != values:
            parser.error(f"{option_string} is given twice ({before!r}, then {values!r}): "
                         "keep one")
        setattr(namespace, self.dest, values)


def non_negative_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{v} must be >= 0")
    return v


def add_arguments(p):
    p.add_argument("scenario", help="scenario name (see `kmc list`), a .toml scenario file, "
                                    "or a model as FILE.py:factory / module:factory")
    p.add_argument("--variant", action=Once,
                   help="protocol variant (default: the scenario's default variant, marked "
                        "* in `kmc list`)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="set a scenario parameter (repeatable)")
    p.add_argument("--explorer", default="bfs", choices=["bfs", "dfs", "simulate", "spark"],
                   help="exploration engine (default: bfs, shortest counterexamples)")
    p.add_argument("--max-states", type=positive(int), metavar="N")
    p.add_argument("--max-depth", type=positive(int), metavar="D")
    p.add_argument("--time-limit", type=positive(float), metavar="S")
    g = p.add_argument_group("simulate explorer")
    g.add_argument("--seed", type=non_negative_int, help="simulation seed (default: 0)")
    g.add_argument("--walks", type=positive(int), help="simulation walks (default: 1000)")
    g.add_argument("--walk-length", type=positive(int),
                   help="states per simulation walk, the initial one included, as "
                        "--max-depth counts them (default: 50)")
    p.add_argument("--max-memory", type=size, metavar="SIZE", default=argparse.SUPPRESS,
                   help="bfs/dfs/simulate: stop cleanly (exit 4) once the process holds this much "
                        "memory, e.g. 8g or 500m; 'none' for no guard (default: 80%% of "
                        "the machine's memory)")
    p.add_argument("--stop-on-violation", action="store_true",
                   help="stop after the first violation: BFS and Spark at the end of its "
                        "level, DFS at once, a simulation at the end of its walk")
    p.add_argument("--symmetry", action="store_true",
                   help="symmetry reduction through the model's representative()")
    p.add_argument("--check-symmetry", action="store_true",
                   help="--symmetry, and check on every state that the reduction is "
                        "sound: each symmetric image reaches the same orbits (one "
                        "expansion more per image)")
    p.add_argument("--deadlock", action="store_true", help="report states with no action")
    p.add_argument("--z3", action="store_true",
                   help="decide invariants with z3 (default: the compiled evaluator)")
    p.add_argument("--out", metavar="DIR",
                   help="write traces, summary.json and a report (replacing what an "
                        "earlier run wrote there)")
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


def size(text):
    """argparse type: a memory size (``8g``, ``500m``, ``1048576``) in bytes, or None
    for ``none``."""
    import re

    if text.strip().lower() == "none":
        return None
    m = re.fullmatch(r"([0-9]+)([kmgt]?)i?b?", text.strip().lower())
    if not m or int(m.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like 8g, 500m or none")
    return int(m.group(1)) << (10 * " kmgt".index(m.group(2) or " "))


def parse_params(pairs) -> dict:
    out = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"-p {item!r} is not KEY=VALUE: write e.g. -p rm=5")
        key = key.strip()
        if key in out and out[key] != value.strip():
            raise UsageError(f"-p {key} is given twice ({out[key]!r}, then "
                             f"{value.strip()!r}): keep one")
        out[key] = value.strip()
    return out


#: options that belong to one explorer, and their defaults there
SIMULATE_OPTS = {"seed": 0, "walks": 1000, "walk_length": 50}
SPARK_OPTS = ("master", "executors", "partitions", "checkpoint_dir", "resume")
#: the most task threads an embedded master runs (more is a typo, not a machine)
EMBEDDED_MAX_EXECUTORS = 1024


def run(args) -> int:
    spark_opts, sim_opts = _explorer_options(args)
    _check_paths(args)
    # with --json, standard output holds the one JSON object: what a user's model prints
    # while it loads, runs and is reported goes to standard error
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        result, text, failed = _checked(args, spark_opts, sim_opts)
    from kmc.cli import one_line

    for warning in result.extra.get("warnings", ()):  # the run's, beside its output
        print(f"kmc: warning: {one_line(warning)}", file=sys.stderr)
    print(text)
    if failed:  # the result is printed above; what could not be written is said here
        raise UsageError(failed)
    return result.exit_code()


def _checked(args, spark_opts, sim_opts):
    """(the result, its text or JSON, what could not be written or None)."""
    from kmc.explorers.progress import Progress
    from kmc.reports.summary import render_text, summary

    progress = None if args.quiet else Progress(f"kmc {args.scenario}")
    try:
        result = api.check(args.scenario, args.variant, parse_params(args.param),
                           explorer=args.explorer, max_states=args.max_states,
                           max_depth=args.max_depth, time_limit=args.time_limit,
                           stop_on_violation=args.stop_on_violation,
                           symmetry=args.symmetry, check_symmetry=args.check_symmetry,
                           deadlock=True if args.deadlock else None, progress=progress,
                           z3=args.z3, **sim_opts, **spark_opts,
                           **_memory_option(args))
    finally:
        if progress is not None:
            progress.close()
    from kmc.user_models import blamed

    # the reports call the model's display hooks (format_state, state_to_json, ...): one
    # of a user's model raising is named as its bug, with nothing left half-written
    with blamed(result.extra.get("user_model"), raised_in_model=True):
        trace_files, failed = _write_outputs(result, args.out)
        text = json.dumps(summary(result, trace_files), indent=1, default=str) \
            if args.json else render_text(result, trace_files, show_all=args.show_all)
    return result, text, failed


def _explorer_options(args) -> tuple[dict, dict]:
    """The options of the chosen explorer; another explorer's options are refused."""
    def given(k):  # by identity: --seed 0 equals False, and is given all the same
        v = getattr(args, k)
        return v is not None and v is not False
    spark = {k: getattr(args, k) for k in SPARK_OPTS if given(k)}
    sim = {k: getattr(args, k) for k in SIMULATE_OPTS if given(k)}
    if spark and args.explorer != "spark":
        flags = ", ".join("--" + k.replace("_", "-") for k in spark)
        raise UsageError(f"{flags}: Spark options, they need --explorer spark")
    if sim and args.explorer != "simulate":
        flags = ", ".join("--" + k.replace("_", "-") for k in sim)
        raise UsageError(f"{flags}: simulation options, they need --explorer simulate")
    if args.explorer == "simulate":
        sim = {**SIMULATE_OPTS, **sim}
    for k in ("master", "checkpoint_dir"):
        if k in spark and not spark[k].strip():
            flag = "--" + k.replace("_", "-")
            raise UsageError(f"{flag} is empty: give " + (
                "a Spark master URL such as spark://127.0.0.1:7077, or leave it out for "
                "the embedded local[*]" if k == "master" else "a directory path or URL"))
    if "partitions" in spark:
        from kmc.explorers.spark.explore import MAX_PARTITIONS
        if spark["partitions"] > MAX_PARTITIONS:
            raise UsageError(f"--partitions {spark['partitions']}: at most {MAX_PARTITIONS} "
                             "(a few owner partitions per executor core is plenty)")
    if spark.get("executors", 0) > EMBEDDED_MAX_EXECUTORS and not spark.get("master"):
        raise UsageError(f"--executors {spark['executors']}: an embedded master runs at most "
                         f"{EMBEDDED_MAX_EXECUTORS} task threads on this machine; for more, "
                         "start a cluster and pass --master")
    return spark, sim


def _memory_option(args) -> dict:
    """The memory guard of the local explorers (a Spark run's driver and executors have
    their own memory settings)."""
    given = "max_memory" in vars(args)
    if args.explorer not in ("bfs", "dfs", "simulate"):
        if given:
            raise UsageError("--max-memory guards --explorer bfs, dfs or simulate (a Spark "
                             "run sizes its memory with KMC_SPARK_DRIVER_MEMORY and the "
                             "cluster's settings)")
        return {}
    from kmc.explorers.memory import default_max_memory, resident_bytes

    if not given:
        return {"max_memory": default_max_memory()}
    now = resident_bytes()
    if args.max_memory is not None and now is not None and args.max_memory <= now:
        raise UsageError(f"--max-memory {args.max_memory:,} "
                         f"byte{'s' if args.max_memory != 1 else ''} is below what kmc already "
                         f"holds ({now / 2**20:,.0f} MiB) before exploring: give a size "
                         "like 2g or 500m")
    return {"max_memory": args.max_memory}


def _check_paths(args) -> None:
    """Every path the run will write, checked before it starts (exit 2, one line)."""
    from kmc.reports.inputs import InputError, output_dir

    try:
        if args.out is not None:
            output_dir(args.out, "--out")
        if args.checkpoint_dir is not None and _local(args.checkpoint_dir):
            from kmc.explorers.errors import ExplorerError
            from kmc.explorers.spark.ckptfiles import to_url
            try:
                path = to_url(args.checkpoint_dir)[len("file://"):]
            except ExplorerError as e:
                raise InputError(str(e)) from None
            output_dir(path, "--checkpoint-dir")
            names = set(os.listdir(path)) - {".lock"} if os.path.isdir(path) else set()
            if names and not names & {"identity.json", "identity.pkl"}:
                raise InputError(f"--checkpoint-dir {path} holds other files and no kmc "
                                 "checkpoint: name a new or empty directory")
    except InputError as e:
        raise UsageError(str(e)) from None


def _local(url: str) -> bool:
    from urllib.parse import urlparse

    scheme = urlparse(url).scheme
    return len(scheme) <= 1 or scheme == "file"


def _write_outputs(result, out_dir) -> tuple[dict, str]:
    """Trace files, summary.json and the report; ({property: path}, "" or what failed)."""
    if not out_dir:
        return {}, ""
    from kmc.reports.artifacts import clear_earlier_run, held, remove_run_files
    from kmc.reports.html import write_report
    from kmc.reports.summary import write_summary, write_traces

    trace_files = {}
    try:
        with held(out_dir):  # another run writing there finishes first
            clear_earlier_run(out_dir)  # no file of another run beside this one's
            try:
                trace_files = write_traces(result, out_dir)
                write_report(result, out_dir, trace_files)
                write_summary(result, out_dir, trace_files)  # last: the set is whole
            except BaseException:  # a Ctrl-C or a full disk while writing: no half run
                remove_run_files(out_dir, result.properties)
                raise
    except OSError as e:
        where = e.filename or out_dir
        return trace_files, f"the run finished, but {where} could not be written " \
                            f"({e.strerror or e}): the result above is complete; fix the " \
                            "directory and rerun with --out"
    return trace_files, ""
