"""A host's kept terminals (melgui/core/terminal/kept.py) send a flood in few, large
messages, whole and in order, and a key's echo at once; through a view's pipe, the output
goes raw, whole and in order, and a pipe nobody reads holds the program back."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

from melgui.core.terminal.kept import CHUNK, SEND_GAP_S, KeptTerminals


class AckingView:
    """A view that acknowledges each output as it is heard, as a pane's pipe takes it."""

    def __init__(self, terminals: KeptTerminals) -> None:
        self.terminals = terminals
        self.outputs: list[tuple[int, bytes, float]] = []
        self.exit: dict[str, Any] | None = None

    def notify(self, method: str, params: dict[str, Any], payload: bytes | None = None) -> None:
        if method == "term/output" and payload is not None:
            self.outputs.append((int(params["at"]), payload, time.monotonic()))
            through = int(params["at"]) + len(payload)
            asyncio.get_running_loop().call_soon(
                self.terminals.ack, str(params["term"]), self, through
            )
        elif method == "term/exit":
            self.exit = params

    def text(self) -> bytes:
        return b"".join(payload for _, payload, _ in self.outputs)

    def hand_pipe(self, term_id: str) -> int | None:
        return None  # messages only


class PipedView(AckingView):
    """A view on the host's machine: the output through a pipe, the rest in messages."""

    def __init__(self, terminals: KeptTerminals) -> None:
        super().__init__(terminals)
        self.read_fd, self.write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.got = bytearray()

    def read(self) -> bool:
        """Take what the pipe holds; False at its end."""
        while True:
            try:
                data = os.read(self.read_fd, 65536)
            except BlockingIOError:
                return True
            if not data:
                return False
            self.got += data


async def until(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.01)


async def test_a_flood_goes_in_few_messages_whole_and_in_order(tmp_path: Path) -> None:
    terminals = KeptTerminals()
    view = AckingView(terminals)
    started = time.monotonic()
    term = terminals.open(str(tmp_path), "seq 1 300000", 100, 30)
    terminals.attach(term.id, view, since=None)
    try:
        await until(lambda: view.exit is not None)
        spent = time.monotonic() - started
        text = view.text()
        assert text.split(b"\r\n")[:-1] == [str(n).encode() for n in range(1, 300001)]
        offsets = [at for at, _, _ in view.outputs]
        assert offsets == sorted(offsets) and offsets[0] == 0  # one after another, no gap
        # A message per read would be one per ~4 KiB (over 500 here): at most one a gap's
        # time, besides full chunks.
        assert len(view.outputs) <= spent / SEND_GAP_S + len(text) / CHUNK + 2
        assert len(view.outputs) < len(text) / 4096 / 2
    finally:
        await terminals.aclose()


async def test_an_echo_goes_at_once(tmp_path: Path) -> None:
    terminals = KeptTerminals()
    view = AckingView(terminals)
    term = terminals.open(str(tmp_path), "cat", 100, 30)
    terminals.attach(term.id, view, since=None)
    try:
        await asyncio.sleep(0.2)
        for word in (b"one", b"two"):
            typed = time.monotonic()
            terminals.input(term.id, word + b"\r")
            await until(lambda word=word: view.text().count(word) >= 2)  # the echo, then cat's
            heard = min(t for _, payload, t in view.outputs if word in payload)
            assert heard - typed < 1.0
    finally:
        await terminals.aclose()


async def test_a_pipe_view_and_a_message_view_both_get_the_output_whole_and_in_order(
    tmp_path: Path,
) -> None:
    terminals = KeptTerminals()
    piped, acking = PipedView(terminals), AckingView(terminals)
    term = terminals.open(str(tmp_path), "seq 1 300000", 100, 30)
    terminals.attach(term.id, piped, since=None, pipe=piped.write_fd)
    terminals.attach(term.id, acking, since=None)
    lines = [str(n).encode() for n in range(1, 300001)]
    try:
        deadline = time.monotonic() + 30
        while piped.read():  # the pipe's end comes once all of the output is in it
            assert time.monotonic() < deadline, "not in time"
            await asyncio.sleep(0.005)
        await until(lambda: piped.exit is not None and acking.exit is not None)
        assert bytes(piped.got).split(b"\r\n")[:-1] == lines
        assert acking.text() == bytes(piped.got)
        assert piped.outputs == []  # nothing of it in messages
        assert piped.exit is not None and piped.exit["at"] == len(piped.got)
        assert piped.exit["code"] == 0
    finally:
        os.close(piped.read_fd)
        await terminals.aclose()


async def test_a_pipe_nobody_reads_holds_the_program_back_and_its_close_lets_the_view_go(
    tmp_path: Path,
) -> None:
    window = 256 * 1024
    terminals = KeptTerminals(window=window)
    view = PipedView(terminals)
    term = terminals.open(str(tmp_path), "yes flood", 100, 30)
    terminals.attach(term.id, view, since=None, pipe=view.write_fd)
    try:
        await until(lambda: term.end > window)
        await asyncio.sleep(0.5)
        held = term.end
        await asyncio.sleep(0.5)
        assert term.end == held  # the pty is not read: `yes` waits, the host holds little
        assert held <= 64 * 1024 + window + 4 * CHUNK  # the pipe, the window, a read
        view.read()  # the view reads: the host writes on, and reads the pty again
        await until(lambda: term.end > held)
        os.close(view.read_fd)  # the pane closed (kept running): the view is let go
        await until(lambda: terminals.list()[0]["views"] == 0)
        running = term.end
        await until(lambda: term.end > running + 4 * window)  # read on, for the next view
        assert len(term.ring) <= terminals.ring_size
    finally:
        await terminals.aclose()
