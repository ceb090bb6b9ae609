"""How a mutant's run is decided before anything is explored: replayed as the
baseline's run, explored with the recorded successors, or explored in full, and why."""
from __future__ import annotations

#: what a replay decides about a run: it is the baseline's run; the run is explored,
#: reusing the recorded successors the mutant cannot have changed; explored in full
SAME, REUSE, FULL = "same", "reuse", "full"
#: explored reusing the recorded successors the mutant cannot have changed, every
#: state's key and answers its own: the changed code also runs outside the successors
#: (a property, the explorer asking the model whether an action is a fault), so any
#: state may answer otherwise, and no replay can tell the run is the baseline's
SUCCESSORS = "successors"
#: why a ``SUCCESSORS`` run may still take the recorded invariants' answers: they never
#: called the changed code nor read what the set-up built otherwise
ANSWERS_HOLD = "answers hold"


def replays(entry, spec, where, functions, touch=None, stall=None, set_up=None) -> tuple:
    """Is the mutant loaded in this process the baseline's run on ``entry``, by
    ``spec`` (``replay.Spec``: the baseline's graph of it and what its set-up built)?
    ``SAME`` when it is; ``REUSE`` when a successor or a question got another answer
    (the run is explored with ``reuse.reusing``); ``FULL`` when the set-up differs
    where ``set_up`` cannot follow the difference (the fair actions count only where
    the mutant's model checks a liveness property, ``snapshot.same_set_up``) or the
    replay raised (the full run then records it); ``SUCCESSORS``, without a replay, when
    code outside the successors calls the changed code (``spec.outside``), unless a
    cached function does (``FULL``: its answer may be handed out where its lines do not
    run). Returned with the ``touch`` the run was decided by and, for ``FULL``, why
    (the part of the set-up that differs, or ``"raised"``); for ``SUCCESSORS``,
    ``ANSWERS_HOLD`` when the recorded answers never called the changed code
    (``spec.answer_calls``); else None.
    ``functions``: the code, as (file, first line), through which the mutant can change
    the run (``replay.affected``); ``where``: the first line of the function whose body
    holds the mutant, None outside any function's body; ``touch``: what marks a recorded
    expansion as one the mutant may change (``steps.untouched``; default
    ``functions``). ``stall``: the most seconds the model may take to answer one
    recorded state (``stall.Watch``); past it ``stall.Stalled`` is raised.
    ``set_up``: ``(differences, model, what the baseline's run read outside) -> the
    code that can read them`` (``set_up_readers``; None: not known). A set-up that
    built another model only in values that code reads is replayed as if that code
    had changed (added to ``touch``)."""
    from kmc.invariants.liveness import split
    from kmc.model import memo
    from kmc.mutate.replay import same_graph, set_up_matters
    from kmc.mutate.setup_reads import differences
    from kmc.mutate.snapshot import same_set_up, setup_image
    from kmc.mutate.stall import Watch
    from kmc.mutate.steps import by_states
    from kmc.mutate.worker import _build

    touch = functions if touch is None else touch
    outside = not functions.isdisjoint(spec.outside)
    changed = functions
    try:
        api, sc, info, model = _build(entry)
        if set_up_matters(spec, where, functions):
            image, fair = setup_image(info, sc, model), bool(split(model.properties())[1])
            if not same_set_up(image, spec.image, fairness_read=fair):
                diff = differences(image, spec.image, fair) if set_up else None
                if not (diff and diff.paths):
                    return FULL, touch, _unlike(image, spec.image)
                extra = set_up(diff, model, spec.read_outside)
                if extra is None:
                    return FULL, touch, "a name kmc reads"
                if not extra.isdisjoint(spec.cached):
                    return FULL, touch, "read by a cached function"
                outside = outside or not extra.isdisjoint(spec.outside)
                touch, changed = touch | extra, changed | extra
        if outside:  # the keys and answers are the mutant's: no replay decides the run
            held = spec.answer_calls is not None and changed.isdisjoint(spec.answer_calls)
            return SUCCESSORS, touch, ANSWERS_HOLD if held else None
        watch = Watch(stall)
        # the set-up was compared with the tables off, as the baseline built it; the
        # replay's answers come from tables that this replay alone fills
        with watch, memo.fresh():
            same = same_graph(watch.wrap(model), spec.graph, touch,
                              spec.rebuild, by_states(entry.explorer, model))
        return (SAME if same else REUSE), touch, None
    except Exception:
        return FULL, touch, "raised"


def _unlike(image, baseline) -> str:
    """Which part of two set-ups (``snapshot.setup_image``) differs: the first of
    those ``setup_reads.differences`` cannot follow, else the model object."""
    parts = ("initial states", "fair actions", "options", "variant or bounds")
    if isinstance(image, tuple) and isinstance(baseline, tuple) and len(image) == len(baseline):
        for name, a, b in zip(parts, image[1:], baseline[1:]):
            if a != b:
                return name
        return "model"
    return "not described"


def set_up_readers(tracked):
    """``(differences, model, outside=None) -> the code that can read them``
    (``setup_reads.readers``; ``outside``: ``replay.Spec.read_outside``) over the
    modules the tracer follows (``tracked``: real path -> file name there)."""
    if tracked is None:
        return None

    known: dict = {}  # the entries of one mutant mostly differ alike

    def readers(diff, model, outside=None):
        from kmc.mutate.setup_reads import model_modules
        from kmc.mutate.setup_reads import readers as found

        roots = model_modules(model)
        key = (tuple(diff.paths), frozenset(diff.fields.items()),
               tuple(m.__name__ for m in roots), outside)
        if key not in known:
            known[key] = found(diff, tracked, roots, outside)
        return known[key]
    return readers


def why_full(spec, functions):
    """Why a run must be explored rather than replayed, before its set-up is built; None
    when a replay may decide it."""
    if spec is None:  # specs.replay_spec: which of its reasons is not told here
        return "full: no replay (graph, class or code a cached function calls)"
    if functions is None:
        return "full: changed code not told"
    if not functions.isdisjoint(spec.cached):
        return "full: called by a cached function"
    return None


