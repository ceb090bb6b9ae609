"""Lineage cuts of the Spark state (``SparkFrontier``'s part that bounds recovery): when a
cut is due, and the cut itself."""
from __future__ import annotations

import threading
import time

from kmc.explorers.spark.jobs import cancel_at, job_group


class LineageCuts:
    """Mixed into ``frontier.SparkFrontier``, whose attributes it uses: ``sc``,
    ``state``, ``lineage_every``, ``lineage_bytes``, ``_since_cut``, ``_embedded``,
    ``_kept``, ``_ahead``, ``jobs`` and ``_drop_windows``."""

    def _cut_due(self) -> bool:
        """Whether this level ends with a lineage cut: once the levels since the last
        cut number ``lineage_every`` (this one included) or held ``lineage_bytes`` of
        visited keys in all (through the level before: this one's are known at its
        end). A cut is a pass over the whole state (on a cluster, a write of it), paid to
        bound what recovering a lost partition replays and the shuffle files kept for
        it; a run of a few seconds spent more on it than any recovery would replay
        (TwoPhase rm=8: its one cut, at the 10th of 13 Spark levels, took 35-40 ms on
        local[2], and no job ran ahead across it)."""
        levels, held = self._since_cut
        return bool(self.lineage_every and levels + 1 >= self.lineage_every) \
            or bool(self.lineage_bytes and held >= self.lineage_bytes)

    def _cut(self, window, deadline=None) -> bool:
        """Cut the lineage, so recovering a lost partition starts here and the shuffles
        before it can go. On a cluster the state is written to the checkpoint directory
        (a lost executor takes its blocks with it). An embedded master has no executor
        to lose apart from the driver itself, so the block manager keeps the state (a
        local checkpoint): one JVM pass instead of two and a write, and the cut took 45-52
        ms instead of 129-143 ms on TwoPhase rm=8 (local[2], two runs each).

        The time limit (``deadline``) holds here too: a cut it reaches is left undone,
        since the run stops before another level and nothing will recover through it
        (writing a large state to a cluster's checkpoint directory can take minutes).
        Returns whether the lineage was cut."""
        if deadline is not None and time.perf_counter() >= deadline:
            return False
        jrdd = self.state._jrdd
        if self._embedded:
            jrdd.rdd().localCheckpoint()
        else:
            self.state.checkpoint()
        fired = threading.Event()
        try:
            with job_group(self.sc, "kmc lineage cut") as group, \
                    cancel_at(self.sc, deadline, group, fired):
                jrdd.count()  # a JVM pass over the shuffle output that keeps or writes it
        except Exception:
            if fired.is_set():
                return False
            raise
        if not self.state.isCheckpointed():
            return False
        self._drop_windows(window or ())  # no recovery reaches back past the cut
        if self._kept is not None:  # the state the last local cut kept
            self._kept.unpersist()
        self._kept = self.state if self._embedded else None
        self._cut_job = self.jobs if self._ahead is None else self.jobs - 1
        return True
