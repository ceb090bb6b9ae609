"""Ctrl-C around Spark work (``CtrlC``): the handler only notes it, and the block ends
as a KeyboardInterrupt however it ends, even when no safe point checked it after; and the
JVM hanging up on the driver's accumulator server as a context stops is not printed."""
import os
import sys
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


def _hang_up_on_the_accumulator_server(quiet: bool):
    """PySpark's real accumulator server, a connection that sends one (empty) update and
    hangs up as a stopping JVM does: (the error the server's handler ended with, stderr)."""
    import socket
    import struct
    import threading
    from types import SimpleNamespace

    from pyspark.accumulators import _start_update_server

    from kmc.explorers.spark.session import quiet_hangup

    server = _start_update_server("token", False)
    try:
        if quiet:
            quiet_hangup(SimpleNamespace(_accumulatorServer=server))
        handled = threading.Event()
        seen = []
        inner = server.handle_error

        def spy(request, client_address):
            seen.append(sys.exc_info()[0])
            inner(request, client_address)
            handled.set()
        server.handle_error = spy
        with socket.create_connection(server.server_address[:2], timeout=10) as s:
            s.sendall(b"token" + struct.pack("!i", 0))
            assert s.recv(1) == b"\x01"  # the update was read and acknowledged
        assert handled.wait(10)
        return seen
    finally:
        server.shutdown()


def test_the_jvm_hanging_up_on_the_accumulator_server_prints_nothing(capfd):
    assert _hang_up_on_the_accumulator_server(quiet=False) == [EOFError]
    assert "EOFError" in capfd.readouterr().err  # what a stopped context printed
    assert _hang_up_on_the_accumulator_server(quiet=True) == [EOFError]
    assert capfd.readouterr().err == ""


def test_a_second_ctrl_c_inside_a_jvm_call_prints_no_traceback(caplog):
    """With a context, a second Ctrl-C interrupts at once, inside a py4j call if one
    runs: py4j then logs the interrupt's traceback on the root logger, as below (its
    GatewayClient.send_command). The run ends with its own one line; the log says
    nothing."""
    import logging

    class Context:
        def cancelAllJobs(self):
            pass
    with pytest.raises(KeyboardInterrupt):
        with CtrlC(Context()):
            _ctrl_c()
            try:  # a py4j call the second Ctrl-C cuts short
                _ctrl_c()
            except KeyboardInterrupt:
                logging.exception("KeyboardInterrupt while sending command.")
                raise
    assert not [r for r in caplog.records if "while sending" in r.getMessage()]
