"""A remote folder whose loop runs in melgui's host there (`loop_there`), in the real
window over the real sshd: the host there asks by the window's approval settings, not by
its own settings file. The window's tool settings say write_file runs without asking
(the host there's say ask): its main conversation and a worker there write without a
question; the window's settings changed to ask, both ask, in the window, and the
answer goes there."""

from __future__ import annotations

import asyncio
from typing import Any

from melgui.core.protocol.approval import ApprovalRequest
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import type_prompt, wait_until
from tests.ui.remote.conftest import WindowThere
from tests.ui.remote.test_window_main_there import LIMIT, main_there, run, shown


def write(name: str, call_id: str) -> list[Any]:
    """A leg that writes `name` (write_file, which asks unless its mode says auto)."""
    return [tool_calls(tool_call("write_file", {"path": name, "content": name}, id=call_id))]


def is_worker(request: Any) -> bool:
    return bool(request.tool_role == "worker")


def asked(window: MainWindow) -> ApprovalRequest | None:
    return window.approvals.first()


def test_the_host_there_asks_as_the_windows_settings_say(
    scripted_relay: ScriptedRelay,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
    qtbot: Any,
) -> None:
    scripted_relay.on(is_worker, write("w.txt", "ww1"), times=1)
    scripted_relay.on(is_worker, [text("Worker wrote."), done()], times=1)
    scripted_relay.on(is_worker, write("w2.txt", "ww2"), times=1)
    scripted_relay.on(is_worker, [text("Worker wrote again."), done()], times=1)
    scripted_relay.script(
        write("n.txt", "w1"), [text("Wrote n."), done()],
        write("m.txt", "w2"), [text("Wrote m."), done()],
    )  # fmt: skip
    there = window_there("approvals-there", approval_modes={"write_file": "auto"})
    folder, settings, window = there.folder, there.settings, there.window
    questions: list[str] = []

    async def without_asking() -> AgentPane:
        await main_there(window)
        type_prompt(qtbot, window, "write n")
        while not ("Wrote n." in shown(window) and not window.bridge.busy):
            if asked(window) is not None:
                questions.append(asked(window).call.name)  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.05)
        window.pane_manager.spawn_agent("write w", None, "right")
        pane = next(p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane))
        await wait_until(lambda: "Worker wrote." in pane.chat.transcript.toPlainText()
                         or asked(window) is not None, LIMIT)  # fmt: skip
        return pane

    pane = run(qloop, without_asking())
    assert questions == [] and asked(window) is None  # as the window's own loop would not
    assert (folder / "n.txt").read_text() == "n.txt"
    assert (folder / "w.txt").read_text() == "w.txt"

    # The person changes the tool setting: both sessions there ask from now on.
    changed = settings.model_copy(update={"approval_modes": {**settings.approval_modes,
                                                             "write_file": "ask"}})  # fmt: skip
    window.apply_settings(changed, "k")

    async def asking() -> None:
        type_prompt(qtbot, window, "write m")
        await wait_until(lambda: asked(window) is not None, LIMIT)
        request = asked(window)
        assert request is not None and (request.call.name, request.source) == ("write_file", "main")
        assert window.approve_key()
        await wait_until(lambda: "Wrote m." in shown(window) and not window.bridge.busy, LIMIT)
        pane.send("write again")
        await wait_until(lambda: asked(window) is not None, LIMIT)
        request = asked(window)
        assert request is not None and request.call.id == "ww2" and request.source != "main"
        request.approve()
        await wait_until(lambda: "Worker wrote again." in pane.chat.transcript.toPlainText(), LIMIT)

    run(qloop, asking())
    assert (folder / "m.txt").read_text() == "m.txt"
    assert (folder / "w2.txt").read_text() == "w2.txt"
