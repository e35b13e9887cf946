"""Real programs in real pseudo-terminals, read through the emulator."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from melgui.core.terminal.pty_session import (
    PtyError,
    PtySession,
    command_argv,
    process_alive,
    session_members,
)
from melgui.core.terminal.screen import TerminalScreen

BASH = ["bash", "--norc", "--noprofile", "-i"]


class Term:
    """A pty session and its screen, pumped by hand."""

    def __init__(self, argv: list[str], cwd: Path, columns: int = 80, rows: int = 24) -> None:
        self.pty = PtySession(argv, cwd=cwd, columns=columns, rows=rows, env=_quiet_env())
        self.screen = TerminalScreen(columns, rows)

    def pump(self) -> None:
        while chunk := self.pty.read():
            self.screen.feed(chunk)
            self.pty.write(self.screen.take_replies())

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            if predicate():
                return
            time.sleep(0.01)
        raise AssertionError(f"timed out; screen:\n{self.screen.text()}")

    def wait_text(self, needle: str, timeout: float = 10.0) -> None:
        self.wait_for(lambda: needle in self.screen.text(), timeout)

    def send(self, text: str) -> None:
        self.pty.write(text.encode())


def _quiet_env() -> dict[str, str]:
    # A minimal environment: nothing of the developer's shell setup reaches the child.
    return {"PATH": "/usr/bin:/bin", "PS1": "$ ", "HOME": tempfile.gettempdir(), "LANG": "C.UTF-8"}


@pytest.fixture
def term_factory(tmp_path: Path) -> Iterator[Callable[..., Term]]:
    made: list[Term] = []

    def make(argv: list[str], columns: int = 80, rows: int = 24) -> Term:
        term = Term(argv, tmp_path, columns, rows)
        made.append(term)
        return term

    yield make
    for term in made:
        term.pty.close(grace=0.5)


def test_bash_echo_colours_and_exit_code(term_factory: Callable[..., Term]) -> None:
    term = term_factory(BASH)
    term.wait_text("$")
    term.send("echo hello-$((6*7))\n")
    term.wait_text("hello-42")
    term.send("printf '\\033[1;31mRED\\033[0m \\033[4mUNDER\\033[0m\\n'\n")
    term.wait_for(lambda: "RED UNDER" in term.screen.screen_text())
    runs = [
        run
        for row in term.screen.visible_lines()
        for run in row
        if run.text.startswith(("RED", "UNDER"))
    ]
    red = next(run for run in runs if run.text.startswith("RED"))
    under = next(run for run in runs if run.text.startswith("UNDER"))
    assert red.style.fg == 1 and red.style.bold
    assert under.style.underline and under.style.fg is None
    term.send("exit 3\n")
    term.wait_for(lambda: term.pty.poll() is not None)
    assert term.pty.exit_code == 3


def test_python_interactive(term_factory: Callable[..., Term]) -> None:
    term = term_factory(["python3", "-i", "-q"])
    term.wait_text(">>>")
    term.send("print(sum(range(101)))\n")
    term.wait_text("5050")
    term.send("exit()\n")
    term.wait_for(lambda: term.pty.poll() is not None)
    assert term.pty.exit_code == 0


def test_less_enters_and_leaves_alternate_screen(
    term_factory: Callable[..., Term], tmp_path: Path
) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(200)))
    term = term_factory(BASH)
    term.wait_text("$")
    term.send("echo before-less\n")
    term.wait_text("before-less")
    term.send("less long.txt\n")
    term.wait_for(lambda: term.screen.alt_screen and "line 5" in term.screen.screen_text())
    assert "before-less" not in term.screen.screen_text()
    term.send("q")
    term.wait_for(lambda: not term.screen.alt_screen)
    term.wait_for(lambda: "before-less" in term.screen.screen_text())
    assert "line 5\n" not in term.screen.screen_text()


def test_vi_alternate_screen_and_app_cursor(term_factory: Callable[..., Term]) -> None:
    term = term_factory(["vi", "-u", "NONE", "-N", "notes.txt"])
    term.wait_for(lambda: term.screen.alt_screen)
    term.send("ihello vi\x1b")
    term.wait_text("hello vi")
    term.send(":wq\r")
    term.wait_for(lambda: term.pty.poll() is not None)
    assert term.pty.exit_code == 0


def test_resize_reaches_the_program(term_factory: Callable[..., Term]) -> None:
    term = term_factory(BASH, columns=80, rows=24)
    term.wait_text("$")
    term.send("tput cols\n")
    term.wait_for(lambda: "\n80" in term.screen.screen_text())
    term.pty.resize(100, 30)
    term.screen.resize(100, 30)
    term.send("clear; tput cols; tput lines\n")
    term.wait_for(lambda: "100\n30" in term.screen.screen_text())


def test_child_starts_with_default_signals_whatever_melgui_inherited(
    hostile_parent: None, term_factory: Callable[..., Term]
) -> None:
    term = term_factory(["sh", "-c", "grep -E '^Sig(Ign|Blk)' /proc/self/status; sleep 5"])
    term.wait_text("SigBlk")
    term.wait_text("SigIgn")
    lines = dict(line.split(":") for line in term.screen.text().split("\n") if ":" in line)
    assert int(lines["SigBlk"].strip(), 16) == 0
    assert int(lines["SigIgn"].strip(), 16) == 0


@pytest.mark.usefixtures("hostile_parent")
def test_ctrl_c_interrupts_sleep_even_when_melgui_ignores_sigint(
    term_factory: Callable[..., Term],
) -> None:
    term = term_factory(BASH)
    term.wait_text("$")
    term.send("sleep 30\n")
    term.wait_for(lambda: any(_comm(pid) == "sleep" for pid in term.pty.session_pids()))
    term.send("\x03")
    term.wait_for(lambda: not any(_comm(pid) == "sleep" for pid in term.pty.session_pids()))
    term.send("echo after-sleep-$?\n")
    term.wait_text("after-sleep-130")


@pytest.mark.usefixtures("hostile_parent")
def test_sigterm_ends_a_program_even_when_melgui_ignores_it(
    term_factory: Callable[..., Term],
) -> None:
    term = term_factory(["sleep", "60"])
    os.kill(term.pty.pid, signal.SIGTERM)
    term.wait_for(lambda: term.pty.poll() is not None)
    assert term.pty.exit_code == -signal.SIGTERM


def test_ctrl_c_interrupts_sleep(term_factory: Callable[..., Term]) -> None:
    term = term_factory(BASH)
    term.wait_text("$")
    term.send("sleep 30\n")
    term.wait_for(lambda: any(_comm(pid) == "sleep" for pid in term.pty.session_pids()))
    term.send("\x03")
    term.wait_for(lambda: not any(_comm(pid) == "sleep" for pid in term.pty.session_pids()))
    term.send("echo after-sleep-$?\n")
    term.wait_text("after-sleep-130")


def test_close_ends_every_process_of_the_terminal(term_factory: Callable[..., Term]) -> None:
    term = term_factory(BASH)
    term.wait_text("$")
    # A background job ignoring SIGHUP, and a foreground sleep: both must go.
    term.send("(trap '' HUP; sleep 300) & sleep 200\n")
    term.wait_for(lambda: sum(_comm(pid) == "sleep" for pid in term.pty.session_pids()) == 2)
    pids = term.pty.session_pids()
    assert len(pids) >= 3
    term.pty.close(grace=0.3)
    assert not [pid for pid in pids if process_alive(pid)]
    assert session_members(term.pty.pid) == []
    assert term.pty.closed


def test_program_that_exits_by_itself_reaches_eof(term_factory: Callable[..., Term]) -> None:
    term = term_factory(command_argv("echo done-now; exit 5"))
    term.wait_for(lambda: term.pty.eof and term.pty.poll() is not None)
    term.pump()
    assert "done-now" in term.screen.text()
    assert term.pty.exit_code == 5


def test_killed_program_reports_signal(term_factory: Callable[..., Term]) -> None:
    term = term_factory(["sleep", "60"])
    os.kill(term.pty.pid, signal.SIGTERM)
    term.wait_for(lambda: term.pty.poll() is not None)
    assert term.pty.exit_code == -signal.SIGTERM


def test_missing_program_and_folder_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(PtyError, match="no-such-program"):
        PtySession(["no-such-program-xyz"], cwd=tmp_path)
    with pytest.raises(PtyError, match="does not exist"):
        PtySession(["bash"], cwd=tmp_path / "missing")


def test_runs_in_the_project_folder_with_xterm(
    term_factory: Callable[..., Term], tmp_path: Path
) -> None:
    term = term_factory(command_argv('printf "%s|%s\\n" "$PWD" "$TERM"; sleep 5'))
    term.wait_text("xterm-256color")
    cwd, term_name = term.screen.text().split("|")
    assert Path(cwd).resolve() == tmp_path.resolve()
    assert term_name == "xterm-256color"


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""
