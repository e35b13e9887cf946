"""Renders docs/screenshot-panes.png: the real window, as orchestrator, with a chat, a
terminal pane and a worker pane side by side, driven by the scripted relay.

    python -m tests.ui.panes.screenshot_panes [OUTPUT.png]
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
# A throwaway history and config: the demo must not land in the person's own.
_SANDBOX = tempfile.mkdtemp(prefix="melgui-screenshot-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.panes.manager import PaneManager  # noqa: E402
from melgui.ui.panes.terminal.pane import TerminalPane  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CHECKS_SH = r"""G='\033[1;32m'; Y='\033[33m'; R='\033[0m'
printf "${G}\$${R} git log --oneline -3\n"
printf "${Y}a1aa64b${R} Agent panes embed the chat view\n"
printf "${Y}75e8310${R} Pane area and orchestration handlers\n"
printf "${Y}a0293c5${R} Terminal core: ptys and the avt screen\n"
printf "${G}\$${R} python3 -m pytest -q tests\n"
printf "\033[32m..............................\033[0m            [100%%]\n"
printf "\033[1;32m30 passed\033[0m in 4.12s\n"
PS1="\[\033[1;32m\]\$\[\033[0m\] " exec bash --norc --noprofile -i
"""


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [
            text(
                "The project has **3 files**:\n\n"
                "| file | lines |\n|---|---|\n| `app.py` | 42 |\n| `util.py` | 17 |\n"
                "| `README.md` | 8 |\n\nNo tests yet; I would start with `util.py`."
            ),
            done(),
        ]
    return [text("Let me look at the folder."), tool_calls(tool_call("list_dir", {}))]


async def _wait(condition: Callable[[], object], timeout: float = 40.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("screenshot scenario did not reach its state")
        await asyncio.sleep(0.02)


def main(output: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    gate = threading.Event()
    with ScriptedRelay() as relay, tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "app.py").write_text("print('hi')\n" * 42)
        (project / "util.py").write_text("x = 1\n" * 17)
        (project / "README.md").write_text("# demo\n" * 8)
        (project / "checks.sh").write_text(CHECKS_SH)
        relay.on(lambda r: r.tool_role == "worker", _worker)
        relay.script(
            [
                text("I'll open a terminal for the tests and a worker to survey the code."),
                tool_calls(
                    tool_call("open_pane", {"layout": "right", "command": "bash checks.sh"}),
                    tool_call(
                        "spawn_agent",
                        {"layout": "down", "task": "List the project's files and suggest tests"},
                    ),
                ),
            ],
            [
                hold(gate),
                text(
                    "Both panes are running:\n\n- **pane 1** — a terminal with the test run\n"
                    "- **pane 2** — a worker surveying the files\n\n"
                    "I'll read the worker's report when it is done."
                ),
                done(),
            ],
        )
        settings = Settings(
            connection="relay", relay_url=relay.url, model="mel-default", role="orchestrator"
        )
        settings.approval_modes.update({"open_pane": "auto", "spawn_agent": "auto"})
        window = build_main_window(folder, settings, api_key="demo", persist_settings=False)
        window.resize(1500, 860)
        window.show()
        window.resizeDocks([window.side_panel.dock], [330], Qt.Orientation.Horizontal)
        manager = getattr(window, "pane_manager", None)
        assert isinstance(manager, PaneManager)

        async def scenario() -> None:
            window.bridge.submit("Set up a terminal for the tests and a worker to survey the code.")
            await _wait(lambda: isinstance(manager.pane(2), AgentPane))
            worker = manager.pane(2)
            assert isinstance(worker, AgentPane)
            await _wait(lambda: worker.state.name == "idle" and worker.latest_reply())
            gate.set()
            await _wait(lambda: not window.bridge.busy and window.session.loop.legs == 2)
            terminal = manager.pane(1)
            assert isinstance(terminal, TerminalPane)
            await _wait(lambda: "30 passed" in terminal.emulator.text())
            terminal.view.setFocus()
            await asyncio.sleep(0.5)

        loop.run_until_complete(asyncio.wait_for(scenario(), 120))
        app.processEvents()
        output.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(output))
        print(f"wrote {output}")
        loop.run_until_complete(window.aclose())
        window.close()
    asyncio.set_event_loop(None)
    loop.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshot-panes.png")
