"""Render docs/look/: the window in light and dark at 1366×768 and 1920×1080 — the welcome
screen, a turn with an unfolded diff and its approval in the card, a failing command,
four panes, and Settings — and the welcome screen once at a device pixel ratio of 2.

    QT_QPA_PLATFORM=offscreen python -m tests.ui.screenshots --gallery [OUT_DIR]
    QT_SCALE_FACTOR=2 QT_QPA_PLATFORM=offscreen python -m tests.ui.screenshots --gallery-dpr2
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QApplication

from melgui.core.config.settings import DEFAULT_MODES, Settings
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.runtime.theme import apply_theme
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow, build_main_window
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls

SIZES = ((1366, 768), (1920, 1080))
OPS = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
TEST_OPS = (
    "from calc.ops import add, sub\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
    "def test_sub():\n    assert sub(5, 3) == 2\n"
)
Scene = Callable[[MainWindow, ScriptedRelay, Path], Awaitable[None]]


async def wait_until(condition: Callable[[], object], timeout: float = 120.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError("a screenshot scene did not reach its state")
        await asyncio.sleep(0.02)


def make_project(root: Path) -> Path:
    project = root / "calc"
    (project / "calc").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "calc" / "__init__.py").write_text("")
    (project / "calc" / "ops.py").write_text(OPS)
    (project / "tests" / "test_ops.py").write_text(TEST_OPS)
    (project / "README.md").write_text("# calc\n\nA tiny calculator.\n")
    return project


async def welcome(window: MainWindow, relay: ScriptedRelay, project: Path) -> None:
    await asyncio.sleep(0.3)


async def approval(window: MainWindow, relay: ScriptedRelay, project: Path) -> None:
    fix = tool_call(
        "edit_file",
        {
            "path": "calc/ops.py",
            "old_string": "def sub(a, b):\n    return a + b",
            "new_string": "def sub(a, b):\n    return a - b",
        },
        id="fix",
    )
    read = tool_call("read_file", {"path": "calc/ops.py"}, id="read")
    relay.script(
        [text("Let me read the module first."), tool_calls(read)],
        [text("`sub()` adds instead of subtracting. Here is the fix:"), tool_calls(fix)],
        [text("Fixed."), done()],
    )
    window.chat.input.setPlainText("sub(5, 3) returns 8 — please fix it")
    window.chat.input.send()
    await wait_until(lambda: window.inspector.book.pending())
    await asyncio.sleep(0.3)


async def failing(window: MainWindow, relay: ScriptedRelay, project: Path) -> None:
    run = tool_call("run_command", {"command": "python -m pytest -q"}, id="tests")
    relay.script(
        [text("Running the tests."), tool_calls(run)],
        [
            text("One test fails: `sub(5, 3)` returns 8. `sub()` adds instead of subtracting."),
            done(),
        ],
    )
    window.chat.input.setPlainText("Run the tests")
    window.chat.input.send()
    await wait_until(lambda: not window.bridge.busy and window.session.loop.legs >= 2)
    window.chat.transcript.anchorClicked.emit(QUrl("card:tests"))
    await asyncio.sleep(0.3)


def _worker(request: RecordedRequest) -> list[Any]:
    return [text("The project has **calc/ops.py** and one test file."), done()]


async def four_panes(window: MainWindow, relay: ScriptedRelay, project: Path) -> None:
    relay.on(lambda r: r.tool_role == "worker", _worker)
    relay.script([text("I opened two terminals and two workers beside the chat."), done()])
    window.chat.input.setPlainText("Open two terminals and two workers")
    window.chat.input.send()
    await wait_until(lambda: not window.bridge.busy and window.session.loop.legs >= 1)
    manager = window.pane_manager
    for index, place in enumerate(("right", "right", "down", "right")):
        if index % 2 == 0:
            manager.open_terminal("ls -la; python -m pytest -q; exec bash --norc", place)
        else:
            info = manager.spawn_agent("List the project's files", None, place)
            await wait_until(
                lambda i=info.id: (
                    isinstance(p := manager.pane(i), AgentPane) and p.state.name == "idle"
                )
            )
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)


async def settings(window: MainWindow, relay: ScriptedRelay, project: Path) -> None:
    window.open_settings()
    await asyncio.sleep(0.3)


SCENES: dict[str, Scene] = {
    "welcome": welcome,
    "approval": approval,
    "failing-command": failing,
    "four-panes": four_panes,
    "settings": settings,
}


def grab(window: MainWindow) -> Any:
    """The window, with an open Settings dialog drawn over its middle."""
    image = window.grab()
    dialog = window.findChild(SettingsDialog)
    if dialog is not None and dialog.isVisible():
        painter = QPainter(image)
        painter.fillRect(image.rect(), QColor(0, 0, 0, 90))  # a dialog over a dimmed window
        ratio = image.devicePixelRatio()
        size = image.size() / ratio
        shot = dialog.grab()
        at = QPoint(
            (size.width() - shot.width() / ratio * ratio) // 2,
            (size.height() - shot.height() / ratio * ratio) // 2,
        )
        painter.drawPixmap(at, shot)
        painter.setPen(QColor(window.colors.border))
        painter.drawRect(at.x(), at.y(), shot.width() - 1, shot.height() - 1)
        painter.end()
        dialog.reject()
    return image


def shoot(app: QApplication, scene: str, theme: str, size: tuple[int, int], out: Path) -> Path:
    sandbox = Path(tempfile.mkdtemp(prefix="melgui-gallery-"))
    project = make_project(sandbox)
    apply_theme(app, theme)  # type: ignore[arg-type]
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    path = out / f"{scene}-{theme}-{size[0]}x{size[1]}.png"
    with ScriptedRelay() as relay:
        modes = {**DEFAULT_MODES, "run_command": "auto"}
        config = Settings(
            connection="relay",
            relay_url=relay.url,
            model="mel-large",
            theme=theme,  # type: ignore[arg-type]
            approval_modes=modes,
        )
        window = build_main_window(str(project), config, api_key="k", persist_settings=False)
        window.resize(*size)
        window.show()
        window.trust_bar.decide(True)
        loop.run_until_complete(SCENES[scene](window, relay, project))
        out.mkdir(parents=True, exist_ok=True)
        grab(window).save(str(path))
        for request in window.approvals.pending():
            request.deny("screenshot done")
        window.guard.allow()
        loop.run_until_complete(window.aclose())
        relay.strict = False
        window.close()
    loop.close()
    return path


def gallery(out: Path, only: str = "") -> None:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    for scene in [only] if only else SCENES:
        for theme in ("light", "dark"):
            for size in SIZES:
                print(shoot(app, scene, theme, size, out))


def at_twice_the_pixels(out: Path) -> None:
    """Run under QT_SCALE_FACTOR=2: the welcome screen at a device pixel ratio of 2."""
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    path = shoot(app, "approval", "light", (1366, 768), Path(tempfile.mkdtemp()))
    out.mkdir(parents=True, exist_ok=True)
    path.replace(out / "approval-light-1366x768@2x.png")
    print(out / "approval-light-1366x768@2x.png")


if __name__ == "__main__":  # one scene: python -m tests.ui.screenshots_gallery OUT SCENE
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    gallery(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "")
