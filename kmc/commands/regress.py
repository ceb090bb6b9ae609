"""`kmc regress [SUITE]`: run a suite of expected verdicts and fail when one flips.

Exit codes: 0 every entry matches; 1 a difference (verdict flipped, counterexample length
changed, state count drifted, stored counterexample no longer reproduces, a run crashed,
an entry without expectation); 2 a bad suite file or bad usage, or an entry that cannot
run as written (an option its scenario does not take, a user model that fails).
The suite format and CI recipes are in docs/regression.md.
"""
from __future__ import annotations

import json
import os
import sys
import time

from kmc import api, catalog
from kmc.commands.check import positive
from kmc.errors import UsageError

NAME = "regress"
HELP = "run a regression suite of expected verdicts (for CI); exit 1 when one flips"


def add_arguments(p):
    p.add_argument("suite", nargs="?", default=None,
                   help="the suite file (default: kmc's own suite, shipped with it)")
    p.add_argument("--tier", choices=["smoke", "full"], default="full",
                   help="smoke: the entries marked tier = \"smoke\"; full: every entry "
                        "(default)")
    p.add_argument("--only", metavar="TEXT", action="append", default=[],
                   help="run only the entries whose id contains TEXT (repeatable)")
    p.add_argument("--junit", metavar="FILE", help="write JUnit XML (one testcase per entry)")
    p.add_argument("--markdown", metavar="FILE",
                   help="write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--out", metavar="DIR",
                   help="write traces, summary.json and the report of each failing entry")
    p.add_argument("-j", "--jobs", type=positive(int), default=os.cpu_count() or 1,
                   metavar="N", help="parallel runs (capped by the core count)")
    p.add_argument("--update", action="store_true",
                   help="record what the models do now as the expectations, and show "
                        "what changed")
    p.add_argument("--accept-counts", metavar="REASON",
                   help="with --update: record changed state counts too, and REASON next "
                        "to each entry whose count changed (without it, --update refuses "
                        "to re-record a changed count)")
    p.add_argument("--add-missing", action="store_true",
                   help="with --update: first add an entry for every scenario x variant "
                        "the suite does not cover")


def run(args) -> int:
    from kmc.reports.regress.runner import ERROR, PASS, Job, run_entries
    from kmc.reports.regress.suite import (SuiteError, builtin_suite, parse_suite,
                                           read_suite)
    from kmc.reports.regress.text import Table, summary_line
    from kmc.reports.regress.update import append_entries, drift_refusal, reason_problem

    problem = reason_problem(args.update, args.accept_counts)
    if problem:
        raise UsageError(problem)
    if args.add_missing and not args.update:
        raise UsageError("--add-missing adds entries without expectations: use it with "
                         "--update")
    _check_outputs(args)
    if args.suite is None:
        args.suite = builtin_suite()
    try:
        suite = read_suite(args.suite)
        if args.add_missing:
            suite = parse_suite(append_entries(suite.text, missing(suite)), args.suite)
    except SuiteError as e:
        raise UsageError(str(e)) from None
    validate(suite)
    _spare_inputs(args, suite)
    chosen = [e for e in suite.select(args.tier)
              if not args.only or any(t in e.id for t in args.only)]
    if not chosen:
        raise UsageError(_none_chosen(args, suite))
    if args.update:
        confine_updates(suite, chosen)
    index = {e.id: i for i, e in enumerate(suite.entries)}
    jobs = [Job(index[e.id], e, suite.traces_dir, api.check, update=args.update,
                out_dir=args.out, bad_input=(UsageError,), after=api.stop_engines)
            for e in chosen]
    workers = max(1, min(args.jobs, os.cpu_count() or 1, len(jobs)))
    table = Table(chosen, update=args.update)
    say = (lambda *a: None) if args.json else _print
    say(f"kmc regress {args.suite}: tier {args.tier}, {len(jobs)} {_entries(len(jobs))}, "
        f"{workers} worker{'s' if workers > 1 else ''}")
    say(table.header())
    t0 = time.perf_counter()
    outcomes = run_entries(jobs, workers, lambda o: say(table.line(o)))
    wall = time.perf_counter() - t0
    say(summary_line(outcomes, wall, workers))
    if args.update:
        code = 1 if any(o.status == ERROR for o in outcomes) else 0
        refusal = drift_refusal(outcomes, args.accept_counts)
        for line in refusal:
            say(line)
        if refusal:
            code = 1
        else:
            _record(suite, outcomes, say, args.accept_counts)
    else:
        code = 0 if all(o.status == PASS for o in outcomes) else 1
    bad = [o.entry.id for o in outcomes if o.bad_input]
    if bad:  # the suite asks for something its scenario cannot do: bad input, exit 2
        code = 2
        say(f"{len(bad)} {_entries(len(bad))} could not run as written (exit 2): "
            f"{', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''}; fix the entry")
    _artifacts(args, outcomes, wall, code)
    unwritten = [o.report_error for o in outcomes if o.report_error]
    if unwritten:  # the results are printed above; what could not be written is said here
        more = f" (and {len(unwritten) - 1} more)" if len(unwritten) > 1 else ""
        raise UsageError(unwritten[0] + more)
    return code


def _entries(n: int) -> str:
    return "entry" if n == 1 else "entries"


def _check_outputs(args) -> None:
    """The report files and folder, checked before any entry runs."""
    from kmc.reports.inputs import InputError, output_dir, output_file

    try:
        for flag, path in (("--junit", args.junit), ("--markdown", args.markdown)):
            if path is not None:
                output_file(path, flag)
        if args.out is not None:
            output_dir(args.out, "--out")
    except InputError as e:
        raise UsageError(str(e)) from None


def _none_chosen(args, suite) -> str:
    """Why no entry runs, and the fix."""
    if not suite.entries:
        return f"{args.suite} has no entries: add one under an [[entry]] header " \
               "(docs/regression.md)"
    tiered = suite.select(args.tier)
    if tiered and args.only:
        return f"{args.suite}: no entry id of tier {args.tier} contains " \
               f"{' or '.join(map(repr, args.only))}: check --only against the suite's ids"
    return f"{args.suite}: no entry is in tier {args.tier!r}: mark entries with " \
           "tier = \"smoke\", or run --tier full"


def _spare_inputs(args, suite) -> None:
    """A report file never replaces what the run reads: the suite file, a scenario or
    model file an entry names, a stored counterexample, or the other report."""
    from kmc.user_models import is_user_ref

    reports = [(f, p) for f, p in (("--junit", args.junit), ("--markdown", args.markdown))
               if p is not None]
    stored = os.path.realpath(suite.traces_dir)
    named = {}  # the files the entries name (validate made them paths beside the suite)
    for e in suite.entries:
        ref = e.scenario.rpartition(":")[0] if is_user_ref(e.scenario) else e.scenario
        if os.path.isfile(ref):
            named.setdefault(os.path.realpath(ref), e.id)
    for flag, path in reports:
        real = os.path.realpath(path)
        if real == os.path.realpath(suite.path):
            raise UsageError(f"{flag} {path} is the suite file itself: name another file "
                             "for the report")
        if real in named:
            raise UsageError(f"{flag} {path} is the scenario entry {named[real]!r} "
                             "runs: name another file for the report")
        if os.path.commonpath([stored, real]) == stored:
            raise UsageError(f"{flag} {path} is inside the stored counterexamples' "
                             f"directory {suite.traces_dir}: name a file outside it")
    out = getattr(args, "out", None)
    if out is not None and os.path.commonpath([stored, os.path.realpath(out)]) == stored:
        # failure reports hold traces too: --update would take them for stored ones
        raise UsageError(f"--out {out} is inside the stored counterexamples' directory "
                         f"{suite.traces_dir}: name a folder outside it")
    if len(reports) == 2 and os.path.realpath(args.junit) == os.path.realpath(args.markdown):
        raise UsageError(f"--junit and --markdown both name {args.junit}: give each report "
                         "its own file")


def validate(suite) -> None:
    """Every entry names a scenario, variant and parameters that exist, before anything
    runs: a typo is exit 2 with the line, not a crash half-way through CI."""
    folder = os.path.dirname(os.path.abspath(suite.path))
    for e in suite.entries:
        e.scenario = catalog.beside(e.scenario, folder)
        try:
            info = catalog.load(e.scenario, e.variant, dict(e.params))
        except UsageError as err:
            text = str(err)
            key = "params" if "parameter" in text else \
                "variant" if "variant" in text else "scenario"
            line = e.key_lines.get(key) or e.line
            where = f"{suite.path}:{line}" if line else suite.path
            raise UsageError(f"{where}: entry {e.id!r}: {err}") from None
        e.variant = e.variant or info["variant"]


def confine_updates(suite, entries) -> None:
    """--update rewrites the suite file and the stored counterexamples of ``entries``: it
    writes only inside the directory that holds the suite file. A `traces` directory (or
    an entry's directory in it) that resolves elsewhere, through `..`, an absolute path or
    a symbolic link, is exit 2 before anything runs. Without --update, stored
    counterexamples are only read and may live anywhere."""
    from kmc.reports.regress.stored import entry_dir
    from kmc.reports.regress.suite import LineMap

    base = os.path.realpath(os.path.dirname(os.path.abspath(suite.path)))
    for d in [suite.traces_dir] + [entry_dir(suite.traces_dir, e.id) for e in entries]:
        if os.path.exists(d) and not os.path.isdir(d):
            raise UsageError(f"--update stores counterexamples in the directory {d}, and "
                             "it is a file: move it away, or set the suite's `traces` to "
                             "another directory")
        real = os.path.realpath(d)
        if os.path.commonpath([base, real]) != base:
            line = LineMap(suite.text).top_key("traces")
            where = f"{suite.path}:{line}" if line else suite.path
            raise UsageError(f"{where}: --update writes stored counterexamples only under "
                             f"the suite's directory {base}, and {d} resolves to {real}: "
                             "set `traces` to a directory beside the suite file")


def missing(suite) -> list[dict]:
    """Skeleton entries for every registered scenario x variant without an entry."""
    covered = set()
    for e in suite.entries:
        try:
            variant = e.variant or catalog.load(e.scenario, None, dict(e.params))["variant"]
        except UsageError:
            continue  # validate() reports it with its line
        covered.add((e.scenario, variant))
    ids = {e.id for e in suite.entries}
    out = []
    for sc in catalog.scenarios().values():
        for v in sc.variants:
            if (sc.name, v) not in covered:
                eid = f"{sc.name}.{v}"
                while eid in ids:
                    eid += "+"
                ids.add(eid)
                out.append({"id": eid, "scenario": sc.name, "variant": v, "tier": "full"})
    return out


def _record(suite, outcomes, say, reason=None) -> None:
    """--update: rewrite the expectations and the stored counterexamples; a file that
    cannot be written is exit 2 (each is written whole or not at all)."""
    from kmc.reports.regress.stored import trace_path

    for o in outcomes:  # before anything is written: each file's place is free
        for p in (o.got.violated if o.got else ()):
            if "," in p or p != p.strip():  # expect = "violates P, Q" could not hold it
                raise UsageError(f"--update cannot record {o.entry.id}'s violated property "
                                 f"{p!r} in expect = \"violates ...\" (a comma or spaces "
                                 "at its ends): rename the property")
        for p in o.traces:
            path = trace_path(suite.traces_dir, o.entry.id, p)
            if os.path.isdir(path):
                raise UsageError(f"--update stores {o.entry.id}'s counterexample of {p} "
                                 f"as {path}, and a directory is there: remove it")
    try:
        _rewrite(suite, outcomes, say, reason)
    except OSError as e:
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        raise UsageError(f"--update could not write{where} ({e.strerror or e}): make the "
                         "suite's directory writable, with free space, and run it again") \
            from None


def _rewrite(suite, outcomes, say, reason=None) -> None:
    """The suite text is rewritten and checked, and every stored counterexample written
    to a temporary file beside its place, before anything is moved into place: a file
    that cannot be written leaves the suite's directory as it was."""
    from kmc.reports.inputs import write_atomic
    from kmc.reports.regress.runner import ERROR
    from kmc.reports.regress.stored import commit, discard
    from kmc.reports.regress.update import (changes, documented_mismatch, rewrite,
                                            stage_traces, with_reason)

    new, notes, doubts, plans = {}, {}, [], []
    for o in outcomes:
        if o.status == ERROR:
            notes[o.entry.id] = [f"not updated: the run failed: {o.error}"]
            continue
        exp = with_reason(o.got.expectation(o.entry.expect), o.entry.expect, reason)
        new[o.index] = exp
        notes[o.entry.id] = changes(o.entry.expect, exp)
        doubt = documented_mismatch(_documented(o), o.got)
        if doubt:
            doubts.append(f"  {o.entry.id}: {doubt}")
    text = rewrite(suite, new)
    try:
        for o in outcomes:
            if o.status != ERROR:
                lines, plan = stage_traces(suite.traces_dir, o.entry.id, o.traces)
                notes[o.entry.id] += lines
                plans.append(plan)
        for plan in plans:
            commit(plan)
    except BaseException:
        for plan in plans:  # what is not in place yet goes (moved files are not staged)
            discard(plan)
        raise
    if text != suite.text:
        write_atomic(suite.path, text)
    changed = {k: v for k, v in notes.items() if v}
    say(f"\nupdated {suite.path}: {len(changed)} of {len(outcomes)} entries changed")
    for eid, lines in changed.items():
        say(f"  {eid}:")
        for line in lines:
            say(f"    {line}")
    if doubts:
        say(f"\ncheck these before committing: {len(doubts)} recorded verdicts differ from "
            "what their scenario documents (`kmc list`):")
        for line in doubts:
            say(line)


def _documented(o) -> str:
    """The entry's hand-written note (e.g. "violates P: why"), what its authors meant."""
    return o.entry.note


def _artifacts(args, outcomes, wall, code) -> None:
    from kmc.reports.inputs import InputError, write_output
    from kmc.reports.regress.jsonout import regress_json
    from kmc.reports.regress.junit import junit_bytes
    from kmc.reports.regress.markdown import render_markdown

    for flag, path, render in (
            ("--junit", args.junit,
             lambda: junit_bytes(outcomes, os.path.basename(args.suite), wall)),
            ("--markdown", args.markdown,
             lambda: render_markdown(outcomes, args.suite, args.tier, wall))):
        if path is None:
            continue
        try:
            write_output(path, render(), flag)
        except InputError as e:
            raise UsageError(str(e)) from None
    if args.json:
        json.dump(regress_json(outcomes, args.suite, args.tier, wall, code), sys.stdout,
                  indent=1)
        print()


def _print(*parts) -> None:
    print(*parts, flush=True)  # CI logs show each entry as soon as it is decided
