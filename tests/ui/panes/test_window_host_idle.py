"""A melgui host that a window started and attached to, with nothing running, holds no
module it needs only once something runs (issue 30: its memory counts against the
window's). The real `melgui host` process lists what it imports on its log (Python's
`-X importtime`, set through the environment): pydantic-settings is not among them, nor
httpx with its command line's rich, click and pygments (the first HTTP client loads
them), nor tree-sitter (the first command read loads it). A connection over HTTP loads
httpx with the session, still without its command line."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from melgui.core.config.settings import Settings
from melgui.host.remote_session import RemoteSession
from melgui.ui.window.host_view.view import attach_host
from tests.fakes import ScriptedRelay
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.fakes.window import relay_settings, wait_until

LOADED_AT_FIRST_USE = ("pydantic_settings", "httpx", "rich", "click", "pygments", "tree_sitter")


@pytest.fixture
def host() -> Iterator[HostProcess]:
    with runtime_dir() as runtime:
        process = HostProcess(runtime)
        process.env["PYTHONPROFILEIMPORTTIME"] = "1"  # each module it imports, on its log
        process.start()
        try:
            yield process
        finally:
            process.stop()


def imported(log: str) -> set[str]:
    """The modules an `-X importtime` log names (`import time: self | total | name`)."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in log.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def idle_host_modules(host: HostProcess, window: Any, run: Any) -> set[str]:
    """The window attached, its main conversation opened in the host and measured (as
    its context meter asks), nothing running: what the host has imported."""
    view = run(attach_host(window, run(host.client("window"))))
    session = window.session
    assert isinstance(session, RemoteSession) and session.source == "main"
    run(wait_until(lambda: bool(session.session_id), timeout=30))  # opened in the host
    run(session.ask("context/measure"))
    listed = run(view.client.call("session/list"))
    assert [(s["id"], s["source"], s["busy"]) for s in listed] == [
        (session.session_id, "main", False)
    ]
    modules = imported(host.stderr())
    assert {"melgui.host.host", "melgui.desk.desk"} <= modules  # the log lists the host's
    return modules


def test_an_idle_host_with_a_window_attached_holds_only_what_it_uses(
    host: HostProcess, make_window: Any, run: Any
) -> None:
    modules = idle_host_modules(host, make_window(Settings()), run)  # a new install's
    held = sorted(m for m in modules if m.split(".")[0] in LOADED_AT_FIRST_USE)
    assert held == []


def test_a_host_speaking_http_loads_httpx_without_its_command_line(
    host: HostProcess, make_window: Any, run: Any, scripted_relay: ScriptedRelay
) -> None:
    modules = idle_host_modules(host, make_window(relay_settings(scripted_relay)), run)
    assert "httpx" in modules  # the relay's transport, made with the session
    assert sorted(m for m in modules if m.split(".")[0] in ("rich", "click", "pygments")) == []
