"""What a worker process does: run entries of a suite (on the unmutated model or on one
mutant) and report what each run observed, with the digest of the states it reached
(``recorder.Recorder``).
"""
from __future__ import annotations

import importlib
import os
import time
import traceback
from contextlib import nullcontext

from kmc.model import memo
from kmc.mutate.outside_reads import MODEL
from kmc.mutate.outside_reads import Watch as OutsideWatch
from kmc.mutate.recorder import Recorder

#: memory a run of a mutant may add to its worker before the explorer stops it (bytes;
#: a worker starts with what it shares with the process that forked it)
RUN_MEMORY = 1536 * 1024 * 1024
#: address space a mutant's worker may add: past it, an allocation fails (MemoryError).
#: It stops a mutant whose states themselves grow without bound (a tuple that doubles
#: at every step) before the explorer's next look at its resident size
WORKER_ADDRESS_SPACE = RUN_MEMORY + 1024 * 1024 * 1024


def _build(entry):
    """The entry's scenario, resolved parameters and model, as ``kmc regress`` builds
    them."""
    api = importlib.import_module("kmc.api")
    catalog = importlib.import_module("kmc.catalog")
    info = catalog.load(entry.scenario, entry.variant, dict(entry.params))
    sc = info["scenario"]
    return api, sc, info, api.build_model(sc, info["variant"], info["params"])


def run_entry(entry, state_limit: int | None = None, tracer=None, graph=None,
              reuse=None, stall: float | None = None, first_violation: bool = False,
              traced=None) -> dict:
    """One suite entry, run the way ``kmc regress`` runs it (a Spark entry on BFS: same
    verdicts and counts), as a plain dict; an exception is recorded, not raised. With
    ``state_limit`` a BFS or DFS run stops after that many states (``stopped_by:
    max_states``); ``tracer`` and ``graph`` go to the ``Recorder``. With a ``tracer``
    (a baseline's run) it also gives what the set-up built (``image``:
    ``snapshot.setup_image``). ``reuse``: a function that takes the model's successor
    function and the model and gives the successor function to explore with
    (``reuse.reusing``). ``stall``: the
    most seconds one expansion may take (``stall.Watch``); past it the run ends as out
    of time. A baseline's run gives its slowest expansion (``slowest_expansion_s``).
    ``first_violation``: a BFS or DFS run stops once a property is violated (a BFS run
    at the end of the level that found it: ``stop_on_violation``). ``traced``: the real
    paths of the files the tracer follows; with it, the run watches the model object
    (``outside_reads.Watch``): a read of one of its attributes by other code goes to the
    tracer (``note_read``), and the run gives what was watched (``read_outside``)."""
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
        seen = None if traced is None else \
            OutsideWatch(model, traced, tracer.note_read if tracer is not None else None)
        if reuse is not None:
            model.successors = reuse(model.successors, model)
        explorer = "bfs" if entry.explorer == "spark" else entry.explorer
        recorder = None if getattr(model, "packed", None) else \
            Recorder(model, tracer, graph, None if stall is None else watch,
                     hashes=explorer != "bfs")
        opts = dict(entry.options)
        opts.setdefault("deadlock", sc.options.get("deadlock", False))
        if recorder is not None and explorer == "bfs":  # BFS digests its own keys
            opts["states_digest"] = True
        if explorer in ("bfs", "dfs"):
            from kmc.explorers.memory import resident_bytes

            if first_violation:
                opts["stop_on_violation"] = True
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
                "digest": _digest(recorder, result), "error": None,
                "elapsed": time.perf_counter() - t0,
                **({} if image is None else {"image": image}),
                **({} if seen is None else {"read_outside": seen.read()}),
                **({"slowest_expansion_s": recorder.slowest}
                   if tracer is not None and recorder else {})}
    except Stalled as e:
        return _stalled(e, t0)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {_one_line(str(e))}",
                "where": _where(e), "elapsed": time.perf_counter() - t0}


def _digest(recorder, result) -> str | None:
    """The run's digest of the states it reached (``recorder``'s module docstring)."""
    if recorder is None or not recorder.successor_calls:
        return None
    if recorder.hashes:
        return recorder.digest()
    given = result.extra.get("states_digest")  # None: not equivalent to anything
    return given[:32] if given else None


def _image(info, sc, model):
    """``snapshot.setup_image``, or ``snapshot.OPAQUE`` (equal to nothing: no set-up is
    ever taken as the baseline's) when the model's objects cannot be described."""
    snapshot = importlib.import_module("kmc.mutate.snapshot")
    try:
        return snapshot.setup_image(info, sc, model)
    except Exception:
        return snapshot.OPAQUE


def _stalled(e, t0: float) -> dict:
    """A run ended by ``stall.Watch``: out of time, as the whole time limit would have
    counted it, and where the expansion was stuck (the timer's own frame left out)."""
    tb = [f for f in traceback.extract_tb(e.__traceback__)
          if os.path.basename(f.filename) != "stall.py"]
    where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else ""
    return {"error": f"timeout: {e}", "where": where,
            "elapsed": time.perf_counter() - t0}


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
    and the modules of the classes in its states (``rebuild.class_modules``), and the
    invariants' answers on the graph's states (``answers.record``), with the code
    those answers called and the model's attributes they read (``answer_calls``).
    ``decorated``: file -> ``tracer.decorated_lines``. ``probed``: path -> its mutants'
    numbers by site: those files run with probes (``probes``), and each recorded
    expansion holds, besides the functions it called, the numbers of the mutants it
    infected; ``ever``: those the run infected anywhere (``probes.EVER``)."""
    memo.off()  # the recorder and the replay see every call of the model's code
    from kmc.mutate.isolation import install_unmutated
    from kmc.mutate.probes import EVER
    from kmc.mutate.rebuild import class_modules
    from kmc.mutate.graph import Graph
    from kmc.mutate.tracer import Tracer, tracked

    followed = [p for p, _text in served.values()]
    tracer = Tracer(files, followed, decorated)
    install_unmutated(served, probed, tracer)
    graph = Graph()
    EVER.clear()
    traced = frozenset(tracked(files, followed))
    with tracer:
        run = run_entry(entry, tracer=tracer, graph=graph, traced=traced)
    ever = sorted(EVER)
    image = run.pop("image", None)
    read_outside = run.pop("read_outside", None)
    frozen = graph.frozen() if graph.expanded else None
    answers, answer_calls = None, None
    if frozen is not None:
        from kmc.invariants.properties import SOMETIMES
        from kmc.mutate.answers import record
        try:
            model = _build(entry)[3]
            seen = OutsideWatch(model, traced)  # what the invariants' answers read
            with tracer.collecting() as called:  # and the code they call
                answers = (record(model, frozen[0]), record(model, frozen[0], SOMETIMES))
            answers = None if answers == (None, None) else answers
            got = seen.read()
            read_outside = _union(read_outside, got)
            answer_calls = None if got is None else \
                sorted(called | {(MODEL, name) for name in got[0]})
        except Exception:  # no answers: a mutant's run checks every state itself
            answers = None

    def pairs(calls):
        return sorted((f, n) for f, v in calls.items() for n in v)
    return {"run": run, "lines": {f: sorted(v) for f, v in tracer.lines.items()},
            "outside": pairs(tracer.outside), "at_setup": pairs(tracer.at_setup),
            "cached": pairs(tracer.cached),
            "image": image, "graph": frozen, "answers": answers, "ever": ever,
            "answer_calls": None if answers is None else answer_calls,
            "read_outside": read_outside,
            "classes": [sorted(x) for x in class_modules(frozen)] if frozen else [[], []]}


def _union(a, b):
    """Two ``Watch.read`` answers of one entry's models as one (None: one not watched);
    a name watched on one model only counts as unwatched."""
    if a is None or b is None:
        return None
    return sorted(set(a[0]) | set(b[0])), sorted(set(a[1]) & set(b[1]))


def namespace_task(served) -> dict:
    """Every module of ``served`` loaded afresh in this fresh process, as a baseline
    loads them: module -> its globals by value (``snapshot.namespace``). The memo tables
    are off, as in every worker: a memoised function closes over the switch, so with
    the tables on every one of them would differ from a mutant's and count as changed."""
    from kmc.mutate.isolation import install_unmutated
    from kmc.mutate.snapshot import namespace

    memo.off()
    install_unmutated(served)
    own = frozenset(served)
    mods = [importlib.import_module(name) for name in sorted(served)]
    return {m.__name__: namespace(m, own) for m in mods}


def mutant_task(mutant, source, snapshot, entries, baseline=None, limits=None,
                specs=None, reach=None, stalls=None, quiet=None) -> dict:
    """``entries`` on ``mutant`` of ``source`` (``snapshot``: the modules that import
    it, name -> (path, text)); loaded in this process for good. Given the ``baseline``
    runs, it stops after the first run that kills the mutant (``classify.decisive``),
    and a run whose baseline run violated no property stops at its first violation
    (``classify.clean``): that is already a kill.
    ``limits``: entry id -> the most states its run may reach. ``specs``: entry id ->
    ``replay.Spec`` for the entries the mutant may replay: a replay that matches is the
    baseline's run (``"replayed": true``). ``reach``: (the first line of the function
    whose body holds the mutant, or None; what ``replay.affected`` needs besides; the
    mutant's number in the baseline's probes, or None when its site had none).
    ``stalls``: entry id -> the most seconds one expansion of its run may take
    (``stall.Watch``). ``quiet``: entry id -> the baseline's run, for the entries in
    whose baseline run the mutant's probe never saw it give another value: each such
    run is the baseline's, wherever the mutant's code runs (``probes.EVER``).
    The answer's ``"how"``: entry id -> (how its run was decided, seconds it took), for
    measuring where a mutation run's time goes."""
    memo.off()  # the recorder and the replay see every call of the model's code
    from kmc.mutate.answers import Known
    from kmc.mutate.classify import clean, decisive
    from kmc.mutate.decide import (ANSWERS_HOLD, FULL, REUSE, SAME, SUCCESSORS, replays,
                                   set_up_readers, why_full)
    from kmc.mutate.isolation import install
    from kmc.mutate.replay import affected
    from kmc.mutate.reuse import reusing
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
    set_up = set_up_readers(reach[2] if reach else None)
    runs, hows = {}, {}
    for e in entries:
        t_run = time.perf_counter()
        if quiet and e.id in quiet:
            runs[e.id] = {**quiet[e.id], "replayed": True}
            hows[e.id] = ("quiet", time.perf_counter() - t_run)
            continue
        spec = (specs or {}).get(e.id)
        decided, how = FULL, why_full(spec, functions)
        if how is None:
            t = time.perf_counter()
            try:
                decided, run_touch, why = replays(e, spec, where, functions, touch,
                                                  (stalls or {}).get(e.id), set_up)
            except Stalled as x:  # a kill, as a crash is
                runs[e.id] = _stalled(x, t)
                hows[e.id] = ("stalled", time.perf_counter() - t_run)
                if baseline is not None:
                    break
                continue
            how = {SAME: "same", REUSE: "reuse",
                   SUCCESSORS: "reuse successors: called outside successors" +
                   (", answers recorded" if why == ANSWERS_HOLD else "")}.get(
                decided, f"full: set-up differs ({why})" if why != "raised"
                else "full: replay raised")
            if decided != FULL and run_touch != (touch if touch is not None else functions):
                how += ": set-up differs where the asked code reads"
        if decided == SAME:
            runs[e.id] = {**spec.run, "replayed": True}
            hows[e.id] = (how, time.perf_counter() - t_run)
            continue
        reuse, known = None, None
        if decided in (REUSE, SUCCESSORS):
            # the recorded keys hold only where no changed code runs outside the
            # successors; the answers also where the invariants never called it
            mine = decided == SUCCESSORS
            known = Known(*spec.answers) if spec.answers is not None and \
                (not mine or why == ANSWERS_HOLD) else None

            def reuse(succ, model, spec=spec, known=known, touch=run_touch, mine=mine):
                if not mine:
                    model.known_keys = spec.keys  # the recorded states' keys
                return reusing(succ, spec.graph, touch, spec.rebuild, known, model,
                               spec.values)
        # an exploration records nothing: the tables may answer, each filled by this
        # run alone (a table's key need not hold what the mutant's code reads of the
        # run's model, which no other run then shares)
        with memo.fresh(), known.installed() if known is not None else nullcontext():
            runs[e.id] = run_entry(e, (limits or {}).get(e.id), reuse=reuse,
                                   stall=(stalls or {}).get(e.id),
                                   first_violation=baseline is not None
                                   and clean(baseline[e.id]))
        hows[e.id] = (how, time.perf_counter() - t_run)
        if baseline is not None and decisive(baseline[e.id], runs[e.id]):
            break
    return {"runs": runs, "elapsed_s": time.perf_counter() - t0, "how": hows}


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
