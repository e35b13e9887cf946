"""Real language servers (pylsp with pyflakes from PyPI, typescript-language-server with
typescript from npm, as .ci/run installs them): an edit that introduces an error, and the
model's next request carries it with its line number."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.loop_events import LoopEvent, ToolCallFinished
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

ROOT = Path(__file__).resolve().parents[3]
NODE_BIN = ROOT / ".ci" / "lsp" / "node_modules" / ".bin"
PYTHON_BIN = Path(sys.executable).parent
PATH = os.pathsep.join([str(NODE_BIN), str(PYTHON_BIN), os.environ.get("PATH", "")])


def _installed(program: str, folder: Path) -> bool:
    return (folder / program).exists()


needs_pylsp = pytest.mark.skipif(
    not _installed("pylsp", PYTHON_BIN), reason="pylsp is not installed (pip install .[test])"
)
needs_tsserver = pytest.mark.skipif(
    not _installed("typescript-language-server", NODE_BIN), reason="run .ci/run's npm install"
)


async def edit_turn(project: Path, relay: ScriptedRelay, edit: dict[str, str]) -> ToolCallFinished:
    settings = Settings(connection="relay", relay_url=relay.base_url)
    settings.approval_modes = {**settings.approval_modes, "edit_file": "auto"}
    desk = Desk(str(project), settings, api_key="k", plans=lambda t, m: None)
    for diagnostics in [desk.diagnostics_for(desk.folder)]:
        diagnostics.env["PATH"] = PATH
    session = desk.session(model="relay-model", role="assistant")
    finished: list[ToolCallFinished] = []

    def observe(event: LoopEvent) -> None:
        if isinstance(event, ToolCallFinished):
            finished.append(event)

    session.subscribe(observe)
    session.submit("rename it")
    await session.wait_idle()
    await session.aclose()
    await desk.aclose()
    (call,) = finished
    return call


@needs_pylsp
async def test_pylsp_reports_an_undefined_name_and_the_next_request_carries_it(
    tmp_path: Path,
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    FolderTrust().trust(project)
    edit = {"path": "app.py", "old_string": "+ name", "new_string": "+ nam"}
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("edit_file", edit))], [text("fixed"), done()])
        call = await edit_turn(project, relay, edit)
    assert call.status == "ok"
    expected = "app.py:2:20: error: undefined name 'nam' (pyflakes)"
    assert expected in call.content
    sent = [m for m in relay.legs_received[1].messages if m.get("role") == "tool"]
    assert expected in sent[0]["content"] and "[Diagnostics from pylsp: 1 new" in sent[0]["content"]
    assert any(expected in note for note in call.notes)


@needs_tsserver
async def test_typescript_reports_a_type_error_on_the_edited_line(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    (project / "app.ts").write_text("export const count: number = 1;\n")
    FolderTrust().trust(project)
    edit = {"path": "app.ts", "old_string": "= 1", "new_string": '= "one"'}
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("edit_file", edit))], [text("fixed"), done()])
        call = await edit_turn(project, relay, edit)
    assert "app.ts:1:14: error: Type 'string' is not assignable to type 'number'." in call.content
    sent = [m for m in relay.legs_received[1].messages if m.get("role") == "tool"]
    assert "is not assignable to type 'number'" in sent[0]["content"]


@needs_pylsp
async def test_no_server_starts_in_an_untrusted_folder(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n")
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = y"}
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("edit_file", edit))], [text("ok"), done()])
        call = await edit_turn(project, relay, edit)
    assert call.status == "ok" and "Diagnostics" not in call.content and call.notes == ()


async def test_a_server_that_fails_is_said_plainly_and_the_edit_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from melgui.core.lsp import client

    monkeypatch.setattr(client, "START_TIMEOUT", 2.0)
    project = tmp_path / "p"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n")
    FolderTrust().trust(project)
    edit = {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    with ScriptedRelay() as relay:
        relay.script([tool_calls(tool_call("edit_file", edit))], [text("ok"), done()])
        settings = Settings(connection="relay", relay_url=relay.base_url)
        settings.approval_modes = {**settings.approval_modes, "edit_file": "auto"}
        settings.language_servers = {"python": ["sh", "-c", "exit 3"]}
        desk = Desk(str(project), settings, api_key="k", plans=lambda t, m: None)
        session = desk.session(model="relay-model", role="assistant")
        session.submit("bump")
        await session.wait_idle()
        await session.aclose()
        await desk.aclose()
    result = next(m for m in relay.legs_received[1].messages if m.get("role") == "tool")
    assert "Edited app.py" in result["content"]
    assert "[Diagnostics unavailable: sh did not start" in result["content"]
    assert (project / "app.py").read_text() == "x = 2\n"
