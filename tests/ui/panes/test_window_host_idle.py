"""A melgui host that a window started and attached to, with nothing running, holds no
module it needs only once something runs (issue 30: its memory counts against the
window's). The real `melgui host` process lists what it imports on its log (Python's
`-X importtime`, set through the environment): pydantic-settings is not among them, nor
httpx with its command line's rich, click and pygments (the first HTTP client loads
them), nor tree-sitter (the first command read loads it), nor OpenSSL (asyncio's
ssl, hashlib, pydantic's secrets: about 4 MB resident; the first TLS client or digest of
data loads it). A connection over HTTP loads httpx at its first use (a leg, or the
window's model list asked of the host), still without its command line, and ssl with it."""

from __future__ import annotations

from typing import Any

import pytest

from melgui.core.config.settings import Settings
from melgui.host.remote_session import RemoteSession
from melgui.ui.window.host_view.view import _connection
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows
from tests.fakes.window import wait_until

LOADED_AT_FIRST_USE = ("pydantic_settings", "httpx", "rich", "click", "pygments", "tree_sitter")
OPENSSL = ("_ssl", "_hashlib")  # what loads libcrypto (ssl imports _ssl, hashlib _hashlib)


@pytest.fixture
def host_environ() -> dict[str, str]:
    return {"PYTHONPROFILEIMPORTTIME": "1"}  # each module the host imports, on its log


def imported(log: str) -> set[str]:
    """The modules an `-X importtime` log names (`import time: self | total | name`)."""
    return {
        line.rsplit("|", 1)[1].strip()
        for line in log.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }


def importers(log: str, module: str) -> list[list[str]]:
    """For each import of `module` in an `-X importtime` log, the modules that imported
    it, up to one imported at the top (the log names a module once it is imported,
    after what it imported, two spaces further in)."""
    rows = [
        (len(name) - len(name.lstrip()), name.strip())
        for line in log.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
        for name in [line.rsplit("|", 1)[1]]
    ]
    found = []
    for at, (depth, name) in enumerate(rows):
        if name != module:
            continue
        chain = []
        for outer_depth, outer in rows[at + 1 :]:
            if outer_depth < depth:
                chain.append(outer)
                depth = outer_depth
        found.append(chain)
    return found


def idle_host_modules(host: HostProcess, host_windows: HostWindows, window: Any) -> set[str]:
    """`window` attached, its main conversation opened in the host and measured (as its
    context meter asks), nothing running: what the host has imported."""
    run = host_windows.run
    view = host_windows.attach(window)
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
    host: HostProcess, host_windows: HostWindows
) -> None:
    window = host_windows.make(Settings())  # a new install's settings: the local model
    modules = idle_host_modules(host, host_windows, window)
    held = sorted(m for m in modules if m.split(".")[0] in LOADED_AT_FIRST_USE)
    assert held == []


def test_an_idle_host_with_a_window_attached_holds_no_openssl(
    host: HostProcess, host_windows: HostWindows
) -> None:
    window = host_windows.make(Settings())  # the local model: nothing speaks TLS yet
    modules = idle_host_modules(host, host_windows, window)
    assert "asyncio" in modules
    loaded = {module: importers(host.stderr(), module) for module in OPENSSL}
    # Nothing loads it but keyring (jaraco.context's urllib.request), which the host
    # reads here only because the tests name a keyring backend (tests/conftest.py): not
    # melgui's own imports, nor pydantic's secrets (pydantic 2.14 imports it with every
    # model class; the host runs it on first use), nor the new folder's first checkpoint
    # (its commit id from Python's own sha1).
    assert {
        module: [chain for chain in chains if chain[-1:] != ["keyring"]]
        for module, chains in loaded.items()
    } == {module: [] for module in OPENSSL}
    assert "hmac" not in modules  # secrets imported (by pydantic), not run


def test_a_host_speaking_http_loads_httpx_without_its_command_line(
    host: HostProcess, host_windows: HostWindows
) -> None:
    window = host_windows.make()  # the relay's connection
    assert "httpx" not in idle_host_modules(host, host_windows, window)  # made at first use
    # The window's model list, asked of the host, is the transport's first use.
    view = window.host_view
    said = host_windows.run(
        view.client.call(
            "models/list", folder=window.project_folder(), settings=_connection(window.settings)
        )
    )
    assert said["models"]  # the relay's model, listed by the host
    modules = imported(host.stderr())
    assert "httpx" in modules  # the relay's transport, made for it
    assert sorted(m for m in modules if m.split(".")[0] in ("rich", "click", "pygments")) == []
    assert "ssl" in modules  # with httpx, which asyncio's own TLS then has too
