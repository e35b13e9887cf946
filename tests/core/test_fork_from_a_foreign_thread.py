"""A child started with a preexec function from a thread `threading` did not start (a
QThread of the window's executor) while another thread holds threading's shutdown lock
(one starting or ending) must not hang: Python 3.11's after-fork clean-up in the child
took that lock before renewing it. The window tests hung on it once under nohup."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap

from tests.fakes.exec import ROOT

SCRIPT = textwrap.dedent(
    """
    import _thread, signal, subprocess, threading
    from melgui.core.runtime import processes

    signal.signal(signal.SIGQUIT, signal.SIG_IGN)  # as under nohup: the child needs a reset
    done, codes = threading.Event(), []

    def start():  # a thread threading knows nothing of, as a QThread
        try:
            preexec = processes.child_preexec()
            assert preexec is not None, "no reset needed: the fork path is not taken"
            codes.append(subprocess.Popen(["true"], preexec_fn=preexec).wait())
        finally:
            done.set()

    with threading._shutdown_locks_lock:  # held by a thread starting or ending
        _thread.start_new_thread(start, ())
        done.wait(10)
    print("exit", codes)
    """
)


def test_a_child_forked_from_a_foreign_thread_starts() -> None:
    runner = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = runner.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):  # a child that hung, and its caller
            os.killpg(runner.pid, signal.SIGKILL)
        runner.wait()
    assert "exit [0]" in out, out
