"""Where a level runs: on the driver (small frontiers) or on Spark (large ones).

Both hold the same thing — per owner partition, the sorted visited keys and the frontier —
and run a level with the same ``level.expand``/``level.dedup``, returning a ``LevelOutcome``.
``SparkFrontier`` keeps it as the output of one shuffle partitioned by owner (its class
docstring says how a level runs as a single stage).
"""
from __future__ import annotations

import threading
import uuid
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from explorers.spark import keycodec, level, level_tasks
from explorers.spark.placement import balanced_owners, predicted_weights, value_links
from explorers.spark.session import is_local


@dataclass
class LevelOutcome:
    generated: int = 0
    coverage: Counter = field(default_factory=Counter)
    settled: list = field(default_factory=list)  # discoveries on the expanded states
    found: list = field(default_factory=list)  # discoveries on the new states
    new_keys: np.ndarray = None  # ascending within each partition's slice
    new_parents: np.ndarray = None
    candidates: int = 0  # keys shipped to their owners (after the known-window filter)
    #: slowest task per phase, seconds (Spark levels): expand, read (inputs), dedup
    timings: dict = field(default_factory=dict)


class LevelCancelled(Exception):
    """The time limit cancelled a running level."""


def owner_of(pid):
    """Records are keyed by their owner partition already (a module-level function, so
    every partitionBy uses the very same partitioner and unions stay co-partitioned)."""
    return pid


def is_block(record) -> bool:
    """A block, or visited keys passed on to a new owner: the state without the next
    level's candidates."""
    return record[1][0] in ("B", "V")


def _shuffled(rdd, serializer):
    """The JVM ShuffledRDD behind ``rdd`` (a ``partitionBy`` result, before any job
    ran it), set to write its records with ``serializer``.

    Spark picks Kryo for a shuffle of PySpark's (long, bytes) records, and each task
    gets its own copy of the serializer, so each task built a Kryo instance and
    registered Scala's classes with it, twice (writing and reading): 54% of the
    executor threads' samples in a Java Flight Recording of TwoPhase rm=3 with every
    level on Spark. A handful of large byte arrays per task needs neither Kryo's speed
    nor its set-up: Java serialization writes them as they are."""
    jrdd = rdd._jrdd.rdd()  # the values of the ShuffledRDD (PythonRDD.valueOfPair)
    shuffled = jrdd.dependencies().head().rdd()
    if shuffled.getClass().getSimpleName() != "ShuffledRDD":
        raise RuntimeError("a level's output is not a fresh shuffle")
    return shuffled.setSerializer(serializer)


def _map_stage(sc, rdd, serializer) -> None:
    """Compute the map side of the shuffle behind ``rdd`` (a ``partitionBy`` result) and
    nothing else: Spark's map-stage job, which a plain action would follow with a
    stage reading all the shuffled data back."""
    shuffled = _shuffled(rdd, serializer)
    sc._jsc.sc().submitMapStage(shuffled.dependencies().head()).get()


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
    """The inverse of split_blocks: one global (visited, frontier keys, states), from
    blocks and the visited keys passed on between them ("V")."""
    blocks = [rec for _p, rec in records if rec[0] == "B"]
    passed = [rec[1] for _p, rec in records if rec[0] == "V"]
    visited = np.sort(np.concatenate([keycodec.unpack(b[1]) for b in blocks] + passed
                                     or [np.empty(0, np.uint64)]))
    fkeys = np.concatenate([b[2] for b in blocks] or [np.empty(0, np.uint64)])
    order = np.argsort(fkeys, kind="stable")
    packed = all(b[3] is None for b in blocks)
    states = None if packed else [s for b in blocks for s in level.unpack_frontier(b[3])]
    return visited, fkeys[order], None if packed else [states[i] for i in order.tolist()]


class DriverFrontier:
    mode = "driver"

    def __init__(self, core, visited, fkeys, fstates):
        self.core = core
        self.visited, self.fkeys, self.fstates = visited, fkeys, fstates
        self.recent = ()  # keys expanded into candidates at the last two levels

    @property
    def size(self) -> int:
        return int(self.fkeys.size)

    def run_level(self, decided, commit, deadline=None, window=None,
                  weigh=None) -> LevelOutcome:
        known = window if window is not None else (self.fkeys, *self.recent)
        batches, gen, cov, settled, shipped = level.expand(
            self.core, decided, self.fkeys, self.fstates, 1, known)
        visited, nk, npar, ns, found, _picked = level.dedup(self.core, decided, self.visited,
                                                            batches, commit)
        if commit:
            self.visited, self.fkeys, self.fstates = visited, nk, ns
            self.recent = (shipped, *self.recent[:1]) if window is None else ()
        return LevelOutcome(gen, cov, [settled], [found], nk, npar,
                            sum(int(b[0].size) for b in batches))

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
    """The visited keys and the frontier on Spark, as the output of one shuffle: each
    partition's block ("B", sent to itself) and, once ``_next`` is set, the candidates of
    the next level it owns ("C"), already expanded from its frontier.

    A level is one stage of one task per partition (``level_tasks.step_task``): merge
    the candidates, check the new states, and expand them at once into the next level's
    candidates. Two stages (expand, then deduplicate) cost a second barrier, a second
    round of tasks and a second reading of every block per level, and unpickled the new
    states again to expand them. Expanding before the driver has seen the level is
    speculation: when the search stops there (a violation, a bound, the frontier going
    back to the driver), that expansion is dropped unused. Blocks just placed (from the
    driver or a checkpoint) get one expand-only job first.

    Nothing is cached: Spark keeps a shuffle's output until its RDD is gone, and a lost
    partition is recomputed from the shuffles before it, back to the last lineage cut.
    """
    mode = "spark"

    def __init__(self, sc, core_bc, nparts, rdd, size, lineage_every=0, shift=0):
        self.sc, self.core_bc, self.nparts = sc, core_bc, nparts
        self.shift = shift  # the Core's owner_shift: owners by partition key when set
        self.state = rdd  # records (pid, ("B", ...)) and, once _next is set, (pid, ("C", ...))
        self._next = None  # per partition (generated, coverage, settled, expand s) of it
        self._size = size
        self.lineage_every = lineage_every
        self.levels = self.jobs = 0
        self._visited_bytes = 0
        self._embedded = is_local(sc.master)  # see _cut
        # Java serialization for every shuffle of the run (see _shuffled)
        self._serializer = sc._jvm.org.apache.spark.serializer.JavaSerializer(
            sc._jsc.sc().conf())
        _shuffled(rdd, self._serializer)  # the placed blocks' shuffle has not run yet
        self._kept = None  # the state the last local lineage cut keeps in memory
        self.summaries = sc.accumulator({}, level_tasks.Summaries())
        # (level, key array, broadcast): one broadcast per level's keys, made when the
        # keys first enter a known window and shared by the (up to WINDOW_LEVELS) windows
        # that hold them. A lost partition is recomputed from its lineage, which re-runs
        # older levels' tasks with their own windows: kept until a lineage cut.
        self._windows: list = []

    @classmethod
    def from_records(cls, sc, core_bc, nparts, records, size, lineage_every=0, shift=0):
        rdd = sc.parallelize(records, nparts).partitionBy(nparts, owner_of)
        f = cls(sc, core_bc, nparts, rdd, size, lineage_every, shift)
        f._visited_bytes = sum(int(rec[1].nbytes) for _p, rec in records)
        return f

    @property
    def size(self) -> int:
        return self._size

    def run_level(self, decided, commit, deadline=None, window=None,
                  weigh=None) -> LevelOutcome:
        """One level on Spark. ``window``: sorted key arrays every partition may drop on
        sight (``Run.window``); each reaches the executors as a broadcast of its own, so a
        level's keys are pickled once on the driver and loaded once per Python worker,
        not once per window that holds them. ``weigh``: the frontier's keys, their
        parents' keys and the keys of the level before (``Run.last_levels``); with a
        partition key, the owners of the states two levels on are chosen to split
        them evenly as ``placement.predicted_weights`` guesses them, values that
        states move between preferably together (``placement.balanced_owners``)."""
        decided = tuple(sorted(decided))
        self.levels += 1
        window_bcs = None if window is None else tuple(self._broadcast(k) for k in window)
        table = None
        if self.shift and self.nparts > 1 and weigh is not None and weigh[0].size:
            table = balanced_owners(predicted_weights(*weigh, self.shift), self.nparts,
                                    value_links(weigh[0], weigh[1], self.shift))
        if self._next is None:  # blocks just placed: expand their frontier first
            self.state, parts = self._job(decided, window_bcs, False, True, True, deadline,
                                          table)
            self._next = [x for _d, x in parts]
        state, parts = self._job(decided, window_bcs, True, commit, commit, deadline, table)
        outcome = LevelOutcome()
        for gen, cov, settled, expand_s in self._next:
            outcome.generated += gen
            outcome.coverage.update(cov)
            outcome.settled.append(settled)
            outcome.timings["expand"] = max(outcome.timings.get("expand", 0.0), expand_s)
        keys, parents, visited_bytes = [], [], 0
        for (nk, npar, found, vbytes, cands, (read_s, dedup_s)), _x in parts:
            visited_bytes += vbytes
            outcome.candidates += cands
            outcome.timings["read"] = max(outcome.timings.get("read", 0.0), read_s)
            outcome.timings["dedup"] = max(outcome.timings.get("dedup", 0.0), dedup_s)
            outcome.found.append(found)
            keys.append(nk)
            parents.append(npar)
        outcome.new_keys = np.concatenate(keys)
        outcome.new_parents = np.concatenate(parents)
        if commit:
            self.state, self._next = state, [x for _d, x in parts]
            self._size = int(outcome.new_keys.size)
            self._visited_bytes = visited_bytes
            if self.lineage_every and self.levels % self.lineage_every == 0 \
                    and (self._embedded or self.sc.getCheckpointDir()):
                self._cut(window)
        return outcome

    def _job(self, decided, window_bcs, dedup, commit, expand, deadline, table=None):
        """One Spark job: the map side of the shuffle that carries the next blocks and
        candidates (``level_tasks.step_task``); returns that shuffled RDD and the
        summaries in partition order."""
        self.jobs += 1
        nxt = self._shuffle(level_tasks.step_task(
            self.core_bc, decided, self.nparts, window_bcs, self.summaries, self.jobs, dedup,
            commit, expand, table), deadline)
        done = self.summaries.value
        self.summaries.value = {}
        # entries of other jobs are older tasks re-run to recover a lost partition
        return nxt, [v for (job, _pid), v in sorted(done.items()) if job == self.jobs]

    def _shuffle(self, task, deadline):
        """``task`` on every partition, its records shuffled to their owners: only the
        map side runs now (the next level's task reads the rest)."""
        # not preservesPartitioning: partitionBy would then return the output unshuffled
        nxt = self.state.mapPartitionsWithIndex(task).partitionBy(self.nparts, owner_of)
        self._run(nxt, deadline)
        return nxt

    def _cut(self, window) -> None:
        """Cut the lineage, so recovering a lost partition starts here and the shuffles
        before it can go. On a cluster the state is written to the checkpoint directory
        (a lost executor takes its blocks with it). An embedded master has no executor
        to lose apart from the driver itself, so the block manager keeps the state (a
        local checkpoint): one JVM pass instead of two and a write, and the cut took 45-52
        ms instead of 129-143 ms on TwoPhase rm=8 (local[2], two runs each)."""
        jrdd = self.state._jrdd
        if self._embedded:
            jrdd.rdd().localCheckpoint()
        else:
            self.state.checkpoint()
        jrdd.count()  # a JVM pass over the shuffle output that keeps or writes it
        if self.state.isCheckpointed():
            self._drop_windows(window or ())  # no recovery reaches back past the cut
            if self._kept is not None:  # the state the last local cut kept
                self._kept.unpersist()
            self._kept = self.state if self._embedded else None

    def _run(self, rdd, deadline):
        """Run the map side of ``rdd``'s shuffle (no stage reads it yet: the next level's
        task will); cancelled when the time limit passes (the level then does not
        count)."""
        import time

        if deadline is None:
            _map_stage(self.sc, rdd, self._serializer)
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
            _map_stage(self.sc, rdd, self._serializer)
        except Exception:
            if fired.is_set():
                raise LevelCancelled() from None
            raise
        finally:
            timer.cancel()
            self.sc.setLocalProperty("spark.jobGroup.id", None)

    def save(self, sc, url, nparts):
        self.state.filter(is_block).saveAsPickleFile(url)

    def to_driver(self, core) -> DriverFrontier:
        """Bring a small frontier and the visited keys back to the driver (the caller
        checks that they fit); the next level's candidates are left behind."""
        visited, fkeys, fstates = join_blocks(self.state.filter(is_block).collect())
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
        self._drop_windows(())
        if self._kept is not None:
            self._kept.unpersist()
            self._kept = None
