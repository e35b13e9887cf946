"""melgui exec's answer reaches an unbuffered stdout (PYTHONUNBUFFERED, common in
containers) in one write per turn of the loop, not one system call per streamed token."""

from __future__ import annotations

import asyncio
import io
import sys

import pytest

from melgui import headless, lean_start
from melgui.core.thread.changes import TextAppended


class CountingRaw(io.RawIOBase):
    """A file descriptor's end, as stdout's FileIO is under PYTHONUNBUFFERED."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.writes.append(bytes(data))
        return len(data)


def test_streamed_tokens_reach_an_unbuffered_stdout_in_one_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = CountingRaw()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(raw, write_through=True))  # type: ignore[type-var]
    lean_start.buffer_stdout()
    printer = headless.Printer(sys.stdout, as_json=False)

    async def stream() -> None:
        for n in range(500):  # what one read of a fast server carries, handled together
            printer.observe(TextAppended(seq=n, index=0, text=f"tok{n} "))
        await asyncio.sleep(0)  # the loop's turn ends: what arrived is flushed

    asyncio.run(stream())
    assert len(raw.writes) == 1
    assert b"".join(raw.writes) == "".join(f"tok{n} " for n in range(500)).encode()
