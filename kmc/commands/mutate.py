"""`kmc mutate`: mutation testing of a model's own code against a suite or scenarios.

Every single-point mutant of the chosen files (kmc.mutate.operators) is loaded in a
fresh worker process, runs the chosen entries, and is classified against the unmutated
model: killed by a property, a witness or a crash, count_only, survived or equivalent.
Exit codes: 0 the run finished (whatever the score); 2 bad usage or input.
docs/mutation.md explains the report.
"""
from __future__ import annotations

import json
import os
import shlex
import sys

from kmc.commands.check import parse_params, positive
from kmc.errors import UsageError

NAME = "mutate"
HELP = ("mutation testing: mutate the model's code, run the scenarios, report which "
        "mutants the properties catch")
EPILOG = """examples:
  kmc mutate --files model/kafka/zk/control.py           # its mutants against the smoke tier
  kmc mutate --suite my-suite.toml --tier full -j 2 --json
  kmc mutate --scenario stale-read --variant kip516 --only control.py:2
  kmc mutate --scenario models.py:make -p n=3          # a user model: mutates models.py
  kmc mutate --list --files model/kafka/zk/brokers.py    # the mutant ids, nothing run"""


def add_arguments(p):
    p.add_argument("--suite", metavar="FILE",
                   help="the suite whose entries every mutant runs (default: kmc's own)")
    p.add_argument("--tier", choices=["smoke", "full"], default=None,
                   help="which entries of the suite (default: smoke)")
    p.add_argument("--scenario", action="append", default=[], metavar="NAME",
                   help="run this scenario instead of a suite (repeatable; a name from "
                        "`kmc list`, a .toml file or FILE.py:factory)")
    p.add_argument("--variant", action="append", default=[], metavar="V",
                   help="with --scenario: the variants to run (repeatable; default: "
                        "the scenario's default)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="with --scenario: a scenario parameter (repeatable)")
    p.add_argument("--files", nargs="+", default=[], metavar="PATH",
                   help="the source files to mutate (paths or glob patterns; default: "
                        "the model package of the chosen scenarios, display and "
                        "scenario modules left out)")
    p.add_argument("--only", action="append", default=[], metavar="TEXT",
                   help="only the mutants whose id contains TEXT (repeatable)")
    p.add_argument("--skip", action="append", default=[], metavar="TEXT",
                   help="leave out the mutants whose id contains TEXT (repeatable)")
    p.add_argument("-j", "--jobs", type=positive(int), default=os.cpu_count() or 1,
                   metavar="N", help="mutants run in parallel (default: the core count)")
    p.add_argument("--time-budget", type=positive(float), metavar="SECONDS",
                   help="start no mutant after this many seconds; the rest are listed "
                        "as not run")
    p.add_argument("--timeout", type=positive(float), metavar="SECONDS",
                   help="time limit of one mutant (default: 3x the unmutated model's "
                        "time on its runs + 10 s); a mutant over it counts as a crash")
    p.add_argument("--every-run", action="store_true",
                   help="run every entry on every mutant in full, even after one "
                        "killed it (killed_by then names every property that catches "
                        "it; slower)")
    p.add_argument("--no-replay", action="store_true",
                   help="explore every run in full, even one the mutant cannot have "
                        "changed (by default such a run is decided by replaying the "
                        "unmutated model's state graph: the same results, faster)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object on stdout (the table goes to stderr)")
    p.add_argument("--markdown", metavar="FILE", help="write a Markdown summary")
    p.add_argument("--list", action="store_true",
                   help="list the mutants (id and change; with --json, one JSON object) "
                        "and run nothing")


def run(args) -> int:
    from kmc.mutate import report
    from kmc.mutate.runner import make_plan, mutate

    if args.list and args.markdown is not None:
        raise UsageError("--markdown writes a run's summary, and --list runs nothing: "
                         "drop one of them")
    _check_output(args)
    entries = _entries(args)
    plan = make_plan(entries, args.files, args.only, args.skip)
    if args.list:
        if args.json:
            json.dump({"mutants": [{"id": m.id, "file": m.file, "line": m.line,
                                    "column": m.col, "operator": m.operator,
                                    "function": m.function, "change": m.description}
                                   for m in plan.mutants]}, sys.stdout, indent=1)
            print()
            return 0
        for m in plan.mutants:
            print(f"{m.id}  {m.description}")
        return 0
    # with --json, stdout holds the JSON object alone: the table goes to stderr
    say = _print_err if args.json else _print
    workers = max(1, min(args.jobs, os.cpu_count() or 1))
    say(f"kmc mutate: {len(plan.mutants)} mutants of {len(plan.files)} files, "
        f"{len(entries)} runs each at most, {workers} worker{'s' if workers > 1 else ''}")
    say(report.header())
    rep = mutate(plan, workers, args.time_budget, args.timeout,
                 on_row=lambda row: say(report.line(row)), every_run=args.every_run,
                 replay=not args.no_replay)
    for text in report.summary(rep):
        say(text)
    if args.json:  # first: a report file that cannot be written loses no results
        json.dump(rep, sys.stdout, indent=1)
        print()
    if args.markdown:
        command = "kmc mutate " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        _write(args.markdown, report.markdown(rep, command))
    return 0


def _entries(args) -> list:
    """The runs every mutant makes: the suite's entries of the tier, or the scenarios."""
    from kmc.commands.regress import validate
    from kmc.reports.regress.suite import Entry, SuiteError, builtin_suite, read_suite

    if args.scenario:
        if args.suite:
            raise UsageError("--suite and --scenario are alternatives: give one")
        if args.tier is not None:
            raise UsageError("--tier chooses a suite's entries, and --scenario runs no "
                             "suite: drop --tier")
        params = parse_params(args.param)
        out = []
        for sc in args.scenario:
            for v in args.variant or [None]:
                e = Entry(id="", scenario=sc, variant=v, params=dict(params))
                e.id = ".".join([sc] + ([v] if v else []) +
                                [f"{k}={x}" for k, x in sorted(params.items())])
                out.append(e)
        _validate_scenarios(out)
        return out
    if args.variant or args.param:
        raise UsageError("--variant and -p go with --scenario: name the scenario, or "
                         "put the runs in a suite")
    path = args.suite or builtin_suite()
    try:
        suite = read_suite(path)
    except SuiteError as e:
        raise UsageError(str(e)) from None
    validate(suite)
    tier = args.tier or "smoke"
    chosen = suite.select(tier)
    if not suite.entries:
        raise UsageError(f"{path} has no entries: add one under an [[entry]] header "
                         "(docs/regression.md)")
    if not chosen:
        raise UsageError(f"{path}: no entry is in tier {tier!r}: run --tier full")
    return chosen


def _validate_scenarios(entries) -> None:
    from kmc import catalog

    for e in entries:
        info = catalog.load(e.scenario, e.variant, dict(e.params))
        e.variant = e.variant or info["variant"]
        e.params = dict(e.params)


def _check_output(args) -> None:
    from kmc.reports.inputs import InputError, output_file

    if args.markdown is not None:
        try:
            output_file(args.markdown, "--markdown")
        except InputError as e:
            raise UsageError(str(e)) from None


def _write(path: str, text: str) -> None:
    from kmc.reports.inputs import InputError, write_output

    try:
        write_output(path, text, "--markdown")
    except InputError as e:
        raise UsageError(str(e)) from None


def _print(*parts) -> None:
    print(*parts, flush=True)


def _print_err(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)
