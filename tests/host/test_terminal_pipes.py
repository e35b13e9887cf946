"""A view on the host's machine (a --with-host window) hears its terminals through pipes
the real host passes over its socket (core/terminal/passed_pipes.py), not in messages:
the bytes come whole and in order, a terminal left with no view is heard again from what
the host kept (after a reset when it kept less than was written), and a host killed with
-9 leaves the bytes it had sent, then the pane's note."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from melgui.core.terminal.kept import RING
from melgui.host.client import HostClient
from melgui.remote.remote_pty import HUNG_UP, RESET, HostTerminals, RemotePty
from tests.fakes.host_process import HostProcess

ENDED_WITH_HOST = "the melgui host stopped; the program ended with it"


class Window:
    """A window's terminals in the host, as HostView wires them, recording what the
    window's thread heard in messages."""

    def __init__(self, client: HostClient) -> None:
        self.client = client
        self.terminals = HostTerminals(
            "the melgui host", lambda: client, here=True, source="window"
        )
        self.heard: list[str] = []
        client.on_notification = self._heard
        client.on_gone = lambda reason: self.terminals.end_all(ENDED_WITH_HOST)

    def _heard(self, method: str, params: dict[str, object]) -> None:
        self.heard.append(method)
        self.terminals.heard(method, params)  # type: ignore[arg-type]


async def read(pty: RemotePty, until: bytes | None = None, timeout: float = 60.0) -> bytes:
    """What the pane's reader would read: up to its end, or until `until` ends it."""
    got = bytearray()
    deadline = time.monotonic() + timeout
    while not pty.eof and not (until is not None and got.endswith(until)):
        assert time.monotonic() < deadline, f"not in time; read {len(got):,} bytes"
        data = pty.read()
        if data:
            got += data
        else:
            await asyncio.sleep(0.005)
    return bytes(got)


async def test_a_terminals_bytes_come_whole_and_in_order_through_its_pipe(
    host: HostProcess, tmp_path: Path
) -> None:
    window = Window(await host.client("window"))
    try:
        pty = await window.terminals.open(str(tmp_path), "seq 1 400000", 100, 30)
        assert pty.piped
        text = await read(pty)
        assert text.split(b"\r\n")[:-1] == [str(n).encode() for n in range(1, 400001)]
        assert pty.poll() == 0
        assert "term/exit" in window.heard
        assert "term/output" not in window.heard  # not a byte of it through the window's thread
    finally:
        await window.client.aclose()


async def left_running(host: HostProcess, folder: Path, command: str) -> str:
    """A terminal opened by a window that then went, Keep running (no view hears it)."""
    window = Window(await host.client("window"))
    pty = await window.terminals.open(str(folder), command, 100, 30)
    assert pty.piped
    window.terminals.keep_running()
    pty.terminate()
    pty.finish()
    await window.client.aclose()
    return pty.term_id


async def written(host: HostProcess, term_id: str, size: int) -> None:
    """Until the host has kept `size` bytes of the terminal's output, with no view."""
    client = await host.client("a look")
    try:
        while True:
            listed = {t["term"]: t for t in (await client.call("term/list"))["terminals"]}
            if listed[term_id]["end"] >= size:
                assert listed[term_id]["views"] == 0
                return
            await asyncio.sleep(0.05)
    finally:
        await client.aclose()


async def test_a_terminal_written_to_with_no_view_is_heard_again_whole(
    host: HostProcess, tmp_path: Path
) -> None:
    lines = [str(n).encode() for n in range(1, 100001)]
    expected = b"".join(line + b"\r\n" for line in lines) + b"done-42\r\n"
    term_id = await left_running(
        host, tmp_path, "sleep 0.5; seq 1 100000; echo done-$((6*7)); exec cat"
    )
    await written(host, term_id, len(expected))
    window = Window(await host.client("window again"))
    try:
        kept = await window.terminals.kept(str(tmp_path))
        assert [t["term"] for t in kept] == [term_id]
        pty = await window.terminals.adopt(window.client, kept[0], 100, 30)
        assert pty.piped
        assert await read(pty, until=b"done-42\r\n") == expected  # from its start, once
        pty.write(b"typed\r")  # cat there echoes it, then says it
        assert (await read(pty, until=b"typed\r\n")).count(b"typed") == 2
        assert "term/output" not in window.heard
    finally:
        await window.client.aclose()


async def test_more_than_the_host_keeps_is_heard_again_after_a_reset(
    host: HostProcess, tmp_path: Path
) -> None:
    """Written with no view, past what the host keeps: a reset, then the kept tail."""
    size = RING + 1_000_000
    flood = f"head -c {size} /dev/zero | tr '\\0' x"
    term_id = await left_running(
        host, tmp_path, f"sleep 0.5; {flood}; echo; echo tail-42; exec cat"
    )
    await written(host, term_id, size + len(b"\r\ntail-42\r\n"))
    window = Window(await host.client("window again"))
    try:
        kept = await window.terminals.kept(str(tmp_path))
        pty = await window.terminals.adopt(window.client, kept[0], 100, 30)
        got = await read(pty, until=b"tail-42\r\n")
        assert got.startswith(RESET + b"x")  # the screen reset before the kept tail
        assert len(got) == len(RESET) + RING  # what the host kept, all of it, once
        assert got[len(RESET) :].lstrip(b"x") == b"\r\ntail-42\r\n"
    finally:
        await window.client.aclose()


async def test_a_host_killed_leaves_what_it_sent_then_the_panes_note(
    host: HostProcess, tmp_path: Path
) -> None:
    window = Window(await host.client("window"))
    try:
        pty = await window.terminals.open(str(tmp_path), "seq 1 1000; exec cat", 100, 30)
        assert pty.piped
        before = await read(pty, until=b"1000\r\n")
        host.kill()
        after = await read(pty)
        assert before.split(b"\r\n")[:-1] == [str(n).encode() for n in range(1, 1001)]
        assert ENDED_WITH_HOST.encode() in after
        assert pty.poll() == HUNG_UP
    finally:
        await window.client.aclose()
