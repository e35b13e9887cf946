"""A remote folder's own hooks in the real window, over the real sshd: while the folder is
restricted its hooks file there does not run; the trust bar's Trust folder (by the
folder's URL) lets it run there, as the remote user, and the call it denies shows the
run on its card and in the inspector, named with where it ran."""

from __future__ import annotations

import asyncio
import html
import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, wait_until
from tests.remote.fixtures import Remote

GUARD = "echo \"$(id -un)\" >> who; echo 'no commands before the review' >&2; exit 2"


def test_a_trusted_remote_folders_hook_runs_there_and_its_run_is_on_the_card(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder = remote.folder("window-hooks")
    (folder / ".claude").mkdir()
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": GUARD}]}]}
    (folder / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    remote.server.give(folder)
    scripted_relay.script(
        [tool_calls(tool_call("run_command", {"command": "touch first"}, id="c1"))],
        [text("Made it."), done()],
        [tool_calls(tool_call("run_command", {"command": "touch second"}, id="c2"))],
        [text("Held back."), done()],
    )
    settings = relay_settings(scripted_relay, approval_modes={"run_command": "auto"})
    url = f"ssh://{remote.server.alias}{folder}"
    window = remote_window(url, settings)

    async def scenario() -> None:
        assert window.trust_bar.isVisible() and window.trust_bar.folder == url
        window.bridge.submit("Touch first.")
        await wait_until(lambda: idle(window, 2), 120)
        assert (folder / "first").exists() and not (folder / "who").exists()  # restricted
        qtbot.mouseClick(window.trust_bar.trust_button, Qt.MouseButton.LeftButton)
        assert not window.trust_bar.isVisible()
        window.bridge.submit("Touch second.")
        await wait_until(lambda: idle(window, 4), 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 240))
    assert not (folder / "second").exists()  # denied by the hook there
    assert (folder / "who").read_text() == f"{remote.server.user.pw_name}\n"
    shown = window.chat.transcript.toPlainText()
    assert "PreToolUse hook `echo" in shown and "denied: no commands before the review" in shown
    sent = [m for m in scripted_relay.legs_received[3].messages if m.get("role") == "tool"]
    assert "no commands before the review" in sent[-1]["content"]
    window.show_call("c2")
    extra = html.unescape(window.inspector.detail.extra.text())
    assert f".claude/settings.json on {url}" in extra and GUARD in extra
    window.resize(1100, 700)
    assert window.grab().save(str(tmp_path / "hook-there.png"))
