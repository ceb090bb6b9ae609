"""Where a level runs: on the driver (small frontiers, ``driver.DriverFrontier``) or on
Spark (large ones, ``SparkFrontier``).

Both hold the same thing — per owner partition, the sorted visited keys and the frontier —
and run a level with the same ``level.expand``/``level.dedup``, returning a ``LevelOutcome``.
``SparkFrontier`` keeps it as the output of one shuffle partitioned by owner (its class
docstring says how a level runs as a single stage, and how the next one starts early).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from kmc.explorers.spark import level_tasks, spill, spool
from kmc.explorers.spark.jobs import LevelJobs, cancel_at, job_group
from kmc.explorers.spark.lineage import LineageCuts
from kmc.explorers.spark.driver import (DriverFrontier, LevelOutcome, block_rows,
                                        frontier_of, is_block, join_blocks, join_frontiers)
from kmc.explorers.spark.placement import balanced_owners, predicted_weights, value_links


def _state_records(record) -> list:
    """The blocks and passed visited keys of a state (a flatMap function)."""
    return [record] if is_block(record) else []


@dataclass
class _Job:
    """A submitted Spark job: its number, its output (the shuffled RDD), and how to wait
    for and cancel it."""
    job: int
    rdd: object
    handle: object


class LevelCancelled(Exception):
    """The time limit cancelled a running level."""


class SparkFrontier(LineageCuts):
    """The visited keys and the frontier on Spark, as the output of one shuffle: each
    partition's block ("B", sent to itself) and, once ``_next`` is set, the candidates of
    the next level it owns ("C"), already expanded from its frontier.

    A level is one stage of one task per partition (``level_tasks.step_task``): merge
    the candidates, check the new states, and expand them at once into the next level's
    candidates. Two stages (expand, then deduplicate) cost a second barrier, a second
    round of tasks and a second reading of every block per level, and unpickled the new
    states again to expand them. Expanding before the driver has seen the level is
    speculation: when the search stops there (a violation, a bound, the frontier going
    back to the driver), that expansion is dropped unused; a level that may fill
    ``max_states`` is not expanded (``run_level``'s ``room``). Blocks just placed (from
    the driver or a checkpoint), and a level kept unexpanded that did not stop the run,
    get one expand-only job first.

    The level after is speculation too (``ahead``): its job is submitted on this one's
    output before this one ends, so Spark starts its tasks the moment this level's last
    task is done, while the driver reads this level's summaries. Otherwise each level
    waits for the job's end to reach the driver, the driver's bookkeeping and the next
    job's way back to the executors. A tiny level (TwoPhase rm=4, every level on Spark)
    took 22.5 ms instead of 31 ms on local[1], 27 ms instead of 34 ms on local[2]
    (medians of 8 alternating runs). When the tasks keep every core busy (local[2] on
    2 cores), the driver's work competes with them instead and a large run gains
    nothing measurable. The job ahead knows the driver's keys one level less far
    (``level_tasks.step_task``'s ``lagged``). A level whose job is ahead stays on Spark
    even if its frontier turned small (``explore._placed``), and the job after the last
    level (it expands nothing) is waited for: Spark replaces the Python workers of a
    cancelled task, so cancelling is kept for stops.

    Nothing is cached: Spark keeps a shuffle's output until its RDD is gone, and a lost
    partition is recomputed from the shuffles before it, back to the last lineage cut.
    """
    mode = "spark"
    _runs = spill_bound = None  # no spill unless __init__ sets it up
    _cut_job = 0

    def __init__(self, sc, core_bc, nparts, rdd, size, lineage_every=0, shift=0,
                 shuffled=True, lineage_bytes=0, spill_bound=None, spill_dir=None):
        self.sc, self.core_bc, self.nparts = sc, core_bc, nparts
        self.shift = shift  # the Core's owner_shift: owners by partition key when set
        self.state = rdd  # records (pid, ("B", ...)) and, once _next is set, (pid, ("C", ...))
        self._next = None  # per partition (generated, coverage, settled, expand s) of it
        self._ahead = None  # the next level's job, submitted already (a _Job)
        self._size = size
        # a lineage cut once the levels since the last one number lineage_every or held
        # lineage_bytes of visited keys in all (0: no such bound; _cut_due)
        self.lineage_every, self.lineage_bytes = lineage_every, lineage_bytes
        self._since_cut = (0, 0)  # (levels, visited bytes) since the last cut
        self.levels = self.jobs = 0
        self._visited_bytes = 0
        # every task in this JVM (see _cut); their records wait in files between levels
        self._embedded = spool.embedded(sc.master)
        self._spool = spool.Spool() if self._embedded else None
        # visited keys and trace rows beyond spill_bound bytes a partition go to runs
        # on disk (``spill``; None: all in memory), in a directory of ``spill_dir`` (one
        # every task reads at the same path: ``spill_dir.SpillSpace.runs_base``; None:
        # the driver's temporary directory) removed by release()
        self.spill_bound = spill_bound
        self._runs = spill.RunDirectory(spill_dir) if spill_bound is not None else None
        self._cut_job = 0  # the job whose output the last lineage cut kept
        self._jobs = LevelJobs(sc, nparts)
        if shuffled:  # blocks read back from a checkpoint: their shuffle has not run yet
            self._jobs.java_serialized(rdd)
        self._kept = None  # the state the last local lineage cut keeps in memory
        self.summaries = sc.accumulator({}, level_tasks.Summaries())
        self._rows_out = True  # the summaries carry the trace rows (run_level's rows)
        # (level, key array, broadcast): one broadcast per level's keys, made when the
        # keys first enter a known window and shared by the (up to WINDOW_LEVELS) windows
        # that hold them. A lost partition is recomputed from its lineage, which re-runs
        # older levels' tasks with their own windows: kept until a lineage cut.
        self._windows: list = []

    @classmethod
    def from_records(cls, sc, core_bc, nparts, records, size, lineage_every=0, shift=0,
                     lineage_bytes=0, spill_bound=None, spill_dir=None):
        """Blocks placed from the driver, one per partition in partition order
        (``DriverFrontier.blocks``). ``parallelize`` slices such a list one record per
        partition, so block p is already where partition p's task reads it: no
        ``partitionBy``, whose Python pass and shuffle were a job of their own before the
        first Spark level (~20 ms on TwoPhase rm=8, local[2])."""
        if [p for p, _rec in records] != list(range(nparts)):
            raise ValueError("from_records needs one block per partition, in order")
        rdd = sc.parallelize(records, nparts)
        f = cls(sc, core_bc, nparts, rdd, size, lineage_every, shift, shuffled=False,
                lineage_bytes=lineage_bytes, spill_bound=spill_bound, spill_dir=spill_dir)
        f._visited_bytes = sum(int(rec[1].nbytes) for _p, rec in records)
        return f

    @property
    def size(self) -> int:
        return self._size

    @property
    def pending(self) -> bool:
        """A job for the next level was submitted already (``run_level``'s ``ahead``)."""
        return self._ahead is not None

    def run_level(self, decided, commit, deadline=None, window=None, weigh=None,
                  ahead=False, rows=True, room=None) -> LevelOutcome:
        """One level on Spark. ``window``: sorted key arrays every partition may drop on
        sight (``Run.window``); each reaches the executors as a broadcast of its own, so a
        level's keys are pickled once on the driver and loaded once per Python worker,
        not once per window that holds them. ``weigh``: the frontier's keys, their
        parents' keys and the keys of the level before (``Run.last_levels``); with a
        partition key, the owners of the states two levels on are chosen to split
        them evenly as ``placement.predicted_weights`` guesses them, values that
        states move between preferably together (``placement.balanced_owners``).
        ``ahead``: submit the next level's job now (the caller expects that level on
        Spark, committed); a level run otherwise cancels it, and so does a stop.
        ``rows``: the level's keys and parents come to the driver (``Run.wants_rows``);
        else only their number does (``LevelOutcome.new_count``), and so for the job
        ahead. ``room``: how many more states the run may keep (``Run.room``; None: no
        bound); a level whose candidates could fill it is not expanded (the next level
        expands it first if the run goes on), so no bounded run expands a level past it."""
        decided = tuple(sorted(decided))
        self._rows_out = rows
        self.levels += 1
        job, self._ahead = self._ahead, None
        if job is not None and not commit:  # a job ahead commits; this level must not
            self._cancel(job)
            job = None
        expand = True  # a job ahead expands what it finds
        if job is None:
            window_bcs = self._window_bcs(window)
            table = self._owner_table(weigh, 2)
            first = None
            if self._next is None:  # blocks just placed: expand their frontier first
                first = self._submit(self.state, decided, window_bcs, False, True, True,
                                     table)
                if room is not None:  # the candidates' number decides what comes next
                    self.state, self._next = first.rdd, self._expanded(first, deadline)
                    first = None
            expand = commit and (room is None or self._candidates() < room)
            job = self._submit(first.rdd if first else self.state, decided, window_bcs,
                               True, commit, expand, table)
            if first is not None:
                self.state, self._next = first.rdd, self._expanded(first, deadline, job)
        cut = commit and self._cut_due() and (self._embedded or self.sc.getCheckpointDir())
        if ahead and expand and not cut and (room is None or self._fits_two(room)):
            # the driver's keys of the level before this one's frontier, the one before
            # that, and (in each task) its own keys of this one's frontier
            lag = None if window is None else window[-2:]
            self._ahead = self._submit(job.rdd, decided, self._window_bcs(lag), True, True,
                                       True, self._owner_table(weigh, 3), lagged=True)
        parts = self._await(job, deadline, self._ahead)
        if self._spool is not None and commit:  # the state stays job's: keep its files
            self._spool.prune(job.job)
        outcome = LevelOutcome()
        for gen, cov, settled, expand_s in self._next:
            outcome.generated += gen
            outcome.coverage.update(cov)
            outcome.settled.append(settled)
            outcome.timings["expand"] = max(outcome.timings.get("expand", 0.0), expand_s)
        keys, parents, visited_bytes, count = [], [], 0, 0
        for (nk, npar, found, vbytes, cands, (read_s, dedup_s), memory), _x in parts:
            visited_bytes += vbytes
            if memory is not None:  # the block's bytes in memory and on disk
                outcome.memory = tuple(a + b for a, b in zip(outcome.memory, memory))
            outcome.candidates += cands
            outcome.timings["read"] = max(outcome.timings.get("read", 0.0), read_s)
            outcome.timings["dedup"] = max(outcome.timings.get("dedup", 0.0), dedup_s)
            outcome.found.append(found)
            if nk is None:  # the rows stayed on the executors: npar is their number
                count += npar
            else:
                keys.append(nk)
                parents.append(npar)
                count += int(nk.size)
        if len(keys) == len(parts):
            outcome.new_keys = np.concatenate(keys)
            outcome.new_parents = np.concatenate(parents)
        outcome.new_count = count
        if commit:
            self.state, self._next = job.rdd, [x for _d, x in parts] if expand else None
            self._size = count
            self._visited_bytes = visited_bytes
            levels, held = self._since_cut
            self._since_cut = (levels + 1, held + visited_bytes)
            if cut and self._cut(window, deadline):
                self._since_cut = (0, 0)
        return outcome

    def _candidates(self) -> int:
        """The candidates (successors of the frontier) the level deduplicates."""
        return sum(x[0] for x in self._next)

    def _fits_two(self, room) -> bool:
        """Whether this level's new states and the next one's (which the job ahead
        expands), guessed from the candidates per frontier state, fit in ``room``."""
        n = self._candidates()
        return n + n * n / max(1, self._size) < room

    def _expanded(self, first, deadline, also=None) -> list:
        """The expansions' summaries of the expand-only job ``first``, once it is done."""
        return [x for _d, x in self._await(first, deadline, also)]

    def _window_bcs(self, window):
        return None if window is None else tuple(self._broadcast(k) for k in window)

    def _owner_table(self, weigh, steps):
        """The owner table of a job's output (None: owners by hash), guessed ``steps``
        levels after the frontier ``weigh`` describes."""
        if not (self.shift and self.nparts > 1 and weigh is not None and weigh[0].size):
            return None
        return balanced_owners(predicted_weights(*weigh, self.shift, steps), self.nparts,
                               value_links(weigh[0], weigh[1], self.shift))

    def _submit(self, parent, decided, window_bcs, dedup, commit, expand, table=None,
                lagged=False):
        """Submit one Spark job, ``level_tasks.step_task`` on every partition of
        ``parent`` and its records shuffled to their owners (only the map side runs now:
        the next level's task reads the rest). Returns at once."""
        self.jobs += 1
        task = level_tasks.step_task(self.core_bc, decided, self.nparts, window_bcs,
                                     self.summaries, self.jobs, dedup, commit, expand,
                                     table, lagged, self._spool and self._spool.dir,
                                     self._rows_out, self._spill_settings())
        rdd, handle = self._launch(parent, task)
        return _Job(self.jobs, rdd, handle)

    def _spill_settings(self):
        """What the next job's tasks need to spill (``spill.Settings``), or None. Its
        tasks may delete the runs that blocks of jobs up to ``settled`` retired: on an
        embedded master every job before this one has ended and no task reads its
        input again; elsewhere a lost partition is recomputed from the last lineage
        cut."""
        if self._runs is None:
            return None
        settled = self.jobs - 1 if self._embedded else self._cut_job
        return spill.Settings(self._runs.dir, self.spill_bound, settled, spill.FAN_IN)

    def _launch(self, parent, task):
        with job_group(self.sc, "kmc BFS level") as group:
            # Spark's map-stage job: a plain action would follow the map side with a
            # stage reading all the shuffled data back
            rdd, future = self._jobs.launch(parent, task)
        return rdd, (future, group)

    def _await(self, job, deadline, also=None):
        """Wait for ``job``; returns its summaries in partition order. Past the
        deadline the job (and ``also``, a job built on it) is cancelled, and the level
        does not count (LevelCancelled)."""
        future, group = job.handle
        fired = threading.Event()
        try:
            with cancel_at(self.sc, deadline, group, fired):
                future.get()
        except Exception:
            if also is not None:
                self._cancel(also)
                self._ahead = None
            if fired.is_set():
                raise LevelCancelled() from None
            raise
        return self._summaries(job.job)

    def _summaries(self, job):
        """The summaries of ``job``'s tasks, in partition order, taken out of the
        accumulator; entries of older jobs (tasks re-run to recover a lost partition,
        a cancelled job's) are dropped with them."""
        with level_tasks.SUMMARIES_LOCK:
            done = self.summaries.value
            mine = {pid: v for (j, pid), v in done.items() if j == job}
            for key in [k for k in done if k[0] <= job]:
                del done[key]
        return [level_tasks.with_rows(*mine[pid]) for pid in sorted(mine)]

    def _cancel(self, job) -> None:
        self.sc.cancelJobGroup(job.handle[1])

    def _drop_ahead(self) -> None:
        if self._ahead is not None:
            self._cancel(self._ahead)
            self._ahead = None

    def save(self, sc, url, nparts):
        self.state.filter(is_block).map(spool.opened_record) \
            .map(spill.inlined_record).saveAsPickleFile(url)

    def to_driver(self, core, fkeys, depth, visited=None):
        """Bring a small frontier back to the driver (the caller checks that it fits);
        the next level's candidates are left behind. Returns the DriverFrontier and the
        trace rows the blocks held (level -> (keys, parents)), which the driver keeps
        from now on. ``fkeys`` are the driver's keys of the frontier (its level
        ``depth``); ``visited`` every key found so far when the driver still holds
        them all (``Run.visited``): then only a non-packed frontier's states come from
        Spark, and nothing for a packed model, whose states are their keys."""
        self._drop_ahead()
        rows, fstates = {}, None
        if visited is None:
            records = [(p, spool.opened(r)) for p, r in self._flat_collect(_state_records)]
            visited, held, fstates = join_blocks(records)
            rows = block_rows(records)
        elif not core.packed:
            held, fstates = join_frontiers(self._flat_collect(frontier_of))
        else:
            held = fkeys
        if fkeys is None:  # the driver did not ask for the frontier's keys
            fkeys = held
        elif not np.array_equal(held, fkeys):
            raise RuntimeError("the frontier on Spark is not the driver's last level")
        self.release()
        return DriverFrontier(core, visited, fkeys, fstates, depth), rows

    def parents(self, lvl: int, keys: np.ndarray) -> dict:
        """key -> parent key for the ``keys`` (ascending) of level ``lvl``, from the
        trace rows the blocks hold: one job over the state."""
        return dict(self._flat_collect(level_tasks.parents_in(lvl, keys)))

    def level_rows(self, lvl: int) -> tuple:
        """(keys, parent keys) of every state level ``lvl`` found, from the trace rows
        the blocks hold: one job over the state."""
        got = self._flat_collect(level_tasks.rows_in(lvl))
        return np.concatenate([k for k, _p in got]), np.concatenate([p for _k, p in got])

    def _flat_collect(self, fn) -> list:
        return self.state.flatMap(fn).collect()

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
        if self._ahead is not None and not self._size:
            # the job ahead of a level that found nothing expands nothing: let it end
            # rather than cancel it, which would cost its Python workers
            try:
                self._await(self._ahead, None)
            except Exception:  # noqa: BLE001  (its result is not needed)
                pass
            self._ahead = None
        self._drop_ahead()
        self._drop_windows(())
        if self._kept is not None:
            self._kept.unpersist()
            self._kept = None
        if self._spool is not None:
            self._spool.close()
        if self._runs is not None:
            self._runs.close()
