"""A window that is a view of a real `melgui host` process (`melgui --with-host`): the
folder's MCP server runs in the host (its process is the host's child, none is the
window's), the main conversation the host runs calls it, and the window's MCP panel
shows its state as the host says it and restarts, disables and enables it there; a
server's question (a form) waits in the host and is answered from the window's form."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings, save_settings
from melgui.host.remote_session import RemoteSession
from melgui.tools.mcp.config import user_path
from melgui.ui.window.host_view.view import attach_host
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.fakes.host_windows import HostWindows, open_with_fake_server
from tests.fakes.mcp import fake_entry, use_servers
from tests.fakes.oauth import browser_env, guarded_server, opened
from tests.fakes.window import relay_settings, type_prompt, wait_until

SIGN_IN = "sign-in needed: asks for a sign-in"
SIGNED_OUT = "sign-in needed: signed out"


def servers_marked(mark: str) -> dict[int, int]:
    """Every live process whose environment carries MCP_FAKE_MARK=`mark`: pid → parent."""
    found: dict[int, int] = {}
    wanted = f"MCP_FAKE_MARK={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if wanted in environ and fields[0] != "Z":
            found[int(entry.name)] = int(fields[1])
    return found


def shown(window: Any) -> str:
    return str(window.chat.transcript.toPlainText())


def rows(panel: Any) -> list[tuple[str, str]]:
    return [(item.text(0), item.text(1)) for item in panel.server_items()]


def test_the_folders_mcp_server_runs_in_the_host_and_the_window_drives_it_there(
    host: HostProcess,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    mark = f"in-host-{uuid.uuid4().hex}"  # unique: other runs of the suite may be here too
    echo = tool_call("mcp__fake__echo", {"text": "hello from the host's server"}, id="e1")
    steps = tool_call("mcp__fake__steps", {"count": 3, "pause": 0.2}, id="s1")
    scripted_relay.script(
        [text("Asking it."), tool_calls(echo)],
        [tool_calls(steps)],
        [text("It answered."), done()],
    )
    window, view = open_with_fake_server(host_windows, trusted=True, env={"MCP_FAKE_MARK": mark})
    panel = window.mcp_panel
    assert view.mcp is not None and window.mcp.view is view.mcp
    assert host.process is not None
    try:
        ((name, state),) = rows(panel)
        assert name == "fake" and state.endswith(" tools")
        (pid, parent), *more = servers_marked(mark).items()
        assert more == [] and parent == host.process.pid != os.getpid()
        assert window.desk.mcp.servers == {}  # the window runs none of the folder's servers

        # The main conversation runs in the host and calls the host's server.
        session = window.session
        assert isinstance(session, RemoteSession)

        async def ask() -> None:
            type_prompt(qtbot, window, "ask the server")
            await wait_until(lambda: window.approvals.first() is not None, 30)
            assert window.approve_key()  # steps is no read-only tool: it asks first
            await wait_until(lambda: "It answered." in shown(window) and not session.busy, 30)

        run(ask())
        results = [m.content for m in session.conversation.messages if m.role == "tool"]
        assert results == ["hello from the host's server", "3 steps done"]
        # Its progress reports came from the host, for the call's card and inspector.
        last = view.mcp.progress_of("main", "s1")
        assert last is not None and last.line() == "3 of 3 · step 3 of 3"
        assert scripted_relay.legs_received[1].messages[-1]["content"] == results[0]
        # The inspector names the host's server for the call, as for a local one.
        assert window.mcp.tool_notes("mcp__fake__echo").startswith("MCP server fake")
        # Its prompt (a slash command), its resource (under @) and its log come from there.
        assert window.desk.prompt.commands.get("mcp__fake__review") is not None
        prompt = run(view.mcp.get_prompt("fake", "review", {"path": "a.py"}))
        assert prompt == "Review a.py for bugs. Be brief."
        part = run(view.mcp.read_resource("fake", "memo://plan"))
        assert (part.path, part.text) == (
            "fake:memo://plan",
            "1.0 ships on Friday; 1.1 a month later.",
        )
        log = run(view.mcp.log("fake"))
        assert log.log_name == "stderr" and "tools/call" in log.protocol

        # Restart from the window's panel: a new process, the host's child again.
        window.side_panel.reveal("mcp")
        panel.select("fake")
        assert panel.detail.isVisible() and "fake: ready" in panel.detail.text()
        assert "run in the melgui host" in panel.where.text() and panel.where.isVisible()
        window.resize(1300, 800)
        shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
        assert panel.grab().save(str(shots / "mcp-servers-in-host.png"))
        panel.restart_selected()
        run(wait_until(lambda: set(servers_marked(mark)) - {pid}, 30))
        run(wait_until(lambda: rows(panel)[0][1].startswith("ready, "), 30))
        ((again, parent),) = servers_marked(mark).items()
        assert again != pid and parent == host.process.pid

        # Disable there: the process ends and the panel says so; Enable starts it again.
        panel.select("fake")
        panel.toggle_selected()
        run(wait_until(lambda: rows(panel)[0][1] == "disabled" and not servers_marked(mark), 30))
        panel.select("fake")
        assert panel.enable_button.text() == "Enable"
        panel.toggle_selected()
        run(wait_until(lambda: rows(panel)[0][1].startswith("ready, "), 30))
        assert set(servers_marked(mark).values()) == {host.process.pid}
    finally:
        user_path().unlink(missing_ok=True)


def test_a_servers_form_waits_in_the_host_and_is_answered_from_the_window(
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    book = tool_call("mcp__fake__book", {}, id="b1")
    scripted_relay.script([text("Booking."), tool_calls(book)], [text("Booked."), done()])
    mark = f"form-{tmp_path.name}"
    window, view = open_with_fake_server(host_windows, trusted=True, env={"MCP_FAKE_MARK": mark})
    form = window.mcp.form
    try:
        session = window.session
        assert isinstance(session, RemoteSession)

        async def ask() -> None:
            type_prompt(qtbot, window, "book us a table")
            await wait_until(lambda: window.approvals.first() is not None, 30)
            assert window.approve_key()  # book is no read-only tool: it asks first
            await wait_until(lambda: form.isVisible(), 30)

        run(ask())
        assert "<b>fake</b>" in form.title.text() and "mcp__fake__book" in form.title.text()
        assert list(form.editors) == ["guest", "party", "budget", "outside", "course"]
        asks = view.mcp.asks  # the host's question, as the window holds it
        assert len(asks) == 1
        qtbot.keyClicks(form.editors["guest"], "Ada")
        window.resize(1200, 860)
        shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
        assert window.grab().save(str(shots / "mcp-form-from-host.png"))
        form.accept_button.click()
        run(wait_until(lambda: "Booked." in shown(window) and not session.busy, 30))
        results = [m.content for m in session.conversation.messages if m.role == "tool"]
        assert results == [
            'accepted {"guest":"Ada","party":2,"budget":40.5,"outside":false,"course":"main"}'
        ]
        run(wait_until(lambda: not form.isVisible() and not view.mcp.asks, 10))
    finally:
        user_path().unlink(missing_ok=True)


def test_sign_in_to_a_server_in_the_host_from_the_windows_panel(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path, tmp_path: Path
) -> None:
    """The host opens the browser ($BROWSER: the stand-in that follows the redirects) when
    the person presses Sign in in the window, and keeps the tokens; Sign out forgets them."""
    env, log = browser_env(tmp_path)
    with guarded_server() as server, runtime_dir() as runtime:
        use_servers({"guarded": {"url": server.url}})
        host = HostProcess(runtime)
        host.env.update(env)  # the host's browser, not the window's
        host.start()
        try:
            window = make_window(relay_settings(scripted_relay))
            window.mcp.wait_for_host()
            panel = window.mcp_panel
            run(attach_host(window, run(host.client("window"))))
            run(wait_until(lambda: rows(panel) == [("guarded", SIGN_IN)], 30))
            assert opened(log) == []  # nobody asked yet: no browser
            panel.select("guarded")
            assert panel.sign_in_button.isVisibleTo(panel)
            assert panel.sign_in_button.text() == "Sign in"
            panel.sign_in_button.click()
            run(wait_until(lambda: rows(panel) == [("guarded", "ready, 1 tool")], 30))
            assert len(opened(log)) == 1
            panel.select("guarded")
            assert panel.sign_in_button.text() == "Sign out"
            assert panel.detail.text().endswith("Signed in (OAuth)")
            panel.sign_in_button.click()
            run(wait_until(lambda: rows(panel) == [("guarded", SIGNED_OUT)], 30))
            run(window.pane_manager.aclose())  # closing: the host's end starts no new one
        finally:
            host.stop()
            user_path().unlink(missing_ok=True)


def test_a_sampling_request_waits_in_the_host_and_goes_through_its_conversation(
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: QtBot,
    tmp_path: Path,
) -> None:
    """The server's request for a model's answer is shown in the window's bar; once the
    person sends it, the host asks the model of the main conversation it runs."""
    ask = tool_call("mcp__fake__ask_model", {}, id="a1")
    scripted_relay.script(
        [tool_calls(ask)], [text("Forty-two."), done()], [text("It said so."), done()]
    )
    window, _ = open_with_fake_server(
        host_windows, env={"MCP_FAKE_MARK": f"sampling-{tmp_path.name}"}
    )
    bar = window.mcp.sampling
    try:
        session = window.session
        assert isinstance(session, RemoteSession)

        async def asked() -> None:
            type_prompt(qtbot, window, "ask the server")
            await wait_until(lambda: window.approvals.first() is not None, 30)
            assert window.approve_key()
            await wait_until(lambda: bar.isVisible(), 30)

        run(asked())
        assert "Sampling asked" in bar.title.text() and "<b>relay-model</b>" in bar.title.text()
        assert len(scripted_relay.legs_received) == 1  # nothing sent before the person says so
        bar.send_button.click()
        run(wait_until(lambda: "It said so." in shown(window) and not session.busy, 30))
        results = [m.content for m in session.conversation.messages if m.role == "tool"]
        assert results == ["the model (relay-model) said: Forty-two."]
        sampled = scripted_relay.legs_received[1].json
        assert (sampled["model"], sampled["tools"]) == ("relay-model", [])
        assert not bar.isVisible()
    finally:
        user_path().unlink(missing_ok=True)


def test_melgui_with_host_starts_no_mcp_server_of_its_own(
    host: HostProcess, scripted_relay: ScriptedRelay, project: Path, tmp_path: Path
) -> None:
    """`melgui --with-host FOLDER` as a process of its own: the folder's server starts in
    the host it attaches to, and at no moment is a server process the window's child."""
    mark = f"app-{uuid.uuid4().hex}"
    save_settings(Settings(connection="relay", relay_url=scripted_relay.base_url))
    use_servers({"fake": fake_entry(env={"MCP_FAKE_MARK": mark})})
    said = tmp_path / "window.log"
    with open(said, "wb") as log:
        window = subprocess.Popen(
            [sys.executable, "-m", "melgui", "--with-host", str(project)],
            env={**host.env, "QT_QPA_PLATFORM": "offscreen"},
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
        )  # fmt: skip
    assert host.process is not None
    parents: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while not parents and time.monotonic() < deadline and window.poll() is None:
            parents |= set(servers_marked(mark).values())
            time.sleep(0.05)
        assert parents == {host.process.pid}, said.read_text(errors="replace")
        for _ in range(20):  # a while longer: the window starts none of its own
            parents |= set(servers_marked(mark).values())
            time.sleep(0.05)
        assert parents == {host.process.pid} and window.pid not in parents
    finally:
        window.send_signal(signal.SIGTERM)
        window.wait(timeout=60)
        user_path().unlink(missing_ok=True)
