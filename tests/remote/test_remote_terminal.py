"""Terminals whose program runs on the remote host (melgui/core/terminal/kept.py there,
melgui/remote/remote_pty.py here), read by the same reader and emulator as a local pane,
through a local command that behaves like a container's exec (tests/remote/local_target.py):

- output arrives in order and whole, a flood included (the host's window and the acks);
- keys typed here reach the program;
- the link killed: the program runs on there, what it wrote meanwhile shows after the
  reconnect, and typing works again;
- the remote host killed: the pane says so, and its program's end is told;
- output that starts past what this side has (more missed than the host keeps) resets the
  screen first.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from melgui.core.terminal.reader import PtyReader
from melgui.core.terminal.screen import TerminalScreen
from melgui.remote.link import Link
from melgui.remote.remote_pty import ACK_STEP, HUNG_UP, RESET, RemotePty
from tests.remote.fixtures import box_link, make_link, until
from tests.remote.local_target import box_host, host_pid


class Screen:
    """A remote terminal read as a pane reads it: its reader thread and emulator."""

    def __init__(self, pty: RemotePty) -> None:
        self.pty = pty
        self.emulator = TerminalScreen(pty.columns, pty.rows, scrollback=100_000)
        self.reader = PtyReader(pty, self.emulator, lambda: None)
        self.reader.start()

    def text(self) -> str:
        return self.emulator.text(100_000)

    async def shows(self, words: str) -> None:
        await until(lambda: words in self.text(), f"{words!r} on the screen:\n{self.text()}")

    def close(self) -> None:
        self.reader.stop()
        self.pty.close()


async def open_screen(link: Link, folder: Path, command: str | None) -> Screen:
    return Screen(await link.open_terminal(str(folder), command, 100, 30))


async def test_a_remote_terminal_shows_its_output_and_takes_keys(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    async with box_link(tmp_path, folder) as link:
        screen = await open_screen(
            link, folder, "echo ready-$((40+2)); read line; echo got-$line; pwd"
        )
        await screen.shows("ready-42")
        screen.pty.write(b"hello\r")
        await screen.shows("got-hello")
        await until(lambda: screen.reader.exit_code is not None, "the program's end")
        assert screen.reader.exit_code == 0
        assert str(folder) in screen.text()  # it ran in the folder there
        screen.close()


async def test_a_flood_arrives_whole_and_in_order(tmp_path: Path) -> None:
    """About 6 MB: more than the host's window and its kept tail, so the acks pace it."""
    folder = tmp_path / "project"
    folder.mkdir()
    async with box_link(tmp_path, folder) as link:
        screen = await open_screen(link, folder, "seq 1 800000")
        await until(lambda: screen.reader.exit_code is not None, "seq to end", 240)
        expected = sum(len(f"{n}\r\n") for n in range(1, 800001))
        assert screen.reader.fed == expected
        lines = [line for line in screen.text().splitlines() if line.strip()]
        assert lines[-1] == "800000"
        tail = [int(line) for line in lines[-5000:]]
        assert tail == list(range(795001, 800001))  # in order, nothing lost or doubled
        screen.close()


async def test_a_terminal_runs_on_across_a_killed_link_and_shows_what_it_missed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    script = (
        "echo before; echo s >> started; while [ ! -e go ]; do sleep 0.05; done; "
        "echo after-$(cat go); read line; echo typed-$line"
    )
    async with box_link(tmp_path, folder) as link:
        screen = await open_screen(link, folder, script)
        await screen.shows("before")
        first = link.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        (folder / "go").write_text("while-away\n")  # it goes on there, link or not
        await until(lambda: link.reconnects >= 1, "the reconnect")
        await screen.shows("after-while-away")
        screen.pty.write(b"again\r")
        await screen.shows("typed-again")
        await until(lambda: screen.reader.exit_code is not None, "the program's end")
        assert screen.reader.exit_code == 0
        assert (folder / "started").read_text() == "s\n"  # it ran once
        assert screen.text().count("before") == 1  # nothing shown twice
        screen.close()


async def test_a_killed_remote_host_ends_its_terminals_in_plain_words(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    runtime = tmp_path / "run"
    with box_host(runtime):
        link = make_link(tmp_path, folder)
        await link.open()
        try:
            screen = await open_screen(link, folder, "echo up; sleep 60")
            await screen.shows("up")
            pid = host_pid(runtime)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            await until(lambda: screen.reader.exit_code is not None, "the terminal's end")
            assert screen.reader.exit_code == HUNG_UP
            await screen.shows("program ended with it")
            assert "the melgui host on" in screen.pty.note
            screen.close()
        finally:
            await link.aclose()


class Heard:
    """A link as a RemotePty sees it, remembering what it was asked to send."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, object]]] = []

    def terminal_notify(self, method: str, **params: object) -> bool:
        self.sent.append((method, params))
        return True

    def forget_terminal(self, term_id: str) -> None:
        return None


async def test_output_past_what_this_side_has_resets_the_screen_first() -> None:
    heard = Heard()
    pty = RemotePty(heard, "t1", "sh", 80, 24)
    try:
        pty.output(0, b"abc")
        pty.output(10, b"xyz")  # 7 bytes were missed: a reset, then the kept tail
        pty.output(11, b"yzw")  # heard again from an older offset: only what is new
        got = pty.read()
        assert got == b"abc" + RESET + b"xyzw"
        assert pty.offset == 14
        assert heard.sent == []  # a few bytes: no acknowledgement (the host's window is far)
        pty.output(14, b"x" * ACK_STEP)  # in the pipe: acknowledged, all that came so far
        assert heard.sent == [("term/ack", {"term": "t1", "through": 14 + ACK_STEP})]
        while pty.read():
            pass
        pty.ended(0)
        assert pty.read() == b"" and pty.eof and pty.poll() == 0
    finally:
        pty.finish()
