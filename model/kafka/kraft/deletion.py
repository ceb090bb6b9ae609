"""A deleted replica's log on a broker, in two steps: renamed to ``-delete`` when the
broker applies the deletion, removed later by the kafka-delete-logs task
(``logmanager``, "Deletion"; LogManager.asyncDelete, LogManager.deleteLogs).

The window between the two steps matters only to a restart: a crash leaves the
``-delete`` directory on disk, and the next LogManager.startup queues it again
(LogManager.loadLog: the DeleteDirSuffix branch, before the stray check) instead of
loading it. Nothing else reads a renamed directory: it left currentLogs before the
rename, so no request, fetcher, stray check or property sees it.

Reduction (sound for every property, for the same reason): the window is kept only
while a crash is left in the budget. Without one, the rename and the removal are one
step (``replicas.apply_delta`` without ``rename``); the last crash removes every other
broker's ``-delete`` directories at once, and the broker that crashed last removes its
own when its LogManager starts (``on_load``), since no later crash can leave them on
disk again. A scenario without crashes or without deletions never has the window, so
its states are the same as with a one-step deletion.
"""
from __future__ import annotations

from kmc.model.kafka.kraft import logmanager as lm
from kmc.model.kafka.kraft.state import LOGS_LOADED, RUNNING


def has_window(bounds) -> bool:
    """Scenarios where the window can matter: a broker may crash and a topic be
    deleted."""
    return bounds.crashes > 0 and bounds.deletes > 0


def renames(model, w) -> bool:
    """Whether a deletion applied now leaves a ``-delete`` directory (else it is
    removed at once): only while a crash is left."""
    return model.delete_window and w.budget.crashes > 0


def candidates(model, w, b: int) -> list:
    """``("delete-logs", b, partition, topic_id)`` for each ``-delete`` directory of
    broker ``b`` the kafka-delete-logs task can remove: the task runs once LogManager
    has started (LogManager.startupWithConfigOverrides schedules it after loadLogs),
    so not while the broker is down, halted or still catching up."""
    br = w.brokers[b - 1]
    if not br.deleting or br.status not in (LOGS_LOADED, RUNNING):
        return []
    return [("delete-logs", b, p, t) for p, t in br.deleting]


def delete_logs(model, w, b: int, p: int, topic_id: int):
    """LogManager.deleteLogs removes the ``-delete`` directory of partition ``p``
    (UnifiedLog.delete): KIP-516 "Deletion" step 3, after Kafka's file.delete.delay.ms."""
    br = w.brokers[b - 1]
    br = br._replace(deleting=lm.remove_deleted(br.deleting, p, topic_id))
    return w._replace(brokers=w.brokers[:b - 1] + (br,) + w.brokers[b:])


def on_last_crash(brokers: tuple, crashed: int) -> tuple:
    """The last crash of the budget: every broker but the crashed one removes its
    ``-delete`` directories now (no later crash can leave them for a restart)."""
    return tuple(br if i == crashed or not br.deleting else br._replace(deleting=())
                 for i, br in enumerate(brokers, 1))


def on_load(model, w, deleting: tuple) -> tuple:
    """The ``-delete`` directories a starting LogManager keeps queued
    (LogManager.loadLog -> addLogToBeDeleted): all of them while a crash is left,
    else none (removed at once: no crash can follow)."""
    return deleting if renames(model, w) else ()
