"""The functions Spark runs on executors, wrapped around ``level.expand``/``level.dedup``.

Records are (partition id, tagged tuple). A partition of the state RDD holds one block
("B", visited keys, frontier keys, frontier states); a level emits candidate batches
("C", keys, parents, states) keyed by their owner, and per-partition stats ("X", ...) that
ride along to the owner stage so one collect returns everything the driver needs.
"""
from __future__ import annotations

import gc
import pickle

from explorers.spark import level

# Loaded Cores per worker process, by broadcast id. Python workers are reused across tasks
# (spark.python.worker.reuse), so the model is unpickled once per process, not per task.
# It is a cache of an immutable object, not exploration state.
_CORES: dict = {}


def core_of(core_bc):
    # on a worker a Broadcast is known by the file it was loaded from
    ident = getattr(core_bc, "_path", None) or id(core_bc)
    c = _CORES.get(ident)
    if c is None:
        while len(_CORES) >= 4:  # one context may serve many checks (tests, notebooks)
            _CORES.pop(next(iter(_CORES)))
        c = _CORES[ident] = pickle.loads(core_bc.value)
        # a reused Python worker runs gc.collect() after every task; freezing the
        # long-lived objects (modules, the model) cuts that from ~25 ms to ~1 ms
        gc.freeze()
    return c


def expand_task(core_bc, decided, nparts):
    def run(pid, records):
        core = core_of(core_bc)
        for _pid, rec in records:
            if rec[0] != "B":
                continue
            _tag, _visited, fkeys, fstates = rec
            batches, generated, coverage, disc = level.expand(core, decided, fkeys, fstates,
                                                              nparts)
            for dest, (k, p, s) in enumerate(batches):
                if k.size:
                    yield dest, ("C", k, p, s)
            yield pid, ("X", generated, coverage, disc)
    return run


def dedup_task(core_bc, decided, commit):
    def run(pid, records):
        core = core_of(core_bc)
        visited, batches, stats = None, [], []
        for _pid, rec in records:
            tag = rec[0]
            if tag == "B":
                visited = rec[1]
            elif tag == "C":
                batches.append(rec[1:])
            elif tag == "X":
                stats.append(rec[1:])
            # "R": the previous level's summary, already collected
        if visited is None:
            raise RuntimeError(f"partition {pid} lost its visited block: the state RDD "
                               "and the candidates are not co-partitioned")
        visited, nk, np_, ns, disc = level.dedup(core, decided, visited, batches, commit)
        if commit:
            yield pid, ("B", visited, nk, ns)
        yield pid, ("R", stats, nk, np_, disc, int(visited.nbytes))
    return run


def select(tag):
    """Keep one kind of record (partitioning is preserved by the caller)."""
    def run(records):
        return (r for r in records if r[1][0] == tag)
    return run


def results(records):
    """The per-partition level summaries (what the driver collects)."""
    return (r[1] for r in records if r[1][0] == "R")


def probe(core_bc):
    def run(_it):
        core_of(core_bc)  # imports every module the model needs
        return [True]
    return run
