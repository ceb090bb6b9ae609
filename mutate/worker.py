"""What a worker process does: run entries of a suite (on the unmutated model or on one
mutant) and report what each run observed.

Each run records a digest of the states it reached: a hash of the sorted hashes of every
initial state and every state the explorer expanded (asked the successors of). A
complete run expands every state it reaches, so two complete runs with the same digest
reached the same set of states, and a mutant with the baseline's digest on every run is
probably equivalent. A state's hash is Python's (equal states, equal hashes; every
worker is forked from one process, so all share its hash seed), a tenth of the cost of
its printed form on kmc's models; a state with an unhashable part is hashed by its
printed form. Compiled (packed) models generate successors in code the recorder
does not see: their runs have no digest and their mutants are never called equivalent.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import time
import traceback
from contextlib import nullcontext

import numpy as np

#: memory a run of a mutant may add to its worker before the explorer stops it (bytes;
#: a worker starts with what it shares with the process that forked it)
RUN_MEMORY = 1536 * 1024 * 1024
#: address space a mutant's worker may add: past it, an allocation fails (MemoryError).
#: It stops a mutant whose states themselves grow without bound (a tuple that doubles
#: at every step) before the explorer's next look at its resident size
WORKER_ADDRESS_SPACE = RUN_MEMORY + 1024 * 1024 * 1024


class Recorder:
    """Wraps a model's ``init_states`` and ``successors`` to collect the hashes of
    the initial states and of the states whose successors are asked for; with a
    ``tracer`` (``tracer.LineTracer``), tells it when the model computes successors and
    when the explorer asks for what the set-up built (initial states, action names),
    and adds to the functions each expansion called the mutants its probes saw infected
    (``probes.SINK``); with a ``graph`` (``replay.Graph``), records every expansion."""

    def __init__(self, model, tracer=None, graph=None, watch=None):
        from kmc.mutate.probes import SINK as sink

        self.seen: set = set()
        self.successor_calls = 0
        #: the longest one expansion took (seconds; timed with a ``tracer`` only)
        self.slowest = 0.0
        init, succ, seen = model.init_states, model.successors, self.seen

        def init_states():  # set-up: what it gives is part of the set-up image
            out = list(setup(init))
            seen.update(map(_state_hash, out))
            return out

        def setup(fn, *args):
            if tracer is None:
                return fn(*args)
            with tracer.phase(True):
                return fn(*args)

        if tracer is not None:
            names = model.action_names
            model.action_names = lambda: setup(names)

        def inside(fn, *args):
            if tracer is None:
                return fn(*args)
            was, tracer.inside = tracer.inside, True
            try:
                return fn(*args)
            finally:
                tracer.inside = was

        expanding = []  # non-empty while the model computes successors

        def start():  # an expansion or a question begins: what it calls is its own
            if tracer is not None:
                tracer.called = set()
                sink.clear()

        def infected():  # ... and it infected the mutants its probes saw differ
            if tracer is not None and tracer.called is not None:
                tracer.called |= sink  # (None: a nested expansion, every function counts)

        def successors(s):
            self.successor_calls += 1
            seen.add(_state_hash(s))
            start()
            expanding.append(s)
            if watch is not None:
                watch.begin()
            t0 = time.perf_counter() if tracer is not None else 0.0
            try:
                out = inside(succ, s)
            finally:
                expanding.pop()
                if watch is not None:
                    watch.end()
            if tracer is not None:
                self.slowest = max(self.slowest, time.perf_counter() - t0)
            infected()
            if graph is not None:
                graph.add(s, out, tracer and tracer.called)
            if tracer is not None:
                tracer.called = None
            return out

        model.init_states, model.successors = init_states, successors
        if graph is not None:  # a counterexample is rebuilt with actions and next_state
            actions, next_state = model.actions, model.next_state

            def asked(method, fn, s, *args):
                """A question outside an expansion, recorded with the functions it
                called; successors may ask it too, as part of their expansion."""
                if expanding:
                    return inside(fn, s, *args)
                start()
                try:
                    out = inside(fn, s, *args)
                    if method == "actions":
                        out = list(out)
                    infected()
                    graph.call(method, s, args, out, tracer and tracer.called)
                finally:
                    if tracer is not None:
                        tracer.called = None
                return out

            def recorded_actions(s):
                return asked("actions", actions, s)

            def recorded_next_state(s, a):
                return asked("next_state", next_state, s, a)

            # a property's question (``enabled``) is asked afresh, and recorded
            model.actions, model.next_state = recorded_actions, recorded_next_state
            model.enabled = recorded_actions

    def digest(self) -> str | None:
        if not self.successor_calls:
            return None
        keys = np.sort(np.fromiter(self.seen, dtype=np.uint64, count=len(self.seen)))
        return hashlib.sha256(keys.tobytes()).hexdigest()[:32]


def _state_hash(s) -> int:
    """A state's hash as an unsigned 64-bit number (the module docstring)."""
    try:
        return hash(s) & 0xFFFF_FFFF_FFFF_FFFF
    except TypeError:  # an unhashable part (a list, a dict)
        from kmc.model.encoding import fingerprint

        return fingerprint(s)


def _build(entry):
    """The entry's scenario, resolved parameters and model, as ``kmc regress`` builds
    them."""
    api = importlib.import_module("kmc.api")
    catalog = importlib.import_module("kmc.catalog")
    info = catalog.load(entry.scenario, entry.variant, dict(entry.params))
    sc = info["scenario"]
    return api, sc, info, api.build_model(sc, info["variant"], info["params"])


def run_entry(entry, state_limit: int | None = None, tracer=None, graph=None,
              reuse=None, stall: float | None = None) -> dict:
    """One suite entry, run the way ``kmc regress`` runs it (a Spark entry on BFS: same
    verdicts and counts), as a plain dict; an exception is recorded, not raised. With
    ``state_limit`` a BFS or DFS run stops after that many states (``stopped_by:
    max_states``); ``tracer`` and ``graph`` go to the ``Recorder``. With a ``tracer``
    (a baseline's run) it also gives what the set-up built (``image``:
    ``snapshot.setup_image``). ``reuse``: a function that takes the model's successor
    function and gives the one to explore with (``replay.reusing``). ``stall``: the
    most seconds one expansion may take (``stall.Watch``); past it the run ends as out
    of time. A baseline's run gives its slowest expansion (``slowest_expansion_s``)."""
    from kmc.mutate.stall import Stalled, Watch

    t0 = time.perf_counter()
    image = None
    watch = Watch(stall)
    try:
        observe = importlib.import_module("kmc.reports.regress.expect").observe
        if tracer is None:
            api, sc, info, model = _build(entry)
        else:  # the baseline: the set-up's calls and what it built
            with tracer.phase(True):
                api, sc, info, model = _build(entry)
                image = _image(info, sc, model)
        if reuse is not None:
            model.successors = reuse(model.successors)
        recorder = None if getattr(model, "packed", None) else \
            Recorder(model, tracer, graph, None if stall is None else watch)
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
        with watch:
            result = api.check(model, explorer=explorer, **bounds, **opts)
        obs = observe(result)
        return {"violated": dict(obs.violated), "witnesses": list(obs.witnesses),
                "states": obs.states, "complete": obs.complete,
                "stopped_by": obs.stopped_by,
                "digest": recorder.digest() if recorder else None, "error": None,
                "elapsed": time.perf_counter() - t0,
                **({} if image is None else {"image": image}),
                **({"slowest_expansion_s": recorder.slowest}
                   if tracer is not None and recorder else {})}
    except Stalled as e:
        return _stalled(e, t0)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {_one_line(str(e))}",
                "where": _where(e), "elapsed": time.perf_counter() - t0}


def _image(info, sc, model):
    """``snapshot.setup_image``, or ``snapshot.OPAQUE`` (equal to nothing: no set-up is
    ever taken as the baseline's) when the model's objects cannot be described."""
    snapshot = importlib.import_module("kmc.mutate.snapshot")
    try:
        return snapshot.setup_image(info, sc, model)
    except Exception:
        return snapshot.OPAQUE


#: what a replay decides about a run: it is the baseline's run; the run is explored,
#: reusing the recorded successors the mutant cannot have changed; explored in full
SAME, REUSE, FULL = "same", "reuse", "full"


def _stalled(e, t0: float) -> dict:
    """A run ended by ``stall.Watch``: out of time, as the whole time limit would have
    counted it, and where the expansion was stuck (the timer's own frame left out)."""
    tb = [f for f in traceback.extract_tb(e.__traceback__)
          if os.path.basename(f.filename) != "stall.py"]
    where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return {"error": f"timeout: {e}", "where": where,
            "elapsed": time.perf_counter() - t0}


def replays(entry, spec, where, functions, touch=None, stall=None) -> str:
    """Is the mutant loaded in this process the baseline's run on ``entry``, by
    ``spec`` (``replay.Spec``: the baseline's graph of it and what its set-up built)?
    ``SAME`` when it is; ``REUSE`` when the set-up built what the baseline's did but a
    successor or a question got another answer (the run is explored with
    ``replay.reusing``); ``FULL`` when the set-up differs (the model may read what it
    built in any state) or the replay raised (the full run then records it).
    ``functions``: the code, as (file, first line), through which the mutant can change
    the run (``replay.affected``); ``where``: the first line of the function whose body
    holds the mutant, None outside any function's body; ``touch``: what marks a recorded
    expansion as one the mutant may change (``replay.untouched``; default
    ``functions``). ``stall``: the most seconds the model may take to answer one
    recorded state (``stall.Watch``); past it ``stall.Stalled`` is raised."""
    from kmc.mutate.replay import same_graph, set_up_matters
    from kmc.mutate.snapshot import setup_image
    from kmc.mutate.stall import Watch

    try:
        api, sc, info, model = _build(entry)
        if set_up_matters(spec, where, functions) and \
                setup_image(info, sc, model) != spec.image:
            return FULL
        watch = Watch(stall)
        with watch:
            same = same_graph(watch.wrap(model), spec.graph, touch or functions,
                              spec.rebuild)
        return SAME if same else REUSE
    except Exception:
        return FULL


def _one_line(text: str) -> str:
    text = text.replace("\n", " ").strip()
    return text if len(text) <= 200 else text[:197] + "..."


def _where(e: Exception) -> str:
    """file:line of the innermost frame, the place a mutant broke."""
    tb = traceback.extract_tb(e.__traceback__)
    return f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""


def baseline_task(entry, files, served, decorated=None, probed=None) -> dict:
    """One entry on the unmutated model, loaded afresh from ``served`` (name -> (path,
    text): the mutated files and the modules that import them) in this fresh process,
    with the lines of ``files`` that ran, import-time code included. A mutant's worker
    runs the entry the same way, so a mutant whose line is not among them runs it exactly
    as the baseline did: its runs skip that entry. Also where the functions of
    ``served`` were called from (``tracer``: set-up, outside), what the set-up built
    (``snapshot.setup_image``), the run's state graph (``replay``; None when too large)
    and the modules of the classes in its states (``replay.class_modules``), and the
    invariants' answers on the graph's states (``answers.record``).
    ``decorated``: file -> ``tracer.decorated_lines``. ``probed``: path -> its mutants'
    numbers by site: those files run with probes (``probes``), and each recorded
    expansion holds, besides the functions it called, the numbers of the mutants it
    infected."""
    from kmc.mutate.isolation import install_unmutated
    from kmc.mutate.replay import Graph, class_modules
    from kmc.mutate.tracer import LineTracer

    install_unmutated(served, probed)
    graph = Graph()
    with LineTracer(files, [p for p, _text in served.values()], decorated) as tracer:
        run = run_entry(entry, tracer=tracer, graph=graph)
    image = run.pop("image", None)
    frozen = graph.frozen() if graph.expanded else None
    answers = None
    if frozen is not None:
        from kmc.mutate.answers import record
        try:
            answers = record(_build(entry)[3], frozen[0])
        except Exception:  # no answers: a mutant's run checks every state itself
            answers = None

    def pairs(calls):
        return sorted((f, n) for f, v in calls.items() for n in v)
    return {"run": run, "lines": {f: sorted(v) for f, v in tracer.lines.items()},
            "outside": pairs(tracer.outside), "at_setup": pairs(tracer.at_setup),
            "image": image, "graph": frozen, "answers": answers,
            "classes": [sorted(x) for x in class_modules(frozen)] if frozen else [[], []]}


def namespace_task(served) -> dict:
    """Every module of ``served`` loaded afresh in this fresh process, as a baseline
    loads them: module -> its globals by value (``snapshot.namespace``)."""
    from kmc.mutate.isolation import install_unmutated
    from kmc.mutate.snapshot import namespace

    install_unmutated(served)
    own = frozenset(served)
    mods = [importlib.import_module(name) for name in sorted(served)]
    return {m.__name__: namespace(m, own) for m in mods}


def mutant_task(mutant, source, snapshot, entries, baseline=None, limits=None,
                specs=None, reach=None, stalls=None) -> dict:
    """``entries`` on ``mutant`` of ``source`` (``snapshot``: the modules that import
    it, name -> (path, text)); loaded in this process for good. Given the ``baseline``
    runs, it stops after the first run that kills the mutant (``classify.decisive``).
    ``limits``: entry id -> the most states its run may reach. ``specs``: entry id ->
    ``replay.Spec`` for the entries the mutant may replay: a replay that matches is the
    baseline's run (``"replayed": true``). ``reach``: (the first line of the function
    whose body holds the mutant, or None; what ``replay.affected`` needs besides; the
    mutant's number in the baseline's probes, or None when its site had none).
    ``stalls``: entry id -> the most seconds one expansion of its run may take
    (``stall.Watch``)."""
    from kmc.mutate.answers import Known
    from kmc.mutate.classify import decisive
    from kmc.mutate.isolation import install
    from kmc.mutate.replay import affected, reusing
    from kmc.mutate.stall import Stalled

    t0 = time.perf_counter()
    _limit_address_space(WORKER_ADDRESS_SPACE)
    try:
        install(mutant, source, snapshot)
    except (LookupError, SyntaxError, ValueError, TypeError) as e:
        return {"load_error": f"{type(e).__name__}: {e}"}
    where = reach[0] if reach else None  # the mutated function's first line, if any
    try:
        functions = affected(mutant, snapshot, *reach[:3]) if specs else None
    except Exception:  # what cannot be told is explored
        functions = None
    # a probed mutant inside a function changes only the expansions it infected
    number = reach[3] if reach else None
    touch = {number} if functions is not None and where is not None \
        and number is not None else functions
    runs = {}
    for e in entries:
        spec = (specs or {}).get(e.id)
        decided = FULL
        if spec is not None and functions is not None and \
                functions.isdisjoint(spec.outside):
            t = time.perf_counter()
            try:
                decided = replays(e, spec, where, functions, touch,
                                  (stalls or {}).get(e.id))
            except Stalled as x:  # a kill, as a crash is
                runs[e.id] = _stalled(x, t)
                if baseline is not None:
                    break
                continue
        if decided == SAME:
            runs[e.id] = {**spec.run, "replayed": True}
            continue
        reuse, known = None, None
        if decided == REUSE:
            known = Known(spec.answers) if spec.answers is not None else None

            def reuse(succ, spec=spec, known=known):
                return reusing(succ, spec.graph, touch, spec.rebuild, known)
        with known.installed() if known is not None else nullcontext():
            runs[e.id] = run_entry(e, (limits or {}).get(e.id), reuse=reuse,
                                   stall=(stalls or {}).get(e.id))
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
