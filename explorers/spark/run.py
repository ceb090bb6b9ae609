"""The driver's bookkeeping for one Spark BFS run: counters, stopping rules, discoveries,
trace rows, checkpoint metadata and the final CheckResult — the same rules as
``explorers.bfs`` (generated counts include initial states, depth is 1-based, stopping
happens at level boundaries)."""
from __future__ import annotations

import os
import time
from collections import Counter

import numpy as np

from kmc.explorers import keyarrays
from kmc.explorers.keyarrays import sort_order, sorted_keys
from kmc.explorers.spark import level
from kmc.explorers.spark.rows import KEEP_LEVELS, LevelRows, in_blocks
from kmc.explorers.spark.tuning import env_number, parse_number
from kmc.explorers.visited import smallest


#: the driver's budget per level (``driver_seconds``), when the user asks for one: unset,
#: every level wide enough to split over the owner partitions runs on Spark
#: (``split_limit``); "auto", the budget below; a number, that many seconds
DRIVER_SECONDS_SET = os.environ.get("KMC_SPARK_DRIVER_SECONDS", "").strip() or None
if (DRIVER_SECONDS_SET or "auto").lower() != "auto":  # a bad one is named before Spark
    env_number("KMC_SPARK_DRIVER_SECONDS", None)  # starts, read or not (tuning.check)
#: the "auto" budget: a level goes to Spark once the driver would need more than this
#: many seconds for it, on a cluster (whose fixed cost per level is unknown here and
#: larger than local mode's) or on one core
DRIVER_LEVEL_SECONDS = 0.4
#: the fixed cost of a Spark level in local mode (bench/spark_bench.py: 0.024-0.057 s)
LOCAL_LEVEL_COST = 0.05
#: Spark's work per state against the driver's, on one core: pickling and shipping the
#: candidates, and the duplicates of several owners (Spark local[1] against the local BFS:
#: TwoPhase rm=8 6.2-6.7 s against 4.8 s, lifecycle-large 27.7-30.7 s against 22.4 s)
SPARK_WORK = 1.3
#: the threshold before the driver has measured its own speed (frontier states)
FIRST_LIMIT = 20000
#: the known window (``Run.window``): the new keys of this many latest levels ...
WINDOW_LEVELS = 3
#: ... while they are at most this many keys (16 bytes each, 8 for a packed
#: model; sent to every executor)
WINDOW_MAX = env_number("KMC_SPARK_WINDOW_MAX", 4000000, int)


def split_limit(nparts: int) -> int:
    """The default driver threshold: the largest frontier that cannot give each of the
    ``nparts`` owner partitions a state. A user who asks for the Spark explorer expects
    Spark to explore, so every level with at least as many states as partitions runs on
    Spark, however small; only the first levels of a search (and a tail narrower than
    that) stay on the driver."""
    return max(0, nparts - 1)


def driver_seconds(local: bool, cores: int) -> float | None:
    """The driver's budget per level set by KMC_SPARK_DRIVER_SECONDS (None when unset:
    ``split_limit`` decides). "auto": how long a level may take on the driver before it
    pays to move it to Spark. A level the
    driver expands in t seconds takes about F + t * c / E on Spark (F its fixed cost, c
    Spark's work per state against the driver's, E cores), which is less once
    t > F / (1 - c / E): on an embedded master with 2 cores 0.14 s, with 4 0.07 s.
    Levels the driver runs there are serial: on TwoPhase rm=8 (local[2]) the driver's
    levels took 1.0 s of 4.2-4.7 s at 0.4 s, and 0.33 s of 4.0-4.1 s at 0.2 s.
    One core gains nothing from a Spark level, and a cluster's F is unknown here (larger
    across a network): both keep DRIVER_LEVEL_SECONDS."""
    if not DRIVER_SECONDS_SET:
        return None
    if DRIVER_SECONDS_SET.lower() != "auto":
        return parse_number("KMC_SPARK_DRIVER_SECONDS", DRIVER_SECONDS_SET)
    if local and cores > SPARK_WORK:
        return min(DRIVER_LEVEL_SECONDS, LOCAL_LEVEL_COST / (1 - SPARK_WORK / cores))
    return DRIVER_LEVEL_SECONDS


class Run:
    def __init__(self, core, driver_level_max, stop_on_violation, max_states, max_depth,
                 progress, driver_seconds=DRIVER_LEVEL_SECONDS):
        self.core = core
        self.driver_level_max = driver_level_max  # None: adaptive (see limit())
        self.driver_seconds = driver_seconds  # the adaptive limit's budget (limit())
        self._cost = None  # driver seconds per expanded state, from its largest level
        self.stop_on_violation = stop_on_violation
        self.max_states, self.max_depth = max_states, max_depth
        self.progress = progress
        self.t0 = time.perf_counter()
        self.prior_elapsed = 0.0
        self.unique = self.generated = self.depth = 0
        self.coverage = Counter()
        self.stopped_by = ""
        # per level, ascending, and their parents' keys: the newest in memory; older
        # ones of Spark levels with the executors only, of the driver's levels in its
        # files beyond KMC_SPARK_ROWS_MEMORY (``rows.LevelRows``)
        self.level_keys = LevelRows(name="keys")
        self.level_parents = LevelRows(name="parents")
        self.init_index: dict = {}  # level-0 key -> index in model.init_states()
        self.levels: list[dict] = []  # per-level figures (extra["spark"]["levels"])
        self.frontier_size = 0
        self.resumed_at = None  # depth of the checkpoint a resumed run started from
        self._frontier = None  # where trace_for looks up rows the driver does not hold
        self.sizes: list[int] = []  # states per level

    # ---- the first level ------------------------------------------------------------
    def start(self, driver_frontier_cls):
        core = self.core
        inits = core.initial()
        keys = [core.rkey(s) for _i, s in inits]
        order = sorted(range(len(inits)), key=keys.__getitem__)
        if self.max_states is not None and len(order) > self.max_states:  # as bfs does
            order, self.stopped_by = order[:self.max_states], "max_states"
        fkeys = keyarrays.from_ints([keys[j] for j in order], len(order), core.key_dtype)
        self.init_index = {keys[j]: inits[j][0] for j in order}
        states = [inits[j][1] for j in order]
        chk = level.task_core(core, self.decided())
        for s, k in zip(states, keyarrays.to_ints(fkeys)):
            chk.check_new(s, k)
        self._merge([level.found(chk)], 0)
        self.unique, self.generated = len(order), len(inits)
        self.depth = 1 if order else 0
        self.level_keys.append(fkeys)
        self.level_parents.append(np.zeros(fkeys.size, dtype=fkeys.dtype))
        self.sizes = [int(fkeys.size)]
        self.frontier_size = len(order)
        return driver_frontier_cls(core, fkeys.copy(), fkeys,
                                   None if core.packed else states)

    # ---- stopping rules (checked before each level, as bfs does) --------------------
    def should_stop(self) -> bool:
        if self.stop_on_violation and self.core.violated():
            self.stopped_by = "violation"
        elif self.core.done:
            self.stopped_by = "all properties decided"
        return bool(self.stopped_by)

    def at_bound(self) -> bool:
        return self.max_depth is not None and self.depth >= self.max_depth

    def decided(self) -> set:
        return set(self.core.discoveries)

    def room(self):
        """How many more states ``max_states`` lets the run keep (None: no bound)."""
        return None if self.max_states is None else self.max_states - self.unique

    def limit(self) -> int:
        """The largest frontier the driver expands itself: fixed when given, else what the
        driver expands in ``driver_seconds`` at the speed measured on its own levels
        (a packed model's levels stay local far longer than a Kafka model's)."""
        if self.driver_level_max is not None:
            return self.driver_level_max
        if self._cost is None:
            return FIRST_LIMIT
        return max(1000, int(self.driver_seconds / self._cost))

    def window(self):
        """The keys of the last WINDOW_LEVELS levels (the frontier's and the two before),
        one sorted array per level (no merge on the driver between levels), or None once
        they outgrow WINDOW_MAX. Every partition drops the candidates
        found there before shipping them: a successor of a frontier state (level d) that
        is already visited lies at level d or d-1 nearly always, sometimes d-2, wherever
        its owner is. On
        lifecycle-large with 2 partitions that ships 1.23 candidates per new state
        instead of 1.31 (each partition's own recent keys, the fallback)."""
        last = self.level_keys[-WINDOW_LEVELS:]
        if not last or any(k is None for k in last) or \
                sum(k.size for k in last) > WINDOW_MAX:
            return None
        return tuple(last)

    def wants_rows(self, checkpointed: bool = False) -> bool:
        """Whether the next level's keys and parents should come to the driver: while
        the known window is on (they join it), for a partition-key model's owner table,
        and to write them to a checkpoint. Otherwise only their number comes, and the
        driver's memory does not follow the levels' width; a level that crosses
        ``max_states`` has its rows read from the blocks (``absorb``)."""
        return bool(self.window() is not None or self.core.owner_shift or checkpointed)

    def growth(self) -> float:
        """How the frontier grew at the last level (its size over the level before's)."""
        if len(self.sizes) < 2 or not self.sizes[-2]:
            return 1.0
        return self.sizes[-1] / self.sizes[-2]

    def visited(self):
        """Every key found so far (ascending), when the driver's trace rows still hold
        them all (else None: the blocks hold them), and the frontier's keys
        (``SparkFrontier.to_driver``)."""
        if not self.level_keys.complete:
            return None, self.level_keys[-1]
        return sorted_keys(np.concatenate(list(self.level_keys))), self.level_keys[-1]

    def take_rows(self, rows: dict) -> None:
        """The trace rows the blocks held (level -> (keys, parents)), as a frontier
        comes back to the driver: it keeps them, and every level's it holds, from now
        on."""
        self.level_keys.pin()
        self.level_parents.pin()
        for lvl, (keys, parents) in sorted(rows.items()):
            if lvl < len(self.level_keys) and not self.level_keys.held(lvl):
                self.level_keys.install(lvl, keys)
                self.level_parents.install(lvl, parents)

    def last_levels(self):
        """(the frontier's keys, their parents' keys, the level before's keys or None):
        what a Spark level weighs its owner table on (``placement.predicted_weights``)."""
        if self.level_keys[-1] is None:
            return None  # the rows stayed on the executors: owners by hash
        before = self.level_keys[-2] if len(self.level_keys) > 1 else None
        return self.level_keys[-1], self.level_parents[-1], before

    # ---- one level's outcome --------------------------------------------------------
    def absorb(self, outcome, frontier, seconds) -> bool:
        """Account for a finished level; False when the search ends here."""
        if outcome.new_keys is None and self.max_states is not None and \
                self.unique + outcome.new_count > self.max_states:
            # the smallest keys are kept: the level's rows, from the blocks that hold them
            outcome.new_keys, outcome.new_parents = frontier.level_rows(self.depth)
        self.generated += outcome.generated
        self.coverage.update(outcome.coverage)
        self._merge(outcome.settled, self.depth - 1)
        keys, parents, found = outcome.new_keys, outcome.new_parents, outcome.found
        expanded = self.frontier_size
        if keys is None:  # only the number came: the rows stay on the executors
            return self._absorb_count(outcome, frontier, seconds, expanded)
        if frontier.mode == "driver" and expanded >= 500:
            self._cost = seconds / expanded  # the latest driver level of some size
        if self.at_bound():
            self.stopped_by = "max_depth" if keys.size else ""
            self._log(frontier.mode, expanded, 0, seconds, outcome)
            return False
        if self.max_states is not None and self.unique + keys.size > self.max_states:
            keep = smallest(keys, self.max_states - self.unique)
            keys, parents = keys[keep], parents[keep]
            thr = keyarrays.max_key(keys)  # the largest key kept
            found = [{n: d for n, d in f.items() if d[3] <= thr} for f in found]
            self.stopped_by = "max_states"
        if keys.size == 0:
            return False
        self._merge(found, self.depth)
        order = sort_order(keys)
        remote = frontier.mode == "spark"  # the blocks keep the rows: lookups find them
        self.level_keys.append(keys[order], remote)
        self.level_parents.append(parents[order], remote)
        self.unique += int(keys.size)
        self.depth += 1
        self.frontier_size = int(keys.size)
        self.sizes.append(self.frontier_size)
        elapsed = self._log(frontier.mode, expanded, int(keys.size), seconds, outcome)
        if self.progress is not None:
            self.progress(self.unique, self.generated, self.depth, self.frontier_size, elapsed)
        return True

    def _absorb_count(self, outcome, frontier, seconds, expanded) -> bool:
        """``absorb`` for a level whose rows stayed on the executors (no ``max_states``:
        ``wants_rows``)."""
        n = outcome.new_count
        if self.at_bound():
            self.stopped_by = "max_depth" if n else ""
            self._log(frontier.mode, expanded, 0, seconds, outcome)
            return False
        if n == 0:
            return False
        self._merge(outcome.found, self.depth)
        width = 2 * self.core.key_dtype.itemsize * n  # keys and parents
        self.level_keys.append_absent(width // 2)
        self.level_parents.append_absent(width // 2)
        self.unique += n
        self.depth += 1
        self.frontier_size = n
        self.sizes.append(n)
        elapsed = self._log(frontier.mode, expanded, n, seconds, outcome)
        if self.progress is not None:
            self.progress(self.unique, self.generated, self.depth, self.frontier_size, elapsed)
        return True

    def _log(self, mode, expanded, new, seconds, outcome) -> float:
        """One entry of extra["spark"]["levels"]: what a level did, where, how fast (a
        level expanded at the depth bound is logged with new=0 and does not count)."""
        elapsed = self.elapsed()
        self.levels.append({"level": self.depth, "mode": mode, "expanded": expanded,
                            "candidates": outcome.candidates, "new": new,
                            "total": self.unique, "generated": self.generated,
                            "seconds": round(seconds, 4), "elapsed": round(elapsed, 3),
                            **{f"{k}_s": round(v, 4) for k, v in outcome.timings.items()},
                            **(dict(zip(("memory_bytes", "disk_bytes", "runs"),
                                        outcome.memory)) if mode == "spark" else {})})
        return elapsed

    def _merge(self, parts, lvl) -> None:
        """Level ``lvl``'s discoveries, one dict per partition, by the core's one rule
        (``Core.offer``): per property the least key wins, whatever the partitioning; a
        property decided at an earlier level keeps its discovery."""
        core = self.core
        core.open_level()
        for part in parts:
            for name, (kind, state, detail, key) in part.items():
                core.offer(name, kind, state, detail, (lvl, key), key)
        core.close_level()

    # ---- checkpoints ----------------------------------------------------------------
    def elapsed(self) -> float:
        return self.prior_elapsed + time.perf_counter() - self.t0

    def meta(self, d: int, mode: str) -> dict:
        return {"depth": self.depth, "unique": self.unique, "generated": self.generated,
                "coverage": self.coverage, "discoveries": dict(self.core.discoveries),
                "keys": self.level_keys[d], "parents": self.level_parents[d],
                "init_index": self.init_index if d == 0 else None, "mode": mode,
                "frontier": self.frontier_size, "elapsed": self.elapsed(),
                "levels": self.levels}

    def restore(self, depth: int, load) -> None:
        """The run as it was after level ``depth`` of a checkpoint; ``load(d, rows)``
        reads level d's metadata, with its trace rows when ``rows``. The rows of the
        levels the checkpoint's blocks hold (``in_blocks``) stay with the executors, as
        in the run that wrote them: only the newest KEEP_LEVELS of them are read, so
        the driver's memory does not follow the number of states. The driver's own
        levels are read as that run held them (``rows.LevelRows`` spills them to files
        beyond its memory), one level at a time."""
        metas = [load(d, False) for d in range(depth + 1)]
        last = metas[-1]
        self.unique, self.generated, self.depth = last["unique"], last["generated"], \
            last["depth"]
        self.coverage = Counter(last["coverage"])
        self.core.discoveries = dict(last["discoveries"])
        self.core.pending_witness = [p for p in self.core.pending_witness
                                     if p.name not in self.core.discoveries]
        self.close()
        self.level_keys, self.level_parents = LevelRows(name="keys"), LevelRows(name="parents")
        remote = in_blocks([m["mode"] for m in metas])
        width = self.core.key_dtype.itemsize
        for d, m in enumerate(metas):
            if remote[d] and d <= depth - KEEP_LEVELS:
                self.level_keys.append_absent(width * m["frontier"])
                self.level_parents.append_absent(width * m["frontier"])
                continue
            m = load(d, True)
            self.level_keys.append(m["keys"], remote[d])
            self.level_parents.append(m["parents"], remote[d])
        self.sizes = [int(m["frontier"]) for m in metas]
        self.init_index = metas[0]["init_index"]
        self.frontier_size = last["frontier"]
        self.prior_elapsed = last["elapsed"]
        self.levels = list(last["levels"])
        self.resumed_at = self.depth

    def close(self) -> None:
        """Remove the files of spilled trace rows (``rows.LevelRows``)."""
        self.level_keys.close()
        self.level_parents.close()

    # ---- the result -----------------------------------------------------------------
    def result(self, frontier):
        r = self.core.new_result("spark")
        r.unique_states, r.generated_states, r.max_depth = self.unique, self.generated, \
            self.depth
        r.stopped_by = self.stopped_by
        r.complete = self.stopped_by == ""
        r.elapsed_s = self.elapsed()
        r.visited_bytes = frontier.visited_bytes
        r.extra["trace_bytes"] = self.level_keys.nbytes + self.level_parents.nbytes
        r.extra["trace_bytes_driver"] = self.level_keys.held_bytes + \
            self.level_parents.held_bytes
        r.extra["spark"] = {"levels": self.levels, "resumed_at_level": self.resumed_at}
        self._frontier = frontier
        try:
            return self.core.finish(r, self.coverage, self.trace_for)
        finally:
            self._frontier = None

    def trace_for(self, loc):
        """The trace to ``loc`` (level, key): parent keys read from the driver's rows,
        or, for levels whose rows only the executors hold, looked up there (one job per
        level crossed)."""
        lvl, key = loc
        keys = [key]
        while lvl > 0:
            ks = self.level_keys[lvl]
            if ks is None:
                one = keyarrays.from_ints([key], 1, self.core.key_dtype)
                found = self._frontier.parents(lvl, one)
                if key not in found:
                    raise RuntimeError(f"trace row for key {key:#x} at level {lvl} is missing")
                key = found[key]
                keys.append(key)
                lvl -= 1
                continue
            i = int(keyarrays.search(ks, keyarrays.from_ints([key], 1, ks.dtype))[0])
            if i >= ks.size or keyarrays.key_at(ks, i) != key:
                raise RuntimeError(f"trace row for key {key:#x} at level {lvl} is missing")
            key = keyarrays.key_at(self.level_parents[lvl], i)
            keys.append(key)
            lvl -= 1
        keys.reverse()
        return self.core.rebuild(self.init_index[key], keys)
