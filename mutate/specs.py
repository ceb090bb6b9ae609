"""What a mutant's worker gets to replay the baseline's run of one entry
(``replay.Spec``): the recorded graph and what the baseline noted about it, or nothing
where no replay may decide the run."""
from __future__ import annotations

from kmc.mutate.replay import Spec
from kmc.mutate.reuse import by_value, keys_by_id


def replay_spec(plan, base: dict, m, e, where):
    """What ``m``'s worker needs to replay the baseline's run of ``e`` (``replay.Spec``),
    or None when it may not: the run did not record its graph, an object of its states
    has a class the mutant reloads that a replay cannot rebuild
    (``rebuild.Rebuild``), or the function holding ``m`` was called by or inside a
    cached function, whose answer may be handed out where its lines do not run
    (``where``: its first line, None outside any function's body). The worker decides
    the rest (``replay.affected``, ``decide``)."""
    if e.id not in base["graphs"]:
        return None
    reloaded = reloads(plan, m)
    if reloaded & base["fixed_classes"][e.id]:
        return None
    if where is not None:
        if (m.path, where) in base["cached"][e.id]:
            return None
    elif base["namespaces"] is None:  # outside any function's body: replay.affected
        return None
    values = base.setdefault("values", {})  # built once per graph, shared by the workers
    if e.id not in values:
        graph = base["graphs"][e.id]
        values[e.id] = (by_value(graph), keys_by_id(graph))
    return Spec(base["graphs"][e.id], base["runs"][e.id],
                frozenset(reloaded & base["rebuilt_classes"][e.id]), base["images"][e.id],
                base["outside"][e.id], base["at_setup"][e.id],
                base["answers"].get(e.id), values[e.id][0],
                base.get("read_outside", {}).get(e.id), keys=values[e.id][1],
                cached=base["cached"][e.id],
                answer_calls=base.get("answer_calls", {}).get(e.id))


def reloads(plan, m) -> set:
    """The modules a worker loads again for ``m``: its own and those importing it."""
    return {m.module} | set(plan.snapshots[m.module])
