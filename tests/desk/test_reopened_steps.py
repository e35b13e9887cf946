"""A conversation reopened from the history file by a new session (as `melgui exec
--resume` and the host reopen one) gets back what its messages do not carry: the hooks
that ran around each call with their output, the language server's diagnostics on an
edit, and its plan mode."""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.config.settings import config_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.store import open_store
from melgui.desk.recording import start_recording
from tests.core.lsp.test_diagnostics import PATH, needs_pylsp
from tests.desk.conftest import make_desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

CONTEXT = (
    'echo \'{"hookSpecificOutput": {"hookEventName": "PostToolUse", '
    '"additionalContext": "app.py is imported by the CLI"}}\''
)
LINE = "app.py:2:20: error: undefined name 'nam' (pyflakes)"


def own_hooks() -> None:
    hooks = {
        "PreToolUse": [{"matcher": "Edit", "hooks": [{"command": "echo checked >&2"}]}],
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"command": CONTEXT}]}],
    }
    path = config_dir() / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


@needs_pylsp
async def test_hook_runs_diagnostics_and_plan_mode_come_back_with_a_reopened_conversation(
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    FolderTrust().trust(project)
    own_hooks()
    data = tmp_path / "data"
    edit = {"path": "app.py", "old_string": "+ name", "new_string": "+ nam"}
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("edit_file", edit, id="e1"))], [text("ok"), done()])
        store = open_store(data)
        recording = start_recording(store, str(project), model="relay-model", role="assistant")
        desk = make_desk(project, relay)
        desk.diagnostics_for(desk.folder).env["PATH"] = PATH
        session = desk.session(recording.conversation, model="relay-model", role="assistant",
                               wire=recording.record_wire)  # fmt: skip
        recording.attach(session)
        session.submit("rename it")
        await session.wait_idle()
        session.loop.plan.on = True  # the person turns plan mode on, then leaves
        cid = recording.conversation_id
        live = session.thread.call("e1")
        await session.aclose()
        await desk.aclose()
        recording.close()
        store.close()
    assert cid is not None and live is not None
    assert [run.event for run in live.hooks] == ["PreToolUse", "PostToolUse"]
    assert any(LINE in note for note in live.notes)

    store = open_store(data)  # a new process would read the same file
    try:
        reopened = start_recording(store, str(project), model="relay-model", role="assistant",
                                   resume_id=cid)  # fmt: skip
        with ScriptedRelay() as relay:
            desk = make_desk(project, relay)
            session = desk.session(reopened.conversation, model="relay-model", role="assistant")
            assert not session.loop.plan.on and session.thread.call("e1").hooks == ()  # type: ignore[union-attr]
            reopened.attach(session)
            entry = session.thread.call("e1")
            assert entry is not None and entry.hooks == live.hooks and entry.notes == live.notes
            assert (
                entry.hooks[0].stderr == "checked\n"
                and "app.py is imported" in entry.hooks[1].stdout
            )
            assert session.loop.plan.on
            session.loop.plan.on = False  # approved: the store follows
            assert not store.plan_mode(cid)
            await session.aclose()
            await desk.aclose()
        reopened.close()
    finally:
        store.close()
