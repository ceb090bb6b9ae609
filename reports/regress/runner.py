"""Running suite entries: one entry per task, a process pool bounded by the core count,
outcomes delivered in entry order whatever order the workers finish in.

The check itself is passed in (``kmc.api.check``) so that this package, like the rest of
reports/, never imports the front door: data flows kmc -> ... -> reports.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Callable

from kmc.reports.regress.expect import Expectation, Observation, compare, observe
from kmc.reports.regress.stored import check_stored, slug, trace_documents
from kmc.reports.regress.suite import Entry

PASS, FAIL, ERROR, NEW = "pass", "fail", "error", "new"


@dataclass
class Job:
    index: int
    entry: Entry
    traces_dir: str
    check: Callable  # kmc.api.check (picklable: a module-level function)
    update: bool = False
    out_dir: str | None = None
    #: what ``check`` raises for bad input (an entry's option the scenario does not
    #: take, a user model's own bug): the entry is an error, and its message is the
    #: exception's one line without the class name
    bad_input: tuple = ()
    #: called in a pool's worker after the entry (``kmc.api.stop_engines``: the JVM a
    #: Spark entry launched is stopped before the worker exits)
    after: Callable | None = None


@dataclass
class Outcome:
    index: int
    entry: Entry
    status: str  # pass | fail | error | new (no expectation recorded yet)
    got: Observation | None = None
    differences: list = field(default_factory=list)
    elapsed_s: float = 0.0  # wall time: the check plus the replays
    variant: str | None = None  # resolved (the scenario's default when the entry has none)
    error: str = ""
    traces: dict = field(default_factory=dict)  # update mode: property -> trace document
    report_dir: str | None = None
    bad_input: bool = False  # the error is the entry's (``Job.bad_input``), not a crash
    #: why the entry's ``--out`` report could not be written (nothing of it is left)
    report_error: str = ""

    @property
    def expected(self) -> Expectation | None:
        return self.entry.expect

    @property
    def ok(self) -> bool:
        return self.status == PASS


def run_entry(job: Job) -> Outcome:
    """Run one entry and compare it with its expectation. Never raises: a crash becomes
    an ``error`` outcome, so one broken model cannot hide the other entries."""
    e = job.entry
    t0 = time.perf_counter()
    out = Outcome(job.index, e, ERROR, variant=e.variant)
    try:
        result = job.check(e.scenario, e.variant, e.params, explorer=e.explorer,
                           **e.bounds, **e.options)
        out.variant = result.extra.get("variant", e.variant)
        out.got = observe(result)
        model = result.extra["model"]
        if e.expect is None:
            out.status = NEW
        else:
            out.differences = compare(e.expect, out.got) + check_stored(
                job.traces_dir, e.id, e.expect.violated, model)
            out.status = FAIL if out.differences else PASS
        if job.update:
            out.traces = trace_documents(result, sorted(out.got.violated))
        out.elapsed_s = time.perf_counter() - t0  # the report below is not the run's time
        if job.out_dir and out.status != PASS:
            try:
                out.report_dir = _failure_report(job.out_dir, e, result, out.differences)
            except OSError as ex:  # the verdict stands; the output could not be written
                out.report_error = (f"--out: the report of entry {e.id} could not be "
                                    f"written ({ex.filename or job.out_dir}: "
                                    f"{ex.strerror or ex}); the verdicts above stand: free "
                                    "that place or name another directory")
    except Exception as ex:  # reported per entry; the run goes on
        out.status = ERROR
        out.bad_input = isinstance(ex, job.bad_input)
        out.error = str(ex) if out.bad_input else f"{type(ex).__name__}: {ex}"
        out.elapsed_s = out.elapsed_s or time.perf_counter() - t0
    return out


def run_entries(jobs: list[Job], workers: int, on_outcome: Callable | None = None) -> list:
    """Run ``jobs`` on up to ``workers`` processes (capped by the core count); call
    ``on_outcome`` in entry order as soon as each outcome and all before it are known.

    A worker process that dies (killed by a signal, the kernel's out-of-memory killer)
    breaks the whole pool, and the pool cannot say which entry it was running: every
    entry the broken pool did not finish is run again, each in a process of its own,
    so only the entry that dies again there is an error."""
    workers = max(1, min(workers, os.cpu_count() or 1, len(jobs)))
    outcomes: list = []
    known: dict = {}

    def deliver(o):
        known[o.index] = o
        while len(outcomes) < len(jobs) and jobs[len(outcomes)].index in known:
            nxt = known.pop(jobs[len(outcomes)].index)
            outcomes.append(nxt)
            if on_outcome is not None:
                on_outcome(nxt)

    if workers == 1:  # in-process: no pickling, and tracebacks stay debuggable
        for j in jobs:
            deliver(run_entry(j))
        return outcomes
    lost = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [(j, pool.submit(_in_worker, j)) for j in jobs]
        for j, f in futures:  # in submission (entry) order
            try:
                deliver(f.result())
            except BrokenProcessPool:
                lost.append(j)
    for j in lost:
        deliver(_alone(j))
    return outcomes


def _in_worker(job: Job) -> Outcome:
    """``run_entry(job)`` in a pool's worker process, then ``job.after`` (what the entry
    left running goes with it: a worker leaves no process of its own behind)."""
    try:
        return run_entry(job)
    finally:
        if job.after is not None:
            job.after()


def _alone(job: Job) -> Outcome:
    """``run_entry(job)`` in a process of its own; an ``error`` outcome if that process
    dies before it answers."""
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(_in_worker, job).result()
        except BrokenProcessPool:
            return Outcome(job.index, job.entry, ERROR, variant=job.entry.variant,
                           elapsed_s=time.perf_counter() - t0,
                           error="the process running it died (killed by a signal, or "
                                 "out of memory)")


def _failure_report(out_dir: str, e: Entry, result, differences) -> str:
    """What a reviewer needs to look at a failing entry: traces, summary.json, the HTML
    report when reports.html exists, and the differences as text. A write that fails
    (or is interrupted) removes the report's files again, and the entry's directory if
    it was made for them, as ``kmc check --out`` does."""
    from kmc.reports.artifacts import clear_earlier_run, remove_run_files
    from kmc.reports.summary import write_summary, write_traces

    d = os.path.join(out_dir, slug(e.id))
    made = not os.path.isdir(d)
    os.makedirs(d, exist_ok=True)
    text = os.path.join(d, "regress.txt")
    try:
        clear_earlier_run(d)
        traces = write_traces(result, d)
        try:
            from kmc.reports.html import write_report
        except ImportError:  # the HTML report is optional
            pass
        else:
            write_report(result, d, traces)
        with open(text, "w") as f:
            f.write(f"entry {e.id}\n")
            f.writelines(f"- {line}\n" for line in differences or ["no expectation recorded"])
        write_summary(result, d, traces)  # last: it says the set is whole
    except BaseException:
        remove_run_files(d, result.properties)
        if os.path.isfile(text):
            os.remove(text)
        if made:
            try:
                os.rmdir(d)
            except OSError:
                pass  # something else is in it now
        raise
    return d
