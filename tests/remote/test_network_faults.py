"""Network faults between the ssh client and a real sshd, made by a TCP forwarder the test
owns (tests/remote/fault_proxy.py), during `melgui exec --folder ssh://…`:

- the traffic black-holed while a call runs, until the link has been found dead, the call
  has ended there and a reconnect is waiting in the hole; then let through;
- every open TCP connection reset mid-call.

After each: the call ran once there (a side effect counted on the remote), and the model
saw exactly one result per call. The outage of a fixed 20 s is bench/bench_remote.py's
row; here each step waits on what it waits for.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.fakes import ScriptedRelay
from tests.remote.fault_proxy import FaultProxy
from tests.remote.fixtures import (
    Remote,
    assert_one_run_one_result,
    script_count,
    start_exec,
    wait_for,
)


@pytest.fixture
def proxy(remote: Remote) -> Iterator[tuple[FaultProxy, str]]:
    with FaultProxy(remote.server.port) as running:
        yield running, remote.server.alias_through(running.port)


class Lines:
    """A process's stderr, read as it comes (what the link says: reconnecting, …)."""

    def __init__(self, stream: object) -> None:
        self.stream = stream
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.append(line)

    def said(self, words: str) -> bool:
        return any(words in line for line in self.lines)

    def text(self) -> str:
        self._thread.join(30)
        self.stream.close()  # type: ignore[attr-defined]
        return "".join(self.lines)


def test_a_black_holed_link_comes_back_with_the_call_run_once_and_one_result(
    scripted_relay: ScriptedRelay, remote: Remote, proxy: tuple[FaultProxy, str]
) -> None:
    faults, alias = proxy
    folder = remote.folder("project-black-hole")
    script_count(scripted_relay, "echo s >> started; sleep 1; echo x >> counter; echo ran")
    process = start_exec(scripted_relay.base_url, remote, folder, "count", alias)
    said, out = Lines(process.stderr), Lines(process.stdout)
    try:
        wait_for(lambda: (folder / "started").exists(), what="the command to start there")
        faults.black_hole()
        # The call ends there, unheard; the heartbeat finds the link dead and a reconnect
        # waits in the hole: nothing has passed since.
        wait_for(lambda: (folder / "counter").exists(), what="the call to end there")
        wait_for(lambda: said.said("reconnecting to"), what="the link to be found dead")
        wait_for(lambda: faults.held >= 1, what="a reconnect to wait in the hole")
        assert process.poll() is None
        faults.let_through()
        process.wait(timeout=180)
    finally:
        faults.let_through()
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr, stdout = said.text(), out.text()
    assert process.returncode == 0, stderr
    assert "reconnected to" in stderr
    assert_one_run_one_result(scripted_relay, folder, stdout)


def test_a_dropped_tcp_connection_reconnects_with_the_call_run_once_and_one_result(
    scripted_relay: ScriptedRelay, remote: Remote, proxy: tuple[FaultProxy, str]
) -> None:
    faults, alias = proxy
    folder = remote.folder("project-dropped")
    script_count(scripted_relay, "echo s >> started; sleep 2; echo x >> counter; echo ran")
    process = start_exec(scripted_relay.base_url, remote, folder, "count", alias)
    said, out = Lines(process.stderr), Lines(process.stdout)
    try:
        wait_for(lambda: (folder / "started").exists(), what="the command to start there")
        connections = faults.accepted
        faults.drop()
        wait_for(lambda: faults.accepted > connections, what="a new connection")
        process.wait(timeout=180)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr, stdout = said.text(), out.text()
    assert process.returncode == 0, stderr
    assert "reconnected to" in stderr
    assert_one_run_one_result(scripted_relay, folder, stdout)
