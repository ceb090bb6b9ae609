"""The driver's half of the Spark explorer: a level on the driver (``DriverFrontier``,
for small frontiers), what a level reports (``LevelOutcome``), and the blocks that carry
a frontier between the driver and Spark. ``SparkFrontier`` runs the same
``level.expand``/``level.dedup`` on Spark and returns the same ``LevelOutcome``.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from kmc.explorers.keyarrays import sort_order, sorted_keys
from kmc.explorers.spark import keycodec, level, spill, spool


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
    #: the number of new states when the keys stayed on the executors (new_keys None)
    new_count: int = 0
    #: the blocks' visited keys and trace rows after the level: (bytes in memory, bytes
    #: on disk, runs of visited keys), summed over the partitions (Spark levels)
    memory: tuple = (0, 0, 0)


def owner_of(pid):
    """Records are keyed by their owner partition already (a module-level function, so
    every partitionBy uses the very same partitioner and unions stay co-partitioned)."""
    return pid


def is_block(record) -> bool:
    """A block, or visited keys passed on to a new owner: the state without the next
    level's candidates."""
    return record[1][0] in ("B", "V")


def split_blocks(visited, fkeys, fstates, nparts, shift=0, depth=0):
    """One ("B", visited, frontier keys, held frontier states, recently shipped keys,
    the frontier's level, trace rows) block per owner partition
    (``level.held_frontier``). The trace rows are (level, keys, parents) triples of the
    levels the partitions found; blocks placed from the driver start with none (the
    driver keeps the rows of its own levels)."""
    vparts = level.split_by_owner(visited, nparts, shift)
    fparts = level.split_by_owner(fkeys, nparts, shift)
    out = []
    for p in range(nparts):
        fi = fparts[p]
        states = None if fstates is None else [fstates[i] for i in fi.tolist()]
        out.append((p, ("B", visited[vparts[p]], fkeys[fi], level.held_frontier(states), (),
                         depth, ())))
    return out


def join_blocks(records):
    """The inverse of split_blocks: one global (visited, frontier keys, states), from
    blocks and the visited keys passed on between them ("V")."""
    records = [(p, spill.inlined(spool.opened(rec))) for p, rec in records]
    blocks = [rec for _p, rec in records if rec[0] == "B"]
    passed = [rec[1] for _p, rec in records if rec[0] == "V"]
    mine = [keycodec.unpack(b[1]) for b in blocks]
    visited = sorted_keys(np.concatenate(mine + passed or [np.empty(0, np.uint64)]))
    return (visited, *join_frontiers([(b[2], b[3]) for b in blocks]))


def block_rows(records) -> dict:
    """The trace rows the blocks among ``records`` hold: level -> (keys ascending, their
    parents' keys), joined over the partitions."""
    parts: dict = {}
    for _p, rec in records:
        rec = spill.inlined(spool.opened(rec))
        if rec[0] == "B":
            for lvl, keys, parents in rec[6]:
                parts.setdefault(lvl, []).append((keys, parents))
    out = {}
    for lvl, kp in parts.items():
        keys = np.concatenate([k for k, _p in kp])
        parents = np.concatenate([p for _k, p in kp])
        order = sort_order(keys)
        out[lvl] = (keys[order], parents[order])
    return out


def frontier_of(record) -> list:
    """A block's frontier (keys, held states) without its visited keys; nothing for
    other records (a flatMap function: what ``SparkFrontier.to_driver`` collects)."""
    if record[1][0] != "B":
        return []
    rec = spool.opened(record[1])
    return [(rec[2], rec[3])]


def join_frontiers(parts):
    """One frontier (ascending keys, their states or None) from the blocks' (keys,
    held states)."""
    fkeys = np.concatenate([k for k, _h in parts] or [np.empty(0, np.uint64)])
    order = sort_order(fkeys)
    if all(h is None for _k, h in parts):  # a packed model: the keys are the states
        return fkeys[order], None
    states = [s for _k, h in parts for s in level.unpack_frontier(h)]
    return fkeys[order], [states[i] for i in order.tolist()]


class DriverFrontier:
    mode = "driver"
    pending = False  # no job submitted ahead (``SparkFrontier.pending``)

    def __init__(self, core, visited, fkeys, fstates, depth=0):
        self.core = core
        self.visited, self.fkeys, self.fstates = visited, fkeys, fstates
        self.fpieces = None  # the frontier's field reprs, once a level here found them
        self.depth = depth  # the frontier's level (0: the initial states)
        self.recent = ()  # keys expanded into candidates at the last two levels

    @property
    def size(self) -> int:
        return int(self.fkeys.size)

    def run_level(self, decided, commit, deadline=None, window=None, weigh=None,
                  ahead=False, rows=True, room=None) -> LevelOutcome:
        known = window if window is not None else (self.fkeys, *self.recent)
        batches, gen, cov, settled, shipped = level.expand(
            self.core, decided, self.fkeys, self.fstates, 1, known, pieces=self.fpieces)
        visited, nk, npar, ns, found, _picked, pieces = level.dedup(
            self.core, decided, self.visited, batches, commit)
        if commit:
            self.visited, self.fkeys, self.fstates = visited, nk, ns
            self.fpieces = pieces
            self.depth += 1
            self.recent = (shipped, *self.recent[:1]) if window is None else ()
        return LevelOutcome(gen, cov, [settled], [found], nk, npar,
                            sum(int(b[0].size) for b in batches))

    def blocks(self, nparts):
        return split_blocks(self.visited, self.fkeys, self.fstates, nparts,
                            self.core.owner_shift, self.depth)

    def save(self, sc, url, nparts):
        sc.parallelize(self.blocks(nparts), nparts).saveAsPickleFile(url)

    @property
    def visited_bytes(self) -> int:
        return int(self.visited.nbytes)

    def release(self):
        pass


