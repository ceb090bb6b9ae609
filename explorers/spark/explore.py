"""``spark_bfs``: level-synchronous BFS with hash partitioning on Spark.

The loop mirrors ``explorers.bfs`` (same counts, same stopping rules, same result) and
owns only the level bookkeeping; a level runs on the driver while the frontier is small
and on Spark once it is large (``frontier.py``), with the same per-partition code
(``level.py``). Trace rows (key, parent key) of the levels explored on Spark stay with the
visited keys in the executors' blocks, on disk beyond ``KMC_SPARK_VISITED_MEM``
(``spill``); the driver keeps its own levels' rows (``rows.LevelRows``).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time

from kmc.explorers.core import Core
from kmc.explorers.errors import ExplorerError
from kmc.explorers.gcpause import without_cyclic_gc
from kmc.explorers.spark import checkpoint as ckpt
from kmc.explorers.spark import ckptfiles, level
from kmc.explorers.spark import spill
from kmc.explorers.spark.spill_dir import SpillSpace, local_disks
from kmc.explorers.spark.driver import DriverFrontier, join_blocks, owner_of
from kmc.explorers.spark.frontier import LevelCancelled, SparkFrontier
from kmc.explorers.spark.placement import default_partitions, place_by_partition_key
from kmc.explorers.spark.preflight import check_master
from kmc.explorers.spark.run import Run, driver_seconds, split_limit
from kmc.explorers.spark.tuning import env_number
from kmc.explorers.spark.watchdog import ExecutorWatch

#: a fixed driver threshold (frontier states) instead of the adaptive one (Run.limit)
DRIVER_LEVEL_MAX = env_number("KMC_SPARK_DRIVER_LEVEL", None, int)
#: a frontier comes back to the driver only while the visited set is at most this many
#: keys (16 bytes each, 8 for a packed model): beyond it, visited stays distributed
DRIVER_VISITED_MAX = env_number("KMC_SPARK_DRIVER_VISITED", 4000000, int)
#: cut the RDD lineage (``SparkFrontier._cut_due``) once the Spark levels since the last
#: cut number this many ...
LINEAGE_EVERY = env_number("KMC_SPARK_LINEAGE_LEVELS", 100, int)
#: ... or held this many bytes of visited keys in all (the state's size, summed over
#: those levels: what recovering a lost partition may replay, and about the size of
#: the shuffle files kept for it)
LINEAGE_BYTES = env_number("KMC_SPARK_LINEAGE_BYTES", 256 << 20, int)


@without_cyclic_gc
def spark_bfs(model, *, master=None, executors=None, partitions=None, checkpoint_dir=None,
              resume=False, max_states=None, max_depth=None, time_limit=None,
              stop_on_violation=False, symmetry=False, deadlock=False, progress=None,
              properties=None, core=None, driver_level_max=None, app_name=None):
    """Explore ``model`` exhaustively on Spark; returns the same CheckResult as BFS.

    ``master``: a Spark master URL (default: embedded ``local[executors or *]``, or the
    active context under spark-submit). ``partitions``: owner partitions of the visited
    set (default: ``placement.default_partitions`` of the cluster's parallelism).
    ``driver_level_max``: frontiers up to this size are expanded on the driver (0: every
    level on Spark; default: ``KMC_SPARK_DRIVER_LEVEL``, else the driver budget
    ``KMC_SPARK_DRIVER_SECONDS`` when set (``Run.limit``), else every level with at least
    as many states as owner partitions runs on Spark: ``run.split_limit``).
    """
    _options_ok(master=master, executors=executors, partitions=partitions,
                checkpoint_dir=checkpoint_dir, driver_level_max=driver_level_max,
                app_name=app_name, resume=resume)
    check_master(master, executors)
    checkpoint_dir = None if checkpoint_dir is None else os.fspath(checkpoint_dir)
    if resume and not checkpoint_dir:
        raise ExplorerError("--resume needs --checkpoint-dir DIR: the directory of the "
                            "interrupted run")
    core = core or Core(model, symmetry=symmetry, deadlock=deadlock, properties=properties)
    place_by_partition_key(core)
    level.for_tasks(core)
    held = contextlib.ExitStack()  # the checkpoint dir, held before its files are read:
    held.enter_context(ckptfiles.locked(checkpoint_dir))  # a busy one is named as busy
    try:
        if checkpoint_dir:
            saved = ckpt.precheck(checkpoint_dir, ckpt.identity(core, 0), resume,
                                  max_states, max_depth)
            if saved is not None:  # a local resume: its partitions known before Spark
                _same_partitions(checkpoint_dir, saved["partitions"], partitions)
        limit = driver_level_max if driver_level_max is not None else DRIVER_LEVEL_MAX
        if limit is None:
            driver_seconds(False, 1)  # a bad KMC_SPARK_DRIVER_SECONDS: before Spark starts
    except BaseException:
        held.close()
        raise
    from kmc.explorers.spark.preflight import explain_failure, from_spark
    from kmc.explorers.spark.interrupt import CtrlC
    from kmc.explorers.spark.session import is_local, probe_executors, spark_context

    # Ctrl-C from here on cancels the jobs and is raised between py4j calls (CtrlC); the
    # spill directory (KMC_SPARK_SPILL_DIR) is checked before Spark starts and goes
    # after it stopped
    with held, SpillSpace() as space, \
            spark_context(master, executors, app_name) as sc, CtrlC(sc):
        nparts = partitions or default_partitions(sc.defaultParallelism,
                                                  lumpy=bool(core.owner_shift))
        core_bc = sc.broadcast(_cloudpickle(_shippable(core)))
        if not is_local(sc.master):
            probe_executors(sc, core_bc, min(nparts, 2), space)
        store = start = None
        if checkpoint_dir:
            ident = ckpt.identity(core, nparts)
            with _unusable_as(checkpoint_dir):
                store, start = ckpt.open_store(sc, checkpoint_dir, ident, resume)
            if start is not None:
                saved = store.identity["partitions"]
                _same_partitions(checkpoint_dir, saved, partitions)
                nparts = saved
        lineage_dir = _lineage_dir(sc, store, space)
        budget = None if limit is not None else \
            driver_seconds(is_local(sc.master), sc.defaultParallelism)
        if limit is None and budget is None:
            limit = split_limit(nparts)
        run = Run(core, limit, stop_on_violation, max_states, max_depth, progress,
                  budget)
        # a partition's visited keys and trace rows beyond this many bytes go to disk
        # (``spill``), in a directory every task can read (None: no such directory)
        runs_base = space.runs_base(sc.master)
        bound = spill.default_bound(sc) if runs_base is not None else None

        def to_spark(frontier):
            return SparkFrontier.from_records(sc, core_bc, nparts, frontier.blocks(nparts),
                                              frontier.size, LINEAGE_EVERY, core.owner_shift,
                                              lineage_bytes=LINEAGE_BYTES, spill_bound=bound,
                                              spill_dir=runs_base)
        with CtrlC(sc) as ctrl_c, ExecutorWatch(sc) as watch:
            try:
                if start is None:
                    frontier = run.start(DriverFrontier)
                    if store is not None and frontier.size and not run.stopped_by:
                        store.save_level(0, frontier, nparts, run.meta(0, frontier.mode))
                else:
                    frontier = _restore(sc, core_bc, nparts, store, start, run, bound,
                                        runs_base)
                result = explore(run, frontier, to_spark, store, nparts, time_limit,
                                 ctrl_c.check)
                from kmc.explorers.spark import liveness  # fair cycles, on the executors
                # driver_level_max 0 keeps everything off the driver, liveness included
                result = liveness.finish(sc, core, core_bc, result, max_depth,
                                         driver_max=0 if limit == 0 else None)
                result.extra["spark"].update(
                    partitions=nparts, master=sc.master,
                    driver_seconds=budget, driver_level_max=limit,
                    **space.summary(runs_base, bound))
                ctrl_c.check()  # a Ctrl-C in the last level, the counterexamples or above
                return result
            except KeyboardInterrupt:
                _interrupted(store, checkpoint_dir)
                raise
            except Exception as e:
                if ctrl_c.event.is_set():  # the level failed because Ctrl-C cancelled it
                    _interrupted(store, checkpoint_dir)
                    raise KeyboardInterrupt() from None
                if watch.lost:  # the cluster lost every executor: its jobs were cancelled
                    raise watch.error() from None
                if store is not None and store.unverified_error(e):
                    raise store.unverified_error(e) from None
                if from_spark(e):
                    raise explain_failure(e) from None
                raise
            finally:
                core_bc.unpersist()
                if lineage_dir and lineage_dir.startswith(tempfile.gettempdir()):
                    shutil.rmtree(lineage_dir, ignore_errors=True)


def _interrupted(store, checkpoint_dir) -> None:
    if store is not None and store.completed_levels():
        print(f"kmc: spark: the first {store.completed_levels()[-1] + 1} levels are saved in "
              f"{checkpoint_dir}: rerun with --resume to continue", file=sys.stderr)


def explore(run, frontier, to_spark=None, store=None, nparts=1, time_limit=None,
            check_interrupt=None):
    """The level loop. ``to_spark(frontier)`` moves a driver frontier to Spark once it
    outgrows ``run.limit()`` (None: stay on the driver, as the tests do);
    ``check_interrupt()`` raises KeyboardInterrupt after a Ctrl-C, between levels."""
    deadline = None if time_limit is None else run.t0 + time_limit
    try:
        while frontier.size:
            if check_interrupt is not None:
                check_interrupt()
            if run.stopped_by or run.should_stop():  # the initial states crossed max_states
                break
            if deadline is not None and time.perf_counter() > deadline:
                run.stopped_by = "time_limit"
                break
            frontier = _placed(run, frontier, to_spark)
            commit = not run.at_bound()
            t = time.perf_counter()
            try:
                outcome = frontier.run_level(run.decided(), commit, deadline, run.window(),
                                             run.last_levels(), _ahead(run, frontier),
                                             run.wants_rows(store is not None), run.room())
            except LevelCancelled:
                run.stopped_by = "time_limit"
                break
            if not run.absorb(outcome, frontier, time.perf_counter() - t):
                break
            if check_interrupt is not None:
                check_interrupt()  # a level cut short by Ctrl-C is not saved
            if store is not None and not run.stopped_by:
                store.save_level(run.depth - 1, frontier, nparts,
                                 run.meta(run.depth - 1, frontier.mode))
            if run.stopped_by:
                break
    except BaseException:  # Ctrl-C, a failed level: no job of this run left running
        with contextlib.suppress(Exception):  # the context may have gone with the level
            frontier.release()
        raise
    result = run.result(frontier)
    run.close()  # the trace rows' files: the counterexamples are rebuilt by now
    frontier.release()
    return result


#: the most owner partitions a run splits its visited set into: each level keeps a list
#: per partition, and 64 executors of 16 cores need about 4,096
MAX_PARTITIONS = 1 << 16


def _options_ok(**options) -> None:
    """The options a caller passes in (the CLI's flags are checked by its parser), each of
    its type before Spark starts: a mistake names the option."""
    for name, v in options.items():
        if v is None:
            continue
        if name == "resume":
            if not isinstance(v, bool):
                raise ExplorerError(f"resume must be True or False, got {v!r}")
        elif name in ("executors", "partitions", "driver_level_max"):
            least = 0 if name == "driver_level_max" else 1
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise ExplorerError(f"{name} must be a whole number >= {least}, got {v!r}")
            if name == "partitions" and v > MAX_PARTITIONS:
                raise ExplorerError(f"partitions {v}: at most {MAX_PARTITIONS} owner "
                                    "partitions (a few per executor core is plenty)")
        elif name == "checkpoint_dir":
            if not isinstance(v, (str, os.PathLike)) or not str(v):
                raise ExplorerError(f"checkpoint_dir must be a directory path or URL (a str), "
                                    f"got {v!r}")
        elif not isinstance(v, str) or not v:
            raise ExplorerError(f"{name} must be a non-empty str, got {v!r}")


def _same_partitions(checkpoint_dir, saved: int, partitions) -> None:
    """A resume runs on the partitions its checkpoint was written with."""
    if partitions and partitions != saved:
        raise ExplorerError(f"the checkpoint in {checkpoint_dir} was written with {saved} "
                            f"partitions: drop --partitions or pass --partitions {saved}")


def _placed(run, frontier, to_spark):
    """Large frontiers go to Spark; once the frontier shrinks again (a BFS tail) and the
    visited set fits the driver, levels come back to it: a Spark level costs a fixed
    ~0.1-0.3 s that small levels do not repay. Hysteresis (half the threshold) avoids
    moving back and forth."""
    limit = run.limit()
    if frontier.mode == "driver":
        return to_spark(frontier) if to_spark and frontier.size > limit else frontier
    # a job already submitted for this level (``ahead``) costs less to wait for than the
    # driver's level, and cancelling it would cost its Python workers (Spark replaces
    # the workers of a cancelled task)
    if _fits_driver(run, frontier.size) and not frontier.pending:
        visited, fkeys = run.visited()
        driver, rows = frontier.to_driver(run.core, fkeys, run.depth - 1, visited)
        run.take_rows(rows)
        return driver
    return frontier


def _fits_driver(run, size) -> bool:
    """A Spark frontier of ``size`` states goes back to the driver (``_placed``)."""
    return size <= run.limit() // 2 and run.unique <= DRIVER_VISITED_MAX


def _ahead(run, frontier) -> bool:
    """Whether a Spark level should submit the next level's job before it ends
    (``SparkFrontier.run_level``): when that level will run on Spark too, committed. The
    frontier the next level expands is guessed to grow as the last one did (if it
    shrinks faster, that level stays on Spark all the same: ``_placed``); a stop cancels
    the job, at the price of the work it did meanwhile."""
    if frontier.mode != "spark" or (run.max_depth is not None
                                    and run.depth + 1 >= run.max_depth):
        return False
    guess = run.frontier_size * run.growth()
    if run.max_states is not None and run.unique + guess > run.max_states:
        return False
    return not _fits_driver(run, guess)


def _restore(sc, core_bc, nparts, store, depth, run, spill_bound=None, spill_dir=None):
    """The frontier saved after level ``depth``, and ``run`` as it was then. The bounds
    and the block files are checked against the level's metadata before Spark reads
    anything."""
    last = store.load_level(depth, rows=False)
    ckpt.check_bounds(last, run.max_states, run.max_depth, store.path)
    store.check_blocks(depth, last)
    run.restore(depth, lambda d, rows: store.load_level(d, rows))
    rdd = store.load_blocks(depth)
    if last["mode"] == "driver":
        visited, fkeys, fstates = join_blocks(rdd.collect())
        if (visited.size, fkeys.size) != (last["unique"], last["frontier"]):
            raise ckpt.tampered(store.path, f"blocks/{depth}",
                                f"holds {visited.size:,} states and a frontier of "
                                f"{fkeys.size:,}, not the {last['unique']:,} and "
                                f"{last['frontier']:,} levels/{depth}.json records")
        return DriverFrontier(run.core, visited, fkeys, fstates, depth)
    state = rdd.partitionBy(nparts, owner_of)
    return SparkFrontier(sc, core_bc, nparts, state, run.frontier_size, LINEAGE_EVERY,
                         run.core.owner_shift, lineage_bytes=LINEAGE_BYTES,
                         spill_bound=spill_bound, spill_dir=spill_dir)


@contextlib.contextmanager
def _unusable_as(checkpoint_dir: str):
    """A checkpoint directory that cannot be made or written (a local path, or a file
    system Hadoop cannot reach) is the user's to fix: one ExplorerError line."""
    try:
        yield
    except OSError as e:
        raise ExplorerError(f"checkpoint dir {checkpoint_dir} cannot be written "
                            f"({e.strerror or e}): choose a directory you can write to") \
            from None
    except Exception as e:
        if type(e).__name__ != "Py4JJavaError":
            raise
        cause = str(getattr(e, "java_exception", e)).splitlines()[0][:300]
        raise ExplorerError(f"checkpoint dir {checkpoint_dir} cannot be used ({cause}): "
                            "check its URL and that its file system is reachable") from None


def _lineage_dir(sc, store, space=None):
    """Spark's RDD checkpoints need storage every executor can reach: the checkpoint dir
    when given, else a temporary directory when every executor is on this machine, else
    the run's directory in KMC_SPARK_SPILL_DIR (``space``). An embedded master needs
    none (``SparkFrontier._cut``)."""
    from kmc.explorers.spark.spool import embedded

    if embedded(sc.master):
        return None
    if store is not None:
        d = f"{store.url}/lineage"
    elif local_disks(sc.master):
        d = tempfile.mkdtemp(prefix="kmc-lineage-")
    elif space is not None and space.dir is not None:
        d = space.lineage_url()  # removed with the space
    else:
        return None  # a remote cluster without shared storage: lineage is not cut
    sc.setCheckpointDir(d)
    return d


def _shippable(core):
    """A copy of the Core without this run's discoveries (executors record their own)."""
    import copy

    c = copy.copy(core)
    c.discoveries = {}
    c.pending_witness = []
    return c


def _cloudpickle(obj) -> bytes:
    # compiled (packed) models hold exec-generated functions: plain pickle cannot carry
    # them, cloudpickle (bundled with PySpark) pickles them by value
    from pyspark import cloudpickle

    return cloudpickle.dumps(obj)

