"""The mutation run's worker pool: one forked child per task, results in task order,
a time limit per task, and no child left behind once the run returns."""
from __future__ import annotations

import os
import time

from kmc.mutate.pool import DIED, TIMEOUT, run_tasks


def _answer(x):
    return {"x": x, "pid": os.getpid()}


def _die():
    os._exit(3)  # ends without answering


def _sleep():
    time.sleep(30)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_results_come_in_task_order_and_every_child_is_reaped():
    tasks = [(_answer, (k,), None) for k in range(6)]
    tasks[2] = (_die, (), None)
    tasks[4] = (_sleep, (), 0.5)
    got = list(run_tasks(tasks, jobs=2))
    assert [i for i, _r in got] == list(range(6))
    assert got[2][1] == {"status": DIED, "exitcode": 3}
    assert got[4][1] == {"status": TIMEOUT}
    answered = [r for i, r in got if i not in (2, 4)]
    assert [r["x"] for r in answered] == [0, 1, 3, 5]
    assert all(_gone(r["pid"]) for r in answered)  # exited and joined, not zombies


def test_tasks_start_and_come_back_in_the_order_given():
    """``order`` starts the tasks in that order, the longest expected first
    (``longest_first``), and results come back in it, whatever order they end in."""
    from kmc.mutate.pool import longest_first

    costs = [1, 5, 0, 5, 3]
    order = longest_first(costs)
    assert order == [1, 3, 4, 0, 2]
    tasks = [(_answer, (k,), None) for k in range(5)]
    got = list(run_tasks(tasks, jobs=2, order=order))
    assert [i for i, _r in got] == order
    assert [r["x"] for _i, r in got] == order
