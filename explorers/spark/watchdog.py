"""A cluster that lost every executor: without this, a level's job waits for resources
forever (Spark keeps its tasks pending until some executor comes back). A thread asks the
driver how many executors it has, about once a second; once there has been none for
``KMC_SPARK_WAIT`` seconds, it cancels the running jobs (and any submitted later) and
the run ends with ``error()``, one line. Not started for an embedded master, whose
executors are the driver's own process."""
from __future__ import annotations

import threading
import time

from kmc.explorers.errors import ExplorerError
from kmc.explorers.spark.session import EXECUTOR_WAIT_S, executor_count, is_local


class ExecutorWatch:
    def __init__(self, sc, wait_s: float | None = None, every_s: float = 1.0):
        self.sc, self.every_s = sc, every_s
        self.wait_s = EXECUTOR_WAIT_S if wait_s is None else wait_s
        self.lost = False
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        if not is_local(self.sc.master):
            self._thread = threading.Thread(target=self._watch, name="kmc-executors",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *_):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        return False

    def _watch(self) -> None:
        since = None
        while not self._stop.wait(self.every_s):
            try:
                executors = executor_count(self.sc)
            except Exception:  # the context stopped: the run is ending anyway
                return
            if executors > 0:
                since = None
                continue
            since = since if since is not None else time.monotonic()
            if time.monotonic() - since >= self.wait_s:
                self.lost = True
                try:
                    self.sc.cancelAllJobs()
                except Exception:
                    return

    def error(self) -> ExplorerError:
        return ExplorerError(f"the Spark master {self.sc.master} has had no executor for "
                             f"{self.wait_s:.0f} s (its workers were lost or stopped), so "
                             "the run stopped: restart the workers (`kmc cluster status`) "
                             "and run again (with --resume if it had --checkpoint-dir), or "
                             "raise KMC_SPARK_WAIT")
