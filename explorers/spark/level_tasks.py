"""The functions Spark runs on executors, wrapped around ``level.expand``/``level.dedup``.

Records are (partition id, tagged tuple). A partition of the state RDD holds one block
("B", visited keys, frontier keys, frontier states held as candidate blobs, keys it shipped
recently); a level emits candidate batches ("C", keys, parents, states) keyed by their
owner, and per-partition stats ("X", ...) that ride along to the partition's own owner
stage; that stage's summary reaches the driver as an accumulator update.
"""
from __future__ import annotations

import gc
import pickle
import time

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
        c = _CORES[ident] = pickle.loads(broadcast_value(core_bc))
        # a reused Python worker runs gc.collect() after every task; freezing the
        # long-lived objects (modules, the model) cuts that from ~25 ms to ~1 ms. That
        # explicit collection also frees any cyclic garbage, so the automatic collector
        # is switched off for the worker's tasks (explorers.gcpause says why: it
        # halves the cost of expanding and unpickling Kafka states)
        gc.freeze()
    gc.disable()  # every task: whatever ran in this worker before may have switched it on
    return c


def broadcast_value(bc):
    """``bc.value``, leaving the cyclic collector off: PySpark's ``Broadcast.load``
    switches it back on after unpickling a value, and a worker that ran with it on
    expanded and unpickled Kafka states 1.4x and 3x slower (see ``core_of``)."""
    value = bc.value
    gc.disable()
    return value


def expand_task(core_bc, decided, nparts, window_bcs=None):
    def run(pid, records):
        core = core_of(core_bc)
        # a reused worker keeps each loaded broadcast: a level's keys load once per worker
        window = None if window_bcs is None else tuple(broadcast_value(b) for b in window_bcs)
        for _pid, rec in records:
            if rec[0] != "B":
                continue
            t = time.perf_counter()
            _tag, _visited, fkeys, held, recent = rec
            # the driver's window of visited keys, else this partition's own recent ones
            known = window if window is not None else (fkeys, *recent)
            batches, generated, coverage, disc, shipped = level.expand(
                core, decided, fkeys, level.unpack_frontier(held), nparts, known)
            busy = time.perf_counter() - t
            for dest, (k, p, s) in enumerate(batches):
                if k.size:
                    # states as one C-pickled blob: PySpark's own record serializer is
                    # cloudpickle, whose Python-level hooks cost ~3x more per state
                    yield dest, ("C", k, p, level.pack_states(s))
            # what this partition shipped at this level and the one before: the next
            # level's "known" keys (rides to this partition's own owner stage)
            yield pid, ("X", generated, coverage, disc, busy, (shipped, *recent[:1]))
    return run


class Summaries:  # a pyspark AccumulatorParam (duck-typed: no PySpark import here)
    """Level summaries reach the driver as accumulator updates keyed by (level, partition):
    no second Python pass over the cached blocks is needed to collect them, and a task
    re-run by Spark after a failure overwrites its own entry with the same value."""

    def zero(self, _value):
        return {}

    def addInPlace(self, a, b):
        a.update(b)
        return a


def dedup_task(core_bc, decided, commit, summaries, level_no):
    def run(pid, records):
        core = core_of(core_bc)
        t0 = time.perf_counter()
        visited, batches, blobs, stats, recent = None, [], [], [], ()
        for _pid, rec in records:
            tag = rec[0]
            if tag == "B":
                visited = rec[1]
            elif tag == "C":
                batches.append((rec[1], rec[2], level.unpack_states(rec[3])))
                blobs.append(rec[3])
            elif tag == "X":
                stats.append(rec[1:5])
                recent = rec[5]
        if visited is None:
            raise RuntimeError(f"partition {pid} lost its visited block: the state RDD "
                               "and the candidates are not co-partitioned")
        t1 = time.perf_counter()
        visited, nk, np_, ns, disc, picked = level.dedup(core, decided, visited, batches,
                                                         commit)
        times = (t1 - t0, time.perf_counter() - t1)  # reading the inputs, deduplicating
        summaries.add({(level_no, pid): (stats, nk, np_, disc, int(visited.nbytes), times)})
        if commit:
            held = None if ns is None else \
                level.forwarded(blobs, [b[0].size for b in batches], picked)
            yield pid, ("B", visited, nk, held, recent)
    return run


def probe(core_bc):
    def run(_it):
        core_of(core_bc)  # imports every module the model needs
        return [True]
    return run
