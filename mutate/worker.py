"""What a worker process does: run entries of a suite (on the unmutated model or on one
mutant) and report what each run observed.

Each run records a digest of the states it reached: a hash of the sorted fingerprints of
every initial state and every state the explorer expanded (asked the successors of). A
complete run expands every state it reaches, so two complete runs with the same digest
reached the same set of states, and a mutant with the baseline's digest on every run is
probably equivalent. Compiled (packed) models generate successors in code the recorder
does not see: their runs have no digest and their mutants are never called equivalent.
"""
from __future__ import annotations

import dis
import hashlib
import importlib
import os
import sys
import time
import traceback

import numpy as np

#: memory a run of a mutant may take before the explorer stops it (bytes)
RUN_MEMORY = 1536 * 1024 * 1024


class Recorder:
    """Wraps a model's ``init_states`` and ``successors`` to collect the fingerprints of
    the initial states and of the states whose successors are asked for."""

    def __init__(self, model):
        from kmc.model.encoding import fingerprint

        self.seen: set = set()
        self.successor_calls = 0
        init, succ, seen = model.init_states, model.successors, self.seen

        def init_states():
            out = list(init())
            seen.update(map(fingerprint, out))
            return out

        def successors(s):
            self.successor_calls += 1
            seen.add(fingerprint(s))
            return succ(s)

        model.init_states, model.successors = init_states, successors

    def digest(self) -> str | None:
        if not self.successor_calls:
            return None
        keys = np.sort(np.fromiter(self.seen, dtype=np.uint64, count=len(self.seen)))
        return hashlib.sha256(keys.tobytes()).hexdigest()[:32]


def run_entry(entry, state_limit: int | None = None) -> dict:
    """One suite entry, run the way ``kmc regress`` runs it (a Spark entry on BFS: same
    verdicts and counts), as a plain dict; an exception is recorded, not raised. With
    ``state_limit`` a BFS or DFS run stops after that many states (``stopped_by:
    max_states``)."""
    t0 = time.perf_counter()
    try:
        api = importlib.import_module("kmc.api")
        catalog = importlib.import_module("kmc.catalog")
        observe = importlib.import_module("kmc.reports.regress.expect").observe
        info = catalog.load(entry.scenario, entry.variant, dict(entry.params))
        sc = info["scenario"]
        model = api.build_model(sc, info["variant"], info["params"])
        recorder = None if getattr(model, "packed", None) else Recorder(model)
        opts = dict(entry.options)
        opts.setdefault("deadlock", sc.options.get("deadlock", False))
        explorer = "bfs" if entry.explorer == "spark" else entry.explorer
        if explorer in ("bfs", "dfs"):
            opts["max_memory"] = RUN_MEMORY
        bounds = {**info["bounds"], **entry.bounds}
        if state_limit is not None and explorer in ("bfs", "dfs"):
            own = bounds.get("max_states")
            bounds["max_states"] = state_limit if own is None else min(own, state_limit)
        result = api.check(model, explorer=explorer, **bounds, **opts)
        obs = observe(result)
        return {"violated": dict(obs.violated), "witnesses": list(obs.witnesses),
                "states": obs.states, "complete": obs.complete,
                "stopped_by": obs.stopped_by,
                "digest": recorder.digest() if recorder else None, "error": None,
                "elapsed": time.perf_counter() - t0}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {_one_line(str(e))}",
                "where": _where(e), "elapsed": time.perf_counter() - t0}


def _one_line(text: str) -> str:
    text = text.replace("\n", " ").strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _where(e: Exception) -> str:
    """file:line of the innermost frame, the place a mutant broke."""
    tb = traceback.extract_tb(e.__traceback__)
    return f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""


class LineTracer:
    """The lines of ``files`` executed while it is on (for the baseline). A function
    whose every line has run is no longer traced, so the cost falls to one callback per
    call once the hot code is covered."""

    def __init__(self, files):
        self.wanted = {os.path.realpath(f): f for f in files}
        self.lines: dict[str, set] = {f: set() for f in files}
        self._files: dict[str, str | None] = {}
        #: code object -> lines of it not run yet (None: not a wanted file)
        self._todo: dict = {}

    def _remaining(self, code):
        todo = self._todo.get(code, 0)
        if todo == 0:
            name = code.co_filename
            f = self._files.get(name, 0)
            if f == 0:
                f = self._files[name] = self.wanted.get(os.path.realpath(name))
            todo = None if f is None else \
                {n for _o, n in dis.findlinestarts(code) if n is not None}
            self._todo[code] = todo
        return todo

    def __enter__(self):
        def call(frame, event, arg):
            code = frame.f_code
            todo = self._remaining(code)
            if todo is None:
                return None
            hits = self.lines[self._files[code.co_filename]]
            hits.add(frame.f_lineno)
            if not todo:
                return None

            def local(frame, event, arg):
                if event == "line":
                    hits.add(frame.f_lineno)
                    todo.discard(frame.f_lineno)
                return local
            return local
        sys.settrace(call)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)


def baseline_task(entry, files, served) -> dict:
    """One entry on the unmutated model, loaded afresh from ``served`` (name -> (path,
    text): the mutated files and the modules that import them) in this fresh process,
    with the lines of ``files`` that ran, import-time code included. A mutant's worker
    runs the entry the same way, so a mutant whose line is not among them runs it exactly
    as the baseline did: its runs skip that entry."""
    from kmc.mutate.isolation import install_unmutated

    install_unmutated(served)
    with LineTracer(files) as tracer:
        run = run_entry(entry)
    return {"run": run, "lines": {f: sorted(v) for f, v in tracer.lines.items()}}


def mutant_task(mutant, source, snapshot, entries, baseline=None, limits=None) -> dict:
    """``entries`` on ``mutant`` of ``source`` (``snapshot``: the modules that import
    it, name -> (path, text)); loaded in this process for good. Given the ``baseline``
    runs, it stops after the first run that kills the mutant (``classify.decisive``).
    ``limits``: entry id -> the most states its run may reach."""
    from kmc.mutate.classify import decisive
    from kmc.mutate.isolation import install

    t0 = time.perf_counter()
    try:
        install(mutant, source, snapshot)
    except (LookupError, SyntaxError, ValueError, TypeError) as e:
        return {"load_error": f"{type(e).__name__}: {e}"}
    runs = {}
    for e in entries:
        runs[e.id] = run_entry(e, (limits or {}).get(e.id))
        if baseline is not None and decisive(baseline[e.id], runs[e.id]):
            break
    return {"runs": runs, "elapsed_s": time.perf_counter() - t0}
