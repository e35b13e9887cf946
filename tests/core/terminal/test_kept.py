"""A host's kept terminals (melgui/core/terminal/kept.py) send a flood in few, large
messages, whole and in order, and a key's echo at once."""

from __future__ import annotations

import asyncio
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
