"""Ctrl-C around Spark work (``CtrlC``): the handler only notes it, and the block ends
as a KeyboardInterrupt however it ends, even when no safe point checked it after."""
import os
import signal
import time

import pytest

from kmc.explorers.spark.interrupt import CtrlC


def _ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # the handler runs here: it only notes the Ctrl-C


def test_a_ctrl_c_after_the_last_check_still_ends_the_block_as_interrupted():
    before = signal.getsignal(signal.SIGINT)
    ran_on = []
    with pytest.raises(KeyboardInterrupt):
        with CtrlC() as ctrl_c:
            ctrl_c.check()
            _ctrl_c()
            ran_on.append(True)  # the block is not cut short
    assert ran_on and signal.getsignal(signal.SIGINT) is before


def test_an_error_after_a_ctrl_c_ends_the_block_as_interrupted():
    with pytest.raises(KeyboardInterrupt):
        with CtrlC():
            _ctrl_c()
            raise RuntimeError("a job cancelled by the Ctrl-C")


def test_a_block_inside_another_shares_its_ctrl_c():
    seen = []
    with pytest.raises(KeyboardInterrupt):
        with CtrlC() as outer:
            _ctrl_c()
            with CtrlC() as inner:
                seen.append(inner.event is outer.event and inner.event.is_set())
    assert seen == [True]


def test_no_ctrl_c_no_interrupt():
    with CtrlC() as ctrl_c:
        ctrl_c.check()
    assert not ctrl_c.event.is_set()
