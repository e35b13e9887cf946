"""Renders docs/screenshot-1024x700.png and docs/screenshot-1920x1080.png: the real window
with a chat, a terminal the person opened (Panes → New terminal running…) and a worker
(Panes → New worker…) split below it, driven by the scripted relay.

    python -m tests.ui.screenshot_desktop [OUTPUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# A throwaway history and config: the demo must not land in the person's own.
_SANDBOX = tempfile.mkdtemp(prefix="melgui-screenshot-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")

from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.ui.panes.agent_pane import AgentPane  # noqa: E402
from melgui.ui.panes.terminal.pane import TerminalPane  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls  # noqa: E402
from tests.fakes.window import wait_until  # noqa: E402
from tests.ui.panes.screenshot_panes import CHECKS_SH  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SIZES = ((1024, 700), (1920, 1080))


def _worker(request: RecordedRequest) -> list[object]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Three files: `app.py` (42 lines), `util.py` (17), `README.md` (8)."), done()]
    return [text("Let me look at the folder."), tool_calls(tool_call("list_dir", {}))]


def main(out_dir: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with ScriptedRelay() as relay, tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "app.py").write_text("print('hi')\n" * 42)
        (project / "util.py").write_text("x = 1\n" * 17)
        (project / "README.md").write_text("# demo\n" * 8)
        (project / "checks.sh").write_text(CHECKS_SH)
        relay.on(lambda r: r.tool_role == "worker", _worker)
        relay.script(
            [
                text(
                    "The tests live in `tests/` and run with `pytest -q`. I opened nothing: "
                    "use **Panes → New terminal** (Ctrl+Shift+T) for a shell, or "
                    "**Panes → New worker** (Ctrl+Shift+N) for a second agent."
                ),
                done(),
            ]
        )
        settings = Settings(connection="relay", relay_url=relay.url, model="mel-default")
        window = build_main_window(folder, settings, api_key="demo", persist_settings=False)
        window.resize(*SIZES[0])
        window.show()
        manager = window.pane_manager

        async def scenario() -> None:
            window.bridge.submit("How do I run the tests here?")
            await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)
            manager.open_terminal("bash checks.sh")
            manager.spawn_agent("List the project's files", None, "down")
            terminal, worker = manager.pane(1), manager.pane(2)
            assert isinstance(terminal, TerminalPane) and isinstance(worker, AgentPane)
            await wait_until(lambda: "30 passed" in terminal.emulator.text(), 40)
            await wait_until(lambda: worker.state.name == "idle" and worker.latest_reply(), 40)
            terminal.view.setFocus()
            await asyncio.sleep(0.3)

        loop.run_until_complete(asyncio.wait_for(scenario(), 120))
        out_dir.mkdir(parents=True, exist_ok=True)
        for width, height in SIZES:
            window.resize(width, height)
            loop.run_until_complete(asyncio.sleep(0.4))
            app.processEvents()
            path = out_dir / f"screenshot-{width}x{height}.png"
            window.grab().save(str(path))
            print(
                f"wrote {path} (window {window.width()}x{window.height()}, chat "
                f"{window.chat.width()} px, terminal {terminal_rows(manager)} rows)"
            )
        loop.run_until_complete(window.aclose())
        window.guard.allow()
        window.close()
    asyncio.set_event_loop(None)
    loop.close()


def terminal_rows(manager: object) -> int:
    pane = getattr(manager, "pane", lambda _id: None)(1)
    return pane.emulator.rows if isinstance(pane, TerminalPane) else 0


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
