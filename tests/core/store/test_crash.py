"""SIGKILL the app in the middle of a streaming leg and of a running tool, start it again
on the same data folder: every message sent before the kill is there, and the history
is one the scripted relay accepts (each call answered once, in order)."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from melgui.core.store.paths import DATABASE_NAME
from tests.fakes import (
    RecordedRequest,
    ScriptedRelay,
    done,
    hold,
    http_error,
    text,
    tool_call,
    tool_calls,
)

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and process groups")

AppCommand = Callable[[str, Path, list[str]], list[str]]


def crash_app(url: str, folder: Path, extra: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "tests.core.store.crash_app",
        "--url", url, "--folder", str(folder), *extra,
    ]  # fmt: skip


class App:
    """The app as a subprocess in its own process group, on one data folder."""

    running: ClassVar[list[App]] = []  # killed at teardown if a test fails half-way

    def __init__(self, command: list[str], data: Path) -> None:
        env = dict(os.environ, MELGUI_DATA_DIR=str(data), PYTHONPATH=str(REPO))
        self.proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        App.running.append(self)

    @classmethod
    def kill_all(cls) -> None:
        for app in cls.running:
            if app.proc.poll() is None:
                os.killpg(app.proc.pid, signal.SIGKILL)
            app.proc.communicate(timeout=10)
        cls.running.clear()

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.communicate(timeout=10)  # reaps it and closes the pipes

    def finish(self, timeout: float = 30) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err


def read_db(data: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read the app's database from outside, as a second process would."""
    conn = sqlite3.connect(f"file:{data / DATABASE_NAME}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def db_shows(data: Path, sql: str, expected: list[tuple[Any, ...]]) -> Callable[[], bool]:
    def condition() -> bool:
        try:
            return read_db(data, sql) == expected
        except sqlite3.OperationalError:  # not created yet
            return False

    return condition


def wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the app did not get there in time")
        time.sleep(0.05)


def pairing_problem(messages: list[dict[str, Any]]) -> str | None:
    """What a strict server would reject: a call without its result right after, or a
    result that answers no call."""
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.get("role") == "tool":
            return f"tool result {message.get('tool_call_id')!r} answers no call"
        for call in message.get("tool_calls") or []:
            if index >= len(messages) or messages[index].get("tool_call_id") != call["id"]:
                return f"call {call['id']!r} has no result right after it"
            index += 1
    return None


def strict_leg(
    check: Callable[[list[dict[str, Any]]], None],
) -> Callable[[RecordedRequest], list[Any]]:
    def leg(request: RecordedRequest) -> list[Any]:
        problem = pairing_problem(request.messages)
        if problem is None:
            try:
                check(request.messages)
            except AssertionError as exc:
                problem = f"unexpected history: {exc}"
        if problem is not None:
            return [http_error(400, {"error": {"message": problem}})]
        return [text("Welcome back."), done()]

    return leg


@pytest.fixture
def relay() -> Iterator[ScriptedRelay]:
    server = ScriptedRelay()
    gate = threading.Event()
    server.gate = gate  # type: ignore[attr-defined]
    with server:
        try:
            yield server
        finally:
            App.kill_all()
            gate.set()
    server.check()


def melgui_exec(url: str, folder: Path, extra: list[str]) -> list[str]:
    return [
        sys.executable, "-m", "melgui", "exec", "--transport", "relay", "--url", url,
        "--approve", "all", "--folder", str(folder), *extra,
    ]  # fmt: skip


def gui_app(url: str, folder: Path, extra: list[str]) -> list[str]:
    """The window (offscreen); `--continue` becomes reopening the newest conversation."""
    extra = ["--reopen-latest" if arg == "--continue" else arg for arg in extra]
    return [
        sys.executable, "-m", "tests.ui.history.gui_app",
        "--url", url, "--folder", str(folder), *extra,
    ]  # fmt: skip


@pytest.fixture(
    params=[
        pytest.param(crash_app, id="crash_app"),
        pytest.param(melgui_exec, id="melgui_exec"),
        pytest.param(gui_app, id="gui_app", marks=pytest.mark.slow),
    ]
)
def app_command(request: pytest.FixtureRequest) -> AppCommand:
    command: AppCommand = request.param
    return command


def test_kill_during_a_streaming_leg(
    relay: ScriptedRelay, app_command: AppCommand, tmp_path: Path
) -> None:
    data, folder = tmp_path / "data", tmp_path / "project"
    folder.mkdir()
    relay.script([text("The answer "), text("starts here."), hold(relay.gate)])  # type: ignore[attr-defined]
    app = App(app_command(relay.base_url, folder, ["What is in this folder?"]), data)
    wait_until(
        db_shows(
            data,
            "SELECT content, partial FROM messages WHERE seq = 1",
            [("The answer starts here.", 1)],
        )
    )
    app.kill()
    ((cid,),) = read_db(data, "SELECT id FROM conversations")

    def check(messages: list[dict[str, Any]]) -> None:
        assert [(m["role"], m["content"]) for m in messages] == [
            ("user", "What is in this folder?"),
            ("assistant", "The answer starts here."),
            ("user", "Go on."),
        ]

    relay.script(strict_leg(check))
    again = App(app_command(relay.base_url, folder, ["--continue", "Go on."]), data)
    code, out, err = again.finish()
    assert code == 0, err + out
    assert read_db(data, "SELECT id FROM conversations") == [(cid,)]
    ((note,),) = read_db(data, "SELECT text FROM notes WHERE kind = 'repair'")
    assert "app stopped" in note
    rows = read_db(data, "SELECT role, content, partial FROM messages ORDER BY seq")
    assert rows == [
        ("user", "What is in this folder?", 0),
        ("assistant", "The answer starts here.", 0),
        ("user", "Go on.", 0),
        ("assistant", "Welcome back.", 0),
    ]


def test_kill_during_a_running_tool(
    relay: ScriptedRelay, app_command: AppCommand, tmp_path: Path
) -> None:
    data, folder = tmp_path / "data", tmp_path / "project"
    folder.mkdir()
    command = "echo $$ > sleeper.pid; exec sleep 60"
    relay.script(
        [text("Running it."), tool_calls(tool_call("run_command", {"command": command}, id="c1"))]
    )
    app = App(app_command(relay.base_url, folder, ["Run the long job"]), data)
    try:
        wait_until(
            lambda: (
                (folder / "sleeper.pid").exists()
                and read_db(data, "SELECT state FROM tool_calls") == [("running",)]
            )
        )
        app.kill()
    finally:
        pid_file = folder / "sleeper.pid"
        if pid_file.exists() and pid_file.read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)

    def check(messages: list[dict[str, Any]]) -> None:
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
        assert messages[0]["content"] == "Run the long job"
        assert messages[1]["content"] == "Running it."
        assert messages[1]["tool_calls"][0]["function"]["name"] == "run_command"
        assert messages[2]["tool_call_id"] == "c1"
        assert "interrupted" in messages[2]["content"]

    relay.script(strict_leg(check))
    again = App(app_command(relay.base_url, folder, ["--continue", "Did it finish?"]), data)
    code, out, err = again.finish()
    assert code == 0, err + out
    assert read_db(data, "SELECT call_id, state, result_status FROM tool_calls") == [
        ("c1", "interrupted", "interrupted")
    ]
    notes = read_db(data, "SELECT kind, text FROM notes")
    assert any(kind == "repair" and "interrupted" in note for kind, note in notes)
