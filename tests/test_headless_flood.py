"""A leg that never ends: melgui stops reading at a cap, in bounded memory and time.

The server is a raw loopback socket that streams relay `delta` events and never sends
`done`: 600 MB of text, then silence. `melgui exec` must give up at its cap on a leg's
text with a message that names the cap, and its peak resident memory (the kernel's
ru_maxrss of the real child, read through a fresh launcher so pytest's own high-water
mark is not counted: `run_measured`) must stay far below what 600 MB of text would take.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.exec import ROOT
from tests.fakes.process_memory import run_measured

FLOOD_BYTES = 600 * 1024 * 1024
MAX_RSS = 400 * 1024 * 1024
BOUND = 60.0  # seconds: a hostile case ends within this


class FloodServer:
    """Answers every POST with an SSE stream of `event` lines that never ends."""

    def __init__(self, event: bytes) -> None:
        self.event = event
        self.sent = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _serve(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            threading.Thread(target=self._flood, args=(connection,), daemon=True).start()

    def _flood(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(BOUND)  # a slow reader is waited for, up to the bound
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            connection.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
            )
            batch = self.event * 64
            try:
                while self.sent < FLOOD_BYTES and not self._stop.is_set():
                    connection.sendall(batch)
                    self.sent += len(batch)
                self._stop.wait()  # never ends the stream
            except OSError:
                return  # the client stopped reading

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._listener.close()


@pytest.fixture
def flood() -> Iterator[FloodServer]:
    piece = "flood " * 680  # about 4 KB of text per delta
    server = FloodServer(f"event: delta\ndata: {json.dumps({'text': piece})}\n\n".encode())
    yield server
    server.close()


def run_exec(args: list[str], out: Path) -> tuple[int, int, str]:
    """`melgui exec ARGS` as a child: its exit status, peak RSS in bytes, and stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.open("wb") as stdout, (out.parent / "stderr").open("w+b") as stderr:
        argv = [sys.executable, "-m", "melgui", "exec", *args]
        code, peak = run_measured(argv, env, stdout, stderr, BOUND)
        stderr.seek(0)
        return code, peak, stderr.read().decode(errors="replace")


def test_a_text_flood_ends_at_the_cap_in_bounded_memory(flood: FloodServer, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    code, peak, stderr = run_exec(
        ["--url", flood.url, "--folder", str(folder), "go"], tmp_path / "stdout"
    )
    assert code == 1, stderr  # failed, not killed at the bound
    assert "answer text in this leg passed 16 MB" in stderr
    assert "Internal error" not in stderr and "LegTooLarge" not in stderr, stderr
    print(f"peak RSS {peak / 2**20:.0f} MB")
    assert peak < MAX_RSS, f"peak RSS {peak / 2**20:.0f} MB"
    assert flood.sent < FLOOD_BYTES
    assert (tmp_path / "stdout").stat().st_size > 15 * 1024 * 1024  # the text up to the cap


def test_sigterm_ends_a_flooded_exec_at_once(flood: FloodServer, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "melgui", "exec", "--url", flood.url, "--folder", str(folder), "go"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    while flood.sent == 0 and child.poll() is None:
        time.sleep(0.02)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=BOUND)
    assert child.returncode == 130, stderr
    assert b"cancelled" in stderr
