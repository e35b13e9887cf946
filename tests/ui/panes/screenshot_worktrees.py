"""Renders docs/worker-worktree.png (an orchestrator whose worker works in its own git
worktree, as read_agent reports it) and docs/worktree-recovery.png (worktrees an earlier
run left, offered at the start), with the real window and the scripted relay.

    python -m tests.ui.panes.screenshot_worktrees [DOCS_FOLDER]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A throwaway history, config and worktree folder: the demo must not land in the person's.
_SANDBOX = tempfile.mkdtemp(prefix="melgui-screenshot-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.core.worktrees.create import create_worktree  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.panes.manager import PaneManager  # noqa: E402
from melgui.ui.panes.worktree_recovery import offer_left_worktrees  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls  # noqa: E402
from tests.fakes.projects import git, make_project  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Renamed the greeting in `src/app.py` and added a test."), done()]
    edit = {"path": "src/app.py", "old_string": "hello", "new_string": "hello, worktree"}
    test = {"path": "tests/test_app.py", "content": "def test_app():\n    assert True\n"}
    return [
        text("Editing the app in my worktree."),
        tool_calls(tool_call("edit_file", edit), tool_call("write_file", test)),
    ]


async def _wait(condition: Callable[[], object], timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("screenshot scenario did not reach its state")
        await asyncio.sleep(0.02)


def main(docs: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    gate = threading.Event()
    with ScriptedRelay() as relay, tempfile.TemporaryDirectory() as folder:
        project = make_project(Path(folder), with_git=True)
        relay.on(lambda r: r.tool_role == "worker", _worker)
        relay.script(
            [
                text("I'll have a worker make the change on its own branch."),
                tool_calls(
                    tool_call("spawn_agent", {"layout": "right", "task": "Rename the greeting"})
                ),
            ],
            [hold(gate), tool_calls(tool_call("read_agent", {"pane": 1}))],
            [
                text(
                    "The worker changed `src/app.py` and added `tests/test_app.py` on branch "
                    "`melgui/1-rename-the-greeting`; your folder is untouched. Review its "
                    "changes before merging."
                ),
                done(),
            ],
        )
        settings = Settings(
            connection="relay", relay_url=relay.url, model="mel-default", role="orchestrator"
        )
        settings.approval_modes.update(
            {n: "auto" for n in ("spawn_agent", "read_agent", "edit_file", "write_file")}
        )
        window = build_main_window(str(project), settings, api_key="demo", persist_settings=False)
        window.resize(1500, 860)
        window.show()
        window.resizeDocks([window.side_panel.dock], [300], Qt.Orientation.Horizontal)
        manager = getattr(window, "pane_manager", None)
        assert isinstance(manager, PaneManager)

        async def scenario() -> None:
            window.bridge.submit("Rename the greeting, but keep my folder as it is.")
            await _wait(lambda: isinstance(manager.pane(1), AgentPane))
            worker = manager.pane(1)
            assert isinstance(worker, AgentPane)
            await _wait(lambda: worker.state.name == "idle" and worker.latest_reply())
            gate.set()
            await _wait(lambda: not window.bridge.busy and window.session.loop.legs == 3)
            await asyncio.sleep(0.3)

        loop.run_until_complete(asyncio.wait_for(scenario(), 120))
        app.processEvents()
        docs.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(docs / "worker-worktree.png"))
        # Two worktrees an earlier run left: one with a commit, one with an edit.
        left = create_worktree(project, 3, "Speed up the parser").worktree
        (left.path / "src" / "util.py").write_text("def f():\n    return 2\n")
        git(left.path, "commit", "-qam", "Faster f")
        other = create_worktree(project, 4, "Try a new README").worktree
        (other.path / "README.md").write_text("# new\n")
        dialog = loop.run_until_complete(offer_left_worktrees(manager, window))
        assert dialog is not None
        dialog.resize(760, dialog.sizeHint().height())
        app.processEvents()
        dialog.grab().save(str(docs / "worktree-recovery.png"))
        print(f"wrote {docs / 'worker-worktree.png'} and {docs / 'worktree-recovery.png'}")
        dialog.reject()
        loop.run_until_complete(window.aclose())
        window.close()
    asyncio.set_event_loop(None)
    loop.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
