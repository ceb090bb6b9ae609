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

#: memory a run of a mutant may add to its worker before the explorer stops it (bytes;
#: a worker starts with what it shares with the process that forked it)
RUN_MEMORY = 1536 * 1024 * 1024
#: address space a mutant's worker may add: past it, an allocation fails (MemoryError).
#: It stops a mutant whose states themselves grow without bound (a tuple that doubles
#: at every step) before the explorer's next look at its resident size
WORKER_ADDRESS_SPACE = RUN_MEMORY + 1024 * 1024 * 1024


class Recorder:
    """Wraps a model's ``init_states`` and ``successors`` to collect the fingerprints of
    the initial states and of the states whose successors are asked for; with a
    ``tracer``, tells it when the model computes successors; with a ``graph``
    (``replay.Graph``), records every expansion."""

    def __init__(self, model, tracer=None, graph=None):
        from kmc.model.encoding import fingerprint

        self.seen: set = set()
        self.successor_calls = 0
        init, succ, seen = model.init_states, model.successors, self.seen

        def init_states():
            out = list(init())
            seen.update(map(fingerprint, out))
            return out

        def inside(fn, *args):
            if tracer is None:
                return fn(*args)
            was, tracer.inside = tracer.inside, True
            try:
                return fn(*args)
            finally:
                tracer.inside = was

        expanding = []  # non-empty while the model computes successors

        def successors(s):
            self.successor_calls += 1
            fp = fingerprint(s)
            seen.add(fp)
            if tracer is not None:
                tracer.called = set()
            expanding.append(s)
            try:
                out = inside(succ, s)
            finally:
                expanding.pop()
            if graph is not None:
                graph.add(s, out, tracer and tracer.called)
            if tracer is not None:
                tracer.called = None
            return out

        model.init_states, model.successors = init_states, successors
        if graph is not None:  # a counterexample is rebuilt with actions and next_state
            actions, next_state = model.actions, model.next_state

            def recorded_actions(s):  # (successors may call them: part of the expansion)
                out = list(inside(actions, s))
                if not expanding:
                    graph.call("actions", s, (), out)
                return out

            def recorded_next_state(s, a):
                out = inside(next_state, s, a)
                if not expanding:
                    graph.call("next_state", s, (a,), out)
                return out

            model.actions, model.next_state = recorded_actions, recorded_next_state

    def digest(self) -> str | None:
        if not self.successor_calls:
            return None
        keys = np.sort(np.fromiter(self.seen, dtype=np.uint64, count=len(self.seen)))
        return hashlib.sha256(keys.tobytes()).hexdigest()[:32]


def _build(entry):
    """The entry's scenario, resolved parameters and model, as ``kmc regress`` builds
    them."""
    api = importlib.import_module("kmc.api")
    catalog = importlib.import_module("kmc.catalog")
    info = catalog.load(entry.scenario, entry.variant, dict(entry.params))
    sc = info["scenario"]
    return api, sc, info, api.build_model(sc, info["variant"], info["params"])


def run_entry(entry, state_limit: int | None = None, tracer=None, graph=None) -> dict:
    """One suite entry, run the way ``kmc regress`` runs it (a Spark entry on BFS: same
    verdicts and counts), as a plain dict; an exception is recorded, not raised. With
    ``state_limit`` a BFS or DFS run stops after that many states (``stopped_by:
    max_states``); ``tracer`` and ``graph`` go to the ``Recorder``."""
    t0 = time.perf_counter()
    try:
        observe = importlib.import_module("kmc.reports.regress.expect").observe
        api, sc, info, model = _build(entry)
        recorder = None if getattr(model, "packed", None) else \
            Recorder(model, tracer, graph)
        opts = dict(entry.options)
        opts.setdefault("deadlock", sc.options.get("deadlock", False))
        explorer = "bfs" if entry.explorer == "spark" else entry.explorer
        if explorer in ("bfs", "dfs"):
            from kmc.explorers.memory import resident_bytes

            opts["max_memory"] = (resident_bytes() or 0) + RUN_MEMORY
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


def replays(entry, graph, function=None, rebuild=()) -> bool:
    """Does the mutant loaded in this process give the states of the baseline's
    ``graph`` of ``entry`` that called ``function`` the recorded successors
    (``replay.same_graph``; ``rebuild``: the reloaded modules whose NamedTuples the
    states hold)? An exception is a no: the full run then records it."""
    from kmc.mutate.replay import same_graph

    try:
        return same_graph(_build(entry)[3], graph, function, rebuild)
    except Exception:
        return False


def _one_line(text: str) -> str:
    text = text.replace("\n", " ").strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _where(e: Exception) -> str:
    """file:line of the innermost frame, the place a mutant broke."""
    tb = traceback.extract_tb(e.__traceback__)
    return f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""


class LineTracer:
    """The lines of ``files`` executed while it is on (for the baseline); the functions
    called ``outside`` the model's successors (by their first line: the set-up,
    properties, symmetry), or from inside a decorated (cached) function, whose result
    may be reused where its lines do not run; and, for the Recorder, the functions
    ``called`` while the successors of one state are computed. A function whose every
    line has run is no longer traced line by line, so the cost falls to one callback
    per call once the hot code is covered."""

    def __init__(self, files):
        self.wanted = {os.path.realpath(f): f for f in files}
        self.lines: dict[str, set] = {f: set() for f in files}
        self.outside: dict[str, set] = {f: set() for f in files}
        self.inside = False  # set by the Recorder while the model computes successors
        #: while the Recorder asks the successors of one state: the functions called
        #: (file, first line)
        self.called: set | None = None
        self._cached_depth = 0  # decorated frames on the stack
        self._files: dict[str, str | None] = {}
        self._decorated: dict[str, frozenset] = {}  # file -> first lines of decorated defs
        #: code object -> lines of it not run yet (None: not a wanted file)
        self._todo: dict = {}

    def _file(self, code):
        name = code.co_filename
        f = self._files.get(name, 0)
        if f == 0:
            f = self._files[name] = self.wanted.get(os.path.realpath(name))
            if f is not None:
                self._decorated[f] = _decorated_lines(f)
        return f

    def _remaining(self, code):
        todo = self._todo.get(code, 0)
        if todo == 0:
            todo = None if self._file(code) is None else \
                {n for _o, n in dis.findlinestarts(code) if n is not None}
            self._todo[code] = todo
        return todo

    def __enter__(self):
        def call(frame, event, arg):
            code = frame.f_code
            f = self._file(code)
            if f is None:
                return None
            cached = code.co_firstlineno in self._decorated[f]
            if cached or self._cached_depth or not self.inside:
                self.outside[f].add(code.co_firstlineno)
            elif self.called is not None:
                self.called.add((f, code.co_firstlineno))
            todo = self._remaining(code)
            hits = self.lines[f]
            hits.add(frame.f_lineno)
            if cached:
                self._cached_depth += 1
            elif not todo:
                return None

            def local(frame, event, arg):
                if event == "line":
                    hits.add(frame.f_lineno)
                    todo.discard(frame.f_lineno)
                elif event == "return" and cached:
                    self._cached_depth -= 1
                return local
            return local
        sys.settrace(call)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)


def _decorated_lines(path: str) -> frozenset:
    """The first lines (decorator and ``def``) of every decorated function of ``path``:
    a cache such as ``lru_cache`` runs the body once and hands its result out later."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.decorator_list:
            out.add(node.lineno)
            out.update(d.lineno for d in node.decorator_list)
    return frozenset(out)


def baseline_task(entry, files, served) -> dict:
    """One entry on the unmutated model, loaded afresh from ``served`` (name -> (path,
    text): the mutated files and the modules that import them) in this fresh process,
    with the lines of ``files`` that ran, import-time code included. A mutant's worker
    runs the entry the same way, so a mutant whose line is not among them runs it exactly
    as the baseline did: its runs skip that entry. Also the functions called outside the
    model's successors (``LineTracer.outside``), the run's state graph (``replay``; None
    when too large) and the modules of the classes in its states (``replay.
    class_modules``)."""
    from kmc.mutate.isolation import install_unmutated
    from kmc.mutate.replay import Graph, class_modules

    install_unmutated(served)
    graph = Graph()
    with LineTracer(files) as tracer:
        run = run_entry(entry, tracer=tracer, graph=graph)
    frozen = graph.frozen() if graph.expanded else None
    return {"run": run, "lines": {f: sorted(v) for f, v in tracer.lines.items()},
            "outside": {f: sorted(v) for f, v in tracer.outside.items()},
            "graph": frozen,
            "classes": [sorted(x) for x in class_modules(frozen)] if frozen else [[], []]}


def mutant_task(mutant, source, snapshot, entries, baseline=None, limits=None,
                graphs=None, function=None) -> dict:
    """``entries`` on ``mutant`` of ``source`` (``snapshot``: the modules that import
    it, name -> (path, text)); loaded in this process for good. Given the ``baseline``
    runs, it stops after the first run that kills the mutant (``classify.decisive``).
    ``limits``: entry id -> the most states its run may reach. ``graphs``: entry id ->
    (the baseline's state graph, its run, the reloaded modules whose NamedTuples its
    states hold) for the entries the mutant may replay (``replay``): a replay that
    matches is the baseline's run (``"replayed": true``). ``function``: (file, first
    line) of the function holding the mutant."""
    from kmc.mutate.classify import decisive
    from kmc.mutate.isolation import install

    t0 = time.perf_counter()
    _limit_address_space(WORKER_ADDRESS_SPACE)
    try:
        install(mutant, source, snapshot)
    except (LookupError, SyntaxError, ValueError, TypeError) as e:
        return {"load_error": f"{type(e).__name__}: {e}"}
    runs = {}
    for e in entries:
        graph, base_run, rebuild = (graphs or {}).get(e.id, (None, None, ()))
        if graph is not None and replays(e, graph, function, rebuild):
            runs[e.id] = {**base_run, "replayed": True}
            continue
        runs[e.id] = run_entry(e, (limits or {}).get(e.id))
        if baseline is not None and decisive(baseline[e.id], runs[e.id]):
            break
    return {"runs": runs, "elapsed_s": time.perf_counter() - t0}


def _limit_address_space(extra: int) -> None:
    """Let this process map at most ``extra`` bytes more than it has now (Linux; a no-op
    where the size cannot be read)."""
    try:
        import resource

        with open("/proc/self/statm", "rb") as f:
            size = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (size + extra, resource.RLIM_INFINITY))
    except (ImportError, OSError, ValueError, IndexError):
        pass
