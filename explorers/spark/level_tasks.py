"""The function Spark runs on executors, wrapped around ``level.dedup``/``level.expand``.

Records are (partition id, tagged tuple). A partition of the state holds one block
("B", visited keys (a sorted array, or beyond ``KMC_SPARK_VISITED_MEM`` a buffer and
sorted runs on disk: ``spill``), frontier keys, frontier states held as candidate blobs,
keys it shipped recently, the frontier's level, trace rows), the visited keys other
partitions passed on to it ("V", keys: the owner of a partition-key value may change
from level to level, ``placement.balanced_owners``) and the candidate batches ("C",
keys, parents, states) it owns for the next level; a level's task turns them into the
next block and the candidates after it. On an embedded master a record's payload waits
in its task's file and the record is (tag, ``spool.Spooled``).
"""
from __future__ import annotations

import gc
import pickle
import threading
import time

from kmc.explorers import keyarrays
from kmc.explorers.spark import keycodec, level, spool
from kmc.explorers.spark import spill as spill_mod
from kmc.explorers.spark.spill import PartitionVisited, Spilled
from kmc.explorers.visited import insert_sorted

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


def settle_garbage():
    """After a task: collect the cyclic garbage the task left (the youngest generation
    holds everything allocated since the last collection, the collector being off), then
    freeze what survives. A reused worker runs a full ``gc.collect()`` after every task;
    without the freeze that traverses every object the worker's memos and tables hold,
    which grow from task to task (lifecycle-large on local[2]: ~190,000 objects, 64 ms
    per task, 20% of the workers' CPU time). Frozen objects are still freed by reference
    counting when a bounded memo drops them."""
    gc.collect(0)
    gc.freeze()


def broadcast_value(bc):
    """``bc.value``, leaving the cyclic collector off: PySpark's ``Broadcast.load``
    switches it back on after unpickling a value, and a worker that ran with it on
    expanded and unpickled Kafka states 1.4x and 3x slower (see ``core_of``)."""
    value = bc.value
    gc.disable()
    return value


def step_task(core_bc, decided, nparts, window_bcs, summaries, job, dedup, commit, expand,
              table=None, lagged=False, spool_dir=None, rows_out=True, spill=None):
    """The one task of a Spark level on partition ``pid`` (``SparkFrontier`` says why
    one): merge the candidates this partition owns into its visited keys and check the
    new states (``dedup``; nothing is added or checked unless ``commit``), then expand
    the new frontier at once (``expand``) — or, on blocks just placed (no ``dedup``),
    the block's own frontier. Emits the new block to this partition and the next level's
    candidate batches to their owners, all through one shuffle; the summary reaches the
    driver as an accumulator update keyed by (job, partition).

    ``table``: the owners of this job's output (``level.owners``). The candidates and the
    visited keys go by the same table, so each owner gets the visited keys its next
    candidates meet; the keys whose owner changed travel as "V" records.

    ``lagged``: a job submitted before the level it follows ended
    (``SparkFrontier.run_level``'s ``ahead``), whose window lacks that level's keys:
    the partition's own keys of that level (its block's frontier) stand in for them.

    ``spool_dir``: on an embedded master, the directory where the task's records and
    trace rows wait in a file of its own, the shuffle and the accumulator carrying only
    where they are (``spool``).

    ``rows_out``: the summary carries the level's trace rows (new keys, parents) to the
    driver; else only their number (the rows stay in the block either way).

    ``spill``: where and beyond how many bytes a partition writes its visited keys and
    trace rows to disk (``spill.Settings``; None: they stay in memory). The summary
    reports the block's bytes in memory and on disk, and its runs, either way."""
    def run(pid, records):
        yield from task(pid, records)
        settle_garbage()  # the task's frame is gone: only what outlives it is left

    def task(pid, records):
        core = core_of(core_bc)
        t0 = time.perf_counter()
        block, batches, blobs, passed = None, [], [], []
        for _pid, rec in records:
            rec = spool.opened(rec)
            if rec[0] == "B":
                block = rec
            elif rec[0] == "V":
                passed.append(rec[1])
            elif dedup:  # "C": this level's candidates owned here
                batches.append((rec[1], rec[2], *level.unpack_batch(rec[3], core)))
                blobs.append(rec[3])
        if block is None:
            raise RuntimeError(f"partition {pid} lost its block: the blocks and the "
                               "candidates are not co-partitioned")
        _tag, visited, fkeys, held, recent, depth, rows = block
        before = fkeys
        dtype = core.key_dtype
        visited = PartitionVisited(visited, dtype) if isinstance(visited, Spilled) else \
            keycodec.unpack(visited)
        for keys in passed:  # disjoint from visited: another owner's keys until now
            visited = level._inserted(visited, keys)
        states = deduped = expanded = pieces = None
        if dedup:
            t1 = time.perf_counter()
            visited, fkeys, parents, states, disc, picked, pieces = level.dedup(
                core, decided, visited, batches, commit)
            times = (t1 - t0, time.perf_counter() - t1)  # reading the inputs, deduplicating
            head = ("T", fkeys, parents) if rows_out else ("N", int(fkeys.size))
            deduped = [head, disc, int(visited.nbytes),
                       sum(int(b[0].size) for b in batches), times]
            if states is not None:
                held = level.forwarded(blobs, [b[0].size for b in batches], picked)
            if commit:  # the level's trace rows stay here, with the visited keys
                depth += 1
                rows = (*rows, (depth, fkeys, parents))
        if expand:
            t = time.perf_counter()
            if states is None:  # a placed block: its states are still pickled
                states = level.unpack_frontier(held)
            window = None if window_bcs is None else \
                tuple(broadcast_value(b) for b in window_bcs)
            # the driver's window of visited keys (the levels before this partition's new
            # ones; a lagged job's ends a level earlier, and this partition's own keys of
            # that level fill in), else this partition's own recent ones
            if window is None:
                known = (fkeys, *recent)
            else:
                known = (fkeys, before, *window) if lagged and dedup else (fkeys, *window)
            out, generated, coverage, settled, shipped = level.expand(
                core, decided, fkeys, states, nparts, known, table, pieces)
            expanded = (generated, coverage, settled, time.perf_counter() - t)
            # the fallback is kept only while it is the one in use: under a window it
            # travelled through every level's shuffle for nothing (TwoPhase rm=8 on
            # local[2]: 0.7-0.9 JVM CPU s of 3.6-4.0). When the window ends, the first
            # two levels after it ship a few more stale candidates.
            recent = (shipped, *recent[:1]) if window is None else ()
        out_file = spool.TaskFile(spool_dir, job, pid)
        memory = None  # the block's (bytes in memory, bytes on disk, runs)
        try:
            if commit:
                if spill is not None and not isinstance(visited, PartitionVisited):
                    visited = PartitionVisited(visited, dtype)
                moved = {}
                if table is not None:
                    if isinstance(visited, PartitionVisited):
                        moved = visited.move_out(pid, nparts, core.owner_shift, table, job,
                                                 spill.directory)
                        buffer = visited.buffer
                    else:
                        buffer = visited
                    parts = level.split_by_owner(buffer, nparts, core.owner_shift, table)
                    for dest, idx in enumerate(parts):
                        if dest != pid and (idx.size or dest in moved):
                            keys = buffer[idx]
                            if dest in moved:
                                keys = insert_sorted(keys, moved[dest])
                            yield dest, out_file.put(("V", keys))
                    if isinstance(visited, PartitionVisited):
                        visited.buffer = buffer[parts[pid]]
                    else:
                        visited = buffer[parts[pid]]
                if isinstance(visited, PartitionVisited):
                    if spill is not None:
                        visited.collect_garbage(spill.settled)
                        rows = visited.spill(rows, spill.bound, job, pid, spill.directory,
                                             core.owner_shift, spill.fan_in)
                    memory = (int(visited.buffer.nbytes) + spill_mod.rows_bytes(rows),
                              visited.disk_bytes + spill_mod.rows_disk_bytes(rows),
                              len(visited.runs))
                    visited = visited.held()
                else:
                    memory = (int(visited.nbytes) + spill_mod.rows_bytes(rows), 0, 0)
                    visited = keycodec.pack(visited)
                # the block keeps the frontier (pickled) for a move back to the driver or
                # a checkpoint; the next level expands its own new states instead
                yield pid, out_file.put(("B", visited, fkeys, held, recent, depth, rows))
            if expand:
                for dest, (k, p, s, sp) in enumerate(out):
                    if k.size:
                        # states as one C-pickled blob: PySpark's own record serializer is
                        # cloudpickle, whose Python-level hooks cost ~3x more per state
                        yield dest, out_file.put(("C", k, p, level.pack_states(s, sp)))
            if deduped is not None:
                if rows_out:  # the trace rows: the bulk of the summary
                    deduped[0] = out_file.put(deduped[0])
                deduped = (*deduped, memory)
        finally:
            out_file.close()
        summaries.add({(job, pid): (deduped, expanded)})
    return run


def rows_in(lvl: int):
    """A flatMap function over a state's records: the trace rows (keys, parent keys) of
    level ``lvl`` each block holds."""
    def find(record):
        if record[1][0] != "B":
            return []
        rec = spool.opened(record[1])
        return [spill_mod.rows_of(entry)[1:] for entry in rec[6] if entry[0] == lvl]
    return find


def parents_in(lvl: int, keys):
    """A flatMap function over a state's records: the (key, parent key) trace rows of
    level ``lvl`` whose keys are among ``keys`` (an ascending key array), from the
    blocks that hold them. One such job per step walks a counterexample back
    (``SparkFrontier.parents``)."""
    def find(record):
        if record[1][0] != "B":
            return []
        rec = spool.opened(record[1])
        out = []
        for entry in rec[6]:
            if entry[0] != lvl:
                continue
            _lvl, rkeys, rparents = spill_mod.rows_of(entry)
            if rkeys.size:
                hit = level.member(keys, rkeys)
                out.extend(zip(keyarrays.to_ints(rkeys[hit]),
                               keyarrays.to_ints(rparents[hit])))
        return out
    return find


def with_rows(deduped, expanded):
    """A task's summary as the driver reads it: with its trace rows (new keys, parents)
    in it, read back from the task's file if they were spooled, or (None, their number)
    when the driver did not ask for them."""
    if deduped is not None:
        head = spool.opened(deduped[0])
        keys, parents = head[1:] if head[0] == "T" else (None, head[1])
        deduped = (keys, parents, *deduped[1:])
    return deduped, expanded


#: held while the driver's accumulator server thread adds a task's summary, and while
#: the level loop takes a job's summaries out (the job ahead's tasks may be ending)
SUMMARIES_LOCK = threading.Lock()


class Summaries:  # a pyspark AccumulatorParam (duck-typed: no PySpark import here)
    """Level summaries reach the driver as accumulator updates keyed by (job, partition):
    no second Python pass over the blocks is needed to collect them, and a task re-run by
    Spark after a failure overwrites its own entry with the same value."""

    def zero(self, _value):
        return {}

    def addInPlace(self, a, b):
        with SUMMARIES_LOCK:
            a.update(b)
        return a


def probe(core_bc, shared=None):
    """The probe job's task: load the model (which imports every module it needs) and,
    given ``shared`` (the run's directory in KMC_SPARK_SPILL_DIR), report whether this
    executor sees it and can write there (``spill_dir.reach``: None when it can)."""
    def run(_it):
        core_of(core_bc)
        if shared is None:
            return [None]
        from kmc.explorers.spark.spill_dir import reach

        return [reach(shared)]
    return run
