"""A mutation run: which entries and files, the baseline, every mutant on the workers,
each one classified. The command line (kmc/commands/mutate.py) and the tests drive it.
"""
from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass, field

from kmc.errors import UsageError
from kmc.mutate import hugepages, sites
from kmc.mutate.classify import (EQUIVALENT, SURVIVED, Verdict, classify, score,
                                 state_limits)
from kmc.mutate.isolation import Mutant, mutants_of, read_source, warm
from kmc.mutate.lines import function_lines, reaches, statement_lines
from kmc.mutate.operators import pragma_lines
from kmc.mutate.pool import NOT_RUN, longest_first, run_tasks
from kmc.mutate.sources import (Graph, chosen_files, default_files, display_path,
                                model_modules, scenario_module)
from kmc.mutate.specs import replay_spec
from kmc.mutate.stall import stall_limit
from kmc.mutate.tracer import Tracer, decorated_lines, tracked
from kmc.mutate.worker import baseline_task, mutant_task, namespace_task

#: a mutant's time limit when none is given: this many times the baseline's time for
#: its runs (measured by the baseline, whose recording makes it slower than a plain
#: run), plus SLACK
TIMEOUT_FACTOR, SLACK = 3.0, 10.0


@dataclass
class Plan:
    entries: list  # kmc.reports.regress.suite.Entry, resolved
    files: list[str]  # absolute paths
    mutants: list[Mutant]
    graph: Graph
    #: module -> the entries whose model imports it
    relevant: dict = field(default_factory=dict)
    #: path -> the file's text when the mutants were listed (what every worker mutates)
    sources: dict = field(default_factory=dict)
    #: mutated module -> {module that imports it: (path, text when listed)}
    snapshots: dict = field(default_factory=dict)


def make_plan(entries, files=None, only=(), skip=()) -> Plan:
    """Resolve the entries' scenarios (loading their models), choose the files, list
    the mutants. Bad input raises UsageError before anything runs."""
    from kmc import api, catalog

    if not entries:
        raise UsageError("no scenario to run: give --scenario NAME or a suite with entries")
    _warm()  # loaded before the import graph is read: the engines are in it
    modules, models, folders = {}, set(), set()
    for e in entries:
        info = catalog.load(e.scenario, e.variant, dict(e.params))
        sc = info["scenario"]
        model = api.build_model(sc, info["variant"], info["params"])
        # modules a model imports lazily are loaded here, before the workers fork, and
        # join the import graph
        model.properties(), model.weakly_fair, model.strongly_fair
        # the scenario's builder may live in a shared module: the model's own modules
        # name the rest of what the run uses
        own = model_modules(sc, model)
        modules[e.id] = (scenario_module(sc),) + own
        models.update(own)
        if sc.family == "user":
            target = sc.name.rpartition(":")[0]
            if target.endswith(".py"):
                folders.add(os.path.dirname(os.path.abspath(target)))
    graph = Graph(folders)
    paths = chosen_files(graph, files) if files else default_files(graph, models)
    closures = {eid: set().union(*(graph.closure(m) for m in ms))
                for eid, ms in modules.items()}
    relevant, mutants, sources = {}, [], {}
    for path in paths:
        module = graph.module_of[os.path.realpath(path)]
        relevant[module] = [e for e in entries if module in closures[e.id]]
        if not relevant[module]:
            raise UsageError(f"--files {display_path(path)}: no chosen scenario uses this "
                             "file: name a file of their model (e.g. model/kafka/zk/"
                             "control.py for the topic scenarios) or choose other "
                             "scenarios")
        try:
            sources[path] = read_source(path)
            mutants += mutants_of(path, display_path(path), module, sources[path])
        except (OSError, SyntaxError, ValueError) as e:
            raise UsageError(f"{display_path(path)} cannot be read as Python: {e}") \
                from None
    snapshots = {}
    for module in relevant:
        snapshots[module] = {}
        for dep in sorted(plan_dependents(graph, module) - {module}):
            path = graph.file_of[dep]
            snapshots[module][dep] = (path, sources.get(path) or read_source(path))
    example = mutants[0].id if mutants else "model/kafka/zk/control.py:23:11:cmp:0"
    mutants = [m for m in mutants if (not only or any(t in m.id for t in only))
               and not any(t in m.id for t in skip)]
    if not mutants:
        what = "matches --only/--skip" if only or skip else "in these files"
        raise UsageError(f"no mutant {what}: mutant ids look like {example} (see "
                         "--list)")
    return Plan(entries, paths, mutants, graph, relevant, sources, snapshots)


def plan_dependents(graph: Graph, module: str) -> set[str]:
    """The modules a mutant of ``module`` reloads: those that import it, directly or not
    (kmc's command-line modules left alone: a worker never goes through them)."""
    return {d for d in graph.dependents(module)
            if not (d == "kmc.cli" or d.startswith("kmc.commands"))}


def _warm() -> None:
    """Import what every worker needs once, here: each forked worker starts with it."""
    import importlib

    for name in ("kmc.api", "kmc.reports.regress.expect", "kmc.explorers.bfs",
                 "kmc.explorers.dfs", "kmc.explorers.simulate", "kmc.mutate.answers",
                 "kmc.mutate.decide", "kmc.mutate.snapshot"):
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from kmc.explorers.liveness import preload
    from kmc.mutate.setup_reads import framework_names

    preload()  # scipy, which a liveness check imports on its first run
    framework_names(())  # the framework's names, read once for every worker


def run_baseline(plan: Plan, jobs: int = 1) -> dict:
    """The unmutated model on every entry that some mutant needs, each entry in a fresh
    worker that loads the mutated files and their importers afresh (as a mutant's worker
    does). Returns, per entry id: "runs" (the run), "entry_lines" (file -> executed
    lines), "outside", "cached" and "at_setup" ((file, first line) of the functions
    called outside the model's successors and set-up, the part of those a cached
    function called, and those the set-up called: ``tracer``),
    "images" (``snapshot.setup_image``), "graphs" (``replay``), "answers"
    (``answers.record``) and "answer_calls" (the code they called), "ever" (the
    mutants its run infected: ``probes.EVER``),
    "read_outside" (``outside_reads.Watch.read``), "fixed_classes" and
    "rebuilt_classes" (``rebuild.class_modules``); and "lines" (file -> executed
    lines), "namespaces" (module -> ``snapshot.namespace``; None if they could not be
    read), "tracked" (real path -> file name as the tracer gives it), "probe_numbers"
    (``sites.numbers``), "probed" (the numbers of the mutants the probes watch), and
    "stmt_lines" and "def_lines" (per file, where each node's statement and function
    start)."""
    wanted = {e.id for es in plan.relevant.values() for e in es}
    entries = [e for e in plan.entries if e.id in wanted]
    served = {}
    for module, snapshot in plan.snapshots.items():
        served.update(snapshot)
        path = plan.graph.file_of[module]
        served[module] = (path, plan.sources[path])
    decorated = {path: decorated_lines(text) for path, text in served.values()}
    numbers = sites.numbers(plan.mutants)
    # compiled once here, then only executed by each worker (a baseline's, a mutant's)
    warm(served, numbers, Tracer(plan.files, [p for p, _t in served.values()], decorated),
         set(plan.files))
    tasks = [(baseline_task, (e, plan.files, served, decorated, numbers), None)
             for e in entries]
    tasks.append((namespace_task, (served,), None))
    runs, lines, entry_lines = {}, {f: set() for f in plan.files}, {}
    outside, at_setup, images, graphs, fixed, rebuilt = {}, {}, {}, {}, {}, {}
    cached, answer_calls = {}, {}
    answers, ever, read_outside = {}, {}, {}
    namespaces = None
    # the largest runs first (by the suite's recorded state counts), so that no large
    # one starts last, on one worker while the other has nothing left to do
    costs = [_expected_states(e) for e in entries] + [0]
    for i, out in run_tasks(tasks, jobs, order=longest_first(costs)):
        if i == len(entries):
            namespaces = out if "load_error" not in out and "status" not in out else None
            continue
        eid = entries[i].id
        if "run" not in out:
            raise RuntimeError(f"the baseline worker failed on entry {eid}: {out}")
        if out["run"].get("error"):
            raise UsageError(f"entry {eid}: the unmutated model fails: "
                             f"{out['run']['error']}: fix it before mutating it")
        runs[eid] = out["run"]
        entry_lines[eid] = {f: set(v) for f, v in out["lines"].items()}
        outside[eid] = frozenset(map(tuple, out["outside"]))
        at_setup[eid] = frozenset(map(tuple, out["at_setup"]))
        cached[eid] = frozenset(map(tuple, out["cached"]))
        images[eid] = out["image"]
        ever[eid] = frozenset(out["ever"])
        got = out.get("read_outside")
        read_outside[eid] = None if got is None else tuple(map(frozenset, got))
        if out["graph"] is not None:
            graphs[eid] = out["graph"]
            fixed[eid], rebuilt[eid] = map(set, out["classes"])
            answers[eid] = out["answers"]
            got = out.get("answer_calls")
            answer_calls[eid] = None if got is None else frozenset(map(tuple, got))
        for f, v in out["lines"].items():
            lines[f].update(v)
    return {"runs": runs, "lines": {f: sorted(v) for f, v in lines.items()},
            "entry_lines": entry_lines, "outside": outside, "at_setup": at_setup,
            "cached": cached, "answer_calls": answer_calls,
            "images": images, "graphs": graphs, "answers": answers, "ever": ever,
            "read_outside": read_outside, "namespaces": namespaces,
            "tracked": tracked(plan.files, [p for p, _text in served.values()]),
            "fixed_classes": fixed, "rebuilt_classes": rebuilt,
            "probe_numbers": numbers, "probed": sites.probed(numbers, plan.sources),
            "stmt_lines": {path: statement_lines(text)
                           for path, text in plan.sources.items()},
            "def_lines": {path: function_lines(text)
                          for path, text in plan.sources.items()}}


def entries_reaching(plan: Plan, base: dict, m: Mutant, stmt_line: dict) -> list:
    """The entries of ``m``'s module whose baseline run executed ``m``: on any other
    entry the mutant runs exactly as the baseline did (a mutant changes the code of one
    statement only, and the baseline ran each entry in a process as fresh as a
    mutant's), so it can be neither killed nor told apart there. Smallest baseline run
    first (by its state count, the same on every run): a mutant stops at its first
    killing run, and most mutants are killed on their first runs."""
    hit = [e for e in plan.relevant[m.module]
           if reaches(m, base["entry_lines"][e.id].get(m.path, set()), stmt_line)]
    return sorted(hit, key=lambda e: base["runs"][e.id].get("states") or 0)


def run_mutants(plan: Plan, base: dict, jobs: int, budget=None, timeout=None,
                on_row=None, every_run: bool = False,
                replay: bool = True, on_result=None) -> tuple[list, list]:
    """Every mutant of ``plan`` on ``jobs`` workers; returns (rows, ids not run). A
    mutant stops at its first run that kills it (``classify.decisive``), unless
    ``every_run``. With ``replay``, a run the
    mutant cannot have changed is decided by replaying the baseline's state graph
    (``kmc.mutate.replay``): the same results, in a fraction of the time."""
    stop_at = None if every_run else {e: r for e, r in base["runs"].items()}
    limits = state_limits(base["runs"])
    stalls = {eid: stall_limit(r.get("slowest_expansion_s"))
              for eid, r in base["runs"].items()}
    stmt_lines = base["stmt_lines"]
    numbers, probed = base["probe_numbers"], base["probed"]
    tasks, todo, rows, not_run, costs = [], [], [], [], []
    for m in plan.mutants:
        entries = entries_reaching(plan, base, m, stmt_lines[m.path])
        if not entries:  # no run executes the mutated line: nothing to run
            row = _row(m, Verdict(SURVIVED, [], ["never executed by any run"]), False)
            rows.append(row)
            if on_row is not None:
                on_row(row)
            continue
        need = sum(base["runs"][e.id]["elapsed"] for e in entries)
        if timeout is not None and timeout <= need:  # every mutant would time out: killed
            raise UsageError(f"--timeout {timeout:g}: the unmutated runs {m.id} reaches take "
                             f"{need:.2f} s: give more, or leave it out (3x that + 10 s)")
        limit = timeout or TIMEOUT_FACTOR * need + SLACK
        todo.append(m)
        costs.append(sum(map(_expected_states, entries)))
        where = base["def_lines"][m.path].get((m.line, m.col))
        specs = {e.id: spec for e in entries
                 if replay and (spec := replay_spec(plan, base, m, e, where)) is not None}
        number = numbers.get(m.path, {}).get((m.line, m.col, m.operator, m.n))
        reach = (where, base["namespaces"], base["tracked"],
                 number if number in probed else None)
        quiet = {e.id: base["runs"][e.id] for e in entries
                 if number in probed and number not in base["ever"][e.id]} \
            if replay else None
        tasks.append((mutant_task, (m, plan.sources[m.path], plan.snapshots[m.module],
                                    entries, stop_at, limits, specs, reach, stalls,
                                    quiet),
                      limit))
    # the workers are forked from this process and share the recorded graphs with it:
    # frozen, the graphs are not visited by a worker's garbage collector, which would
    # copy every page it writes to (a fork of a large process is quicker too)
    gc.collect()
    gc.freeze()
    hugepages.collapse()  # and a fork copies one page-table entry per 2 MiB
    try:
        # the mutants whose entries have the most states first (an upper bound on their
        # work, before a replay or a kill shortens it): the last to start are short. A
        # recorded count, not a time, so that rows come in the same order on every run.
        # Within a budget, in plan order: the mutants left out are the plan's last
        order = longest_first(costs) if budget is None else None
        for i, result in run_tasks(tasks, jobs, budget, order=order):
            m = todo[i]
            if result.get("status") == NOT_RUN:
                not_run.append(m.id)
                continue
            row = _row(m, classify(base["runs"], result), True, result.get("elapsed_s"),
                       sum(bool(r.get("replayed")) for r in result["runs"].values())
                       if "runs" in result else 0)
            rows.append(row)
            if on_row is not None:
                on_row(row)
            if on_result is not None:
                on_result(m, result)
    finally:
        gc.unfreeze()
    order = {m.id: k for k, m in enumerate(plan.mutants)}
    rows.sort(key=lambda r: order[r["id"]])
    return rows, not_run


def _expected_states(entry) -> int:
    """The state count the suite recorded for ``entry`` (a range's upper end; 0:
    none)."""
    states = entry.expect.states if entry.expect is not None else None
    return states[1] if isinstance(states, tuple) else states or 0


def _row(m: Mutant, v: Verdict, reached: bool, elapsed=None, replayed: int = 0) -> dict:
    return {"id": m.id, "file": m.file, "line": m.line, "column": m.col,
            "operator": m.operator, "n": m.n, "function": m.function,
            "description": m.description, "outcome": v.outcome,
            "killed_by": v.killed_by, "evidence": v.evidence, "reached": reached,
            "elapsed_s": None if elapsed is None else round(elapsed, 2),
            "replayed": replayed}


def unreached(plan: Plan, base: dict) -> dict:
    """file (as shown) -> lines of functions holding a mutant that no run executed."""
    lines = {f: set(v) for f, v in base["lines"].items()}
    stmt_lines = base["stmt_lines"]
    out: dict = {}
    for m in plan.mutants:
        if not reaches(m, lines.get(m.path, set()), stmt_lines[m.path]):
            out.setdefault(m.file, set()).add(m.line)
    return {f: sorted(v) for f, v in sorted(out.items())}


def excluded(plan: Plan) -> dict:
    """file (as shown) -> the lines marked ``# pragma: no mutate``."""
    out = {display_path(f): pragma_lines(plan.sources[f]) for f in plan.files}
    return {f: lines for f, lines in out.items() if lines}


def report(plan: Plan, base: dict, rows: list, not_run: list, wall: float) -> dict:
    """The run as one JSON-ready object."""
    return {
        "entries": [e.id for e in plan.entries if any(
            e.id in {x.id for x in es} for es in plan.relevant.values())],
        "files": [display_path(f) for f in plan.files],
        "mutants": rows,
        "not_run": not_run,
        "score": score(rows),
        "unreached": unreached(plan, base),
        "excluded": excluded(plan),
        "equivalent": sum(r["outcome"] == EQUIVALENT for r in rows),
        "wall_s": round(wall, 1),
    }


def mutate(plan: Plan, jobs: int = 1, budget=None, timeout=None, on_row=None,
           every_run: bool = False, replay: bool = True) -> dict:
    """Baseline, mutants, report: the whole run."""
    t0 = time.perf_counter()
    base = run_baseline(plan, jobs)
    rows, not_run = run_mutants(plan, base, jobs, budget, timeout, on_row, every_run,
                                replay)
    return report(plan, base, rows, not_run, time.perf_counter() - t0)
