"""Where a level runs: on the driver (small frontiers) or on Spark (large ones).

Both hold the same thing — per owner partition, the sorted visited keys and the frontier —
and run a level with the same ``level.expand``/``level.dedup``, returning a ``LevelOutcome``.
``SparkFrontier`` keeps it in a persisted RDD partitioned by owner: each level, only the
candidates are shuffled; the visited arrays stay where they are (a partitioner-aware union
puts a partition's candidates next to its visited block) and never become Python records.
"""
from __future__ import annotations

import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from explorers.spark import level, level_tasks


@dataclass
class LevelOutcome:
    generated: int = 0
    coverage: Counter = field(default_factory=Counter)
    settled: list = field(default_factory=list)  # discoveries on the expanded states
    found: list = field(default_factory=list)  # discoveries on the new states
    new_keys: np.ndarray = None  # ascending within each partition's slice
    new_parents: np.ndarray = None
    #: slowest task per phase, seconds (Spark levels): expand, read (inputs), dedup
    timings: dict = field(default_factory=dict)


class LevelCancelled(Exception):
    """The time limit cancelled a running level."""


def blocks_storage():
    """How the cached blocks are kept: in memory, spilling to disk, and *deserialized*.
    A PySpark record is a pickled byte array already; Spark's default for Python RDDs
    (serialized) runs it through Java serialization once more on every store and read.
    Kept as they are, TwoPhase rm=8 on local[1] cost the JVM 2.4-2.6 CPU s instead of
    3.5-3.8 s, which local[2]'s two Python workers otherwise compete with."""
    from pyspark import StorageLevel

    return StorageLevel(True, True, False, True)


def owner_of(pid):
    """Records are keyed by their owner partition already (a module-level function, so
    every partitionBy uses the very same partitioner and unions stay co-partitioned)."""
    return pid


def split_blocks(visited, fkeys, fstates, nparts, shift=0):
    """One ("B", visited, frontier keys, held frontier states, recently shipped keys)
    block per owner partition (``level.held_frontier``)."""
    vparts = level.split_by_owner(visited, nparts, shift)
    fparts = level.split_by_owner(fkeys, nparts, shift)
    out = []
    for p in range(nparts):
        fi = fparts[p]
        states = None if fstates is None else [fstates[i] for i in fi.tolist()]
        out.append((p, ("B", visited[vparts[p]], fkeys[fi], level.held_frontier(states), ())))
    return out


def join_blocks(records):
    """The inverse of split_blocks: one global (visited, frontier keys, states)."""
    blocks = [rec for _p, rec in records if rec[0] == "B"]
    visited = np.sort(np.concatenate([b[1] for b in blocks] or [np.empty(0, np.uint64)]))
    fkeys = np.concatenate([b[2] for b in blocks] or [np.empty(0, np.uint64)])
    order = np.argsort(fkeys, kind="stable")
    packed = all(b[3] is None for b in blocks)
    states = None if packed else [s for b in blocks for s in level.unpack_frontier(b[3])]
    return visited, fkeys[order], None if packed else [states[i] for i in order.tolist()]


def _co_partitioned_union(blocks, shuffled):
    """blocks ∪ shuffled, partition i next to partition i (the JVM makes a partitioner-aware
    union: no data moves). PySpark's own union() would first run one more Python pass over
    both sides, because the shuffled side is labelled with another (but wire-compatible:
    frames of pickled record lists) serializer; that pass cost as much as the level's work
    on Kafka states, so the union is made on the JVM RDDs directly."""
    from pyspark import RDD

    merged = RDD(blocks._jrdd.union(shuffled._jrdd), blocks.ctx, blocks.ctx.serializer)
    if merged.getNumPartitions() != shuffled.getNumPartitions():
        raise RuntimeError("the visited blocks and the candidates are not co-partitioned")
    merged.partitioner = shuffled.partitioner
    return merged


class DriverFrontier:
    mode = "driver"

    def __init__(self, core, visited, fkeys, fstates):
        self.core = core
        self.visited, self.fkeys, self.fstates = visited, fkeys, fstates
        self.recent = ()  # keys expanded into candidates at the last two levels

    @property
    def size(self) -> int:
        return int(self.fkeys.size)

    def run_level(self, decided, commit, deadline=None, window=None) -> LevelOutcome:
        known = window if window is not None else (self.fkeys, *self.recent)
        batches, gen, cov, settled, shipped = level.expand(
            self.core, decided, self.fkeys, self.fstates, 1, known)
        visited, nk, npar, ns, found, _picked = level.dedup(self.core, decided, self.visited,
                                                            batches, commit)
        if commit:
            self.visited, self.fkeys, self.fstates = visited, nk, ns
            self.recent = (shipped, *self.recent[:1])
        return LevelOutcome(gen, cov, [settled], [found], nk, npar)

    def blocks(self, nparts):
        return split_blocks(self.visited, self.fkeys, self.fstates, nparts,
                            self.core.owner_shift)

    def save(self, sc, url, nparts):
        sc.parallelize(self.blocks(nparts), nparts).saveAsPickleFile(url)

    @property
    def visited_bytes(self) -> int:
        return int(self.visited.nbytes)

    def release(self):
        pass


class SparkFrontier:
    mode = "spark"

    def __init__(self, sc, core_bc, nparts, rdd, size, lineage_every=0):
        self.sc, self.core_bc, self.nparts = sc, core_bc, nparts
        self.state = rdd  # records (pid, ("B", visited, frontier keys, states, recent))
        self._size = size
        self.lineage_every = lineage_every
        self.levels = 0
        self._visited_bytes = 0
        self.summaries = sc.accumulator({}, level_tasks.Summaries())
        # (level, key array, broadcast): one broadcast per level's keys, made when the
        # keys first enter a known window and shared by the (up to WINDOW_LEVELS) windows
        # that hold them. A lost partition is recomputed from its lineage, which re-runs
        # older levels' expand tasks with their own windows: kept until a lineage cut.
        self._windows: list = []

    @classmethod
    def from_records(cls, sc, core_bc, nparts, records, size, lineage_every=0):
        rdd = sc.parallelize(records, nparts).partitionBy(nparts, owner_of)
        rdd.persist(blocks_storage())
        f = cls(sc, core_bc, nparts, rdd, size, lineage_every)
        f._visited_bytes = sum(int(rec[1].nbytes) for _p, rec in records)
        return f

    @property
    def size(self) -> int:
        return self._size

    def run_level(self, decided, commit, deadline=None, window=None) -> LevelOutcome:
        """One level on Spark. ``window``: sorted key arrays every partition may drop on
        sight (``Run.window``); each reaches the executors as a broadcast of its own, so a
        level's keys are pickled once on the driver and loaded once per Python worker,
        not once per window that holds them."""
        decided = tuple(sorted(decided))
        self.levels += 1
        prev = self.state
        window_bcs = None if window is None else tuple(self._broadcast(k) for k in window)
        cands = prev.mapPartitionsWithIndex(
            level_tasks.expand_task(self.core_bc, decided, self.nparts, window_bcs))
        shuffled = cands.partitionBy(self.nparts, owner_of)
        merged = _co_partitioned_union(prev, shuffled)
        out = merged.mapPartitionsWithIndex(
            level_tasks.dedup_task(self.core_bc, decided, commit, self.summaries,
                                   self.levels), preservesPartitioning=True)
        cut = False
        if commit:
            out.persist(blocks_storage())
            if self.lineage_every and self.levels % self.lineage_every == 0 \
                    and self.sc.getCheckpointDir():
                out.checkpoint()  # cut the lineage: recovery restarts here, old shuffles go
                cut = True
        self._run(out, deadline)
        if cut and out.isCheckpointed():
            self._drop_windows(window or ())  # no recovery reaches back past the cut
        done = self.summaries.value
        self.summaries.value = {}
        outcome = LevelOutcome()
        keys, parents = [], []
        visited_bytes = 0
        for (lvl, _pid), summary in sorted(done.items()):
            if lvl != self.levels:
                continue  # a re-run of an older level's task (fault recovery)
            stats, nk, npar, found, vbytes, (read_s, dedup_s) = summary
            visited_bytes += vbytes
            outcome.timings["read"] = max(outcome.timings.get("read", 0.0), read_s)
            outcome.timings["dedup"] = max(outcome.timings.get("dedup", 0.0), dedup_s)
            for gen, cov, settled, expand_s in stats:
                outcome.generated += gen
                outcome.coverage.update(cov)
                outcome.settled.append(settled)
                outcome.timings["expand"] = max(outcome.timings.get("expand", 0.0), expand_s)
            outcome.found.append(found)
            keys.append(nk)
            parents.append(npar)
        outcome.new_keys = np.concatenate(keys)
        outcome.new_parents = np.concatenate(parents)
        if commit:
            self.state = out
            self._size = int(outcome.new_keys.size)
            self._visited_bytes = visited_bytes
            prev.unpersist(blocking=False)
        return outcome

    def _run(self, rdd, deadline):
        """Compute (and cache) the level: a JVM-side count, so no Python pass re-reads the
        blocks; cancelled when the time limit passes (the level then does not count)."""
        import time

        if deadline is None:
            rdd._jrdd.count()
            return
        group = f"kmc-{uuid.uuid4().hex}"
        self.sc.setJobGroup(group, "kmc BFS level", interruptOnCancel=True)
        fired = threading.Event()

        def cancel():
            fired.set()
            self.sc.cancelJobGroup(group)
        timer = threading.Timer(max(0.0, deadline - time.perf_counter()), cancel)
        timer.daemon = True
        timer.start()
        try:
            rdd._jrdd.count()
        except Exception:
            if fired.is_set():
                raise LevelCancelled() from None
            raise
        finally:
            timer.cancel()
            self.sc.setLocalProperty("spark.jobGroup.id", None)

    def save(self, sc, url, nparts):
        self.state.saveAsPickleFile(url)

    def to_driver(self, core) -> DriverFrontier:
        """Bring a small frontier and the visited keys back to the driver (the caller
        checks that they fit), releasing the cached RDD."""
        visited, fkeys, fstates = join_blocks(self.state.collect())
        self.release()
        return DriverFrontier(core, visited, fkeys, fstates)

    @property
    def visited_bytes(self) -> int:
        """Total size of the visited arrays after the last committed level."""
        return self._visited_bytes

    def _broadcast(self, keys):
        for _lvl, k, bc in self._windows:
            if k is keys:  # the Run's own array of that level (identity, not equality)
                return bc
        bc = self.sc.broadcast(keys)
        self._windows.append((self.levels, keys, bc))
        return bc

    def _drop_windows(self, keep) -> None:
        """Destroy the key broadcasts except those of ``keep``, the arrays later
        windows may still hold."""
        held = []
        for lvl, k, bc in self._windows:
            if any(k is a for a in keep):
                held.append((lvl, k, bc))
            else:
                bc.destroy()
        self._windows = held

    def release(self):
        self.state.unpersist(blocking=False)
        self._drop_windows(())
