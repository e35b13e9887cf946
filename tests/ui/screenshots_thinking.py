"""Render docs/screenshot-thinking-folded.png, docs/screenshot-thinking-open.png and
docs/screenshot-image-chip.png: a reasoning model's turn against the scripted
OpenAI-compatible server, and an image pasted into the prompt box.

    QT_QPA_PLATFORM=offscreen python -m tests.ui.screenshots_thinking [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SANDBOX = tempfile.mkdtemp(prefix="melgui-shots-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"

from PySide6.QtCore import QPointF, QRectF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QFont, QImage, QLinearGradient, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.ui.chat.composer.images import fit_image  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import ScriptedOpenAI, delta, done, pause  # noqa: E402

THOUGHT = (
    "The user asks why the test is flaky. The test waits 0.1 s for the worker, but the "
    "worker starts a subprocess first, which can take longer on a loaded machine.\n\n"
    "So the fix is to wait for the worker's ready signal instead of sleeping. I should "
    "also check whether the fixture closes the worker: if not, a later test could see "
    "a stale one.\n\nThe fixture does close it in a finally block, good. Answer: replace "
    "the sleep with an event."
)
ANSWER = """The test sleeps **0.1 s** and hopes the worker is up. On a busy machine the
worker's subprocess takes longer, so the assertion runs too early.

Wait for the worker's ready event instead:

```python
worker.start()
assert worker.ready.wait(timeout=10)
```
"""


async def wait_until(condition: object, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("screenshot scenario did not reach its state")
        await asyncio.sleep(0.02)


def chart() -> QImage:
    """A small bar chart, as a person would paste a screenshot."""
    image = QImage(900, 560, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setFont(QFont("Sans", 26))
    painter.setPen(QColor("#333"))
    painter.drawText(QRectF(0, 20, 900, 50), Qt.AlignmentFlag.AlignCenter, "Test time (s)")
    for n, height in enumerate((120, 260, 180, 390, 310)):
        gradient = QLinearGradient(QPointF(0, 500 - height), QPointF(0, 500))
        gradient.setColorAt(0, QColor("#4f8cff"))
        gradient.setColorAt(1, QColor("#1c4fb8"))
        painter.fillRect(QRectF(110 + n * 150, 500 - height, 100, height), gradient)
    painter.end()
    return image


def shoot(app: QApplication, out: Path) -> list[Path]:
    project = Path(tempfile.mkdtemp(prefix="worker-", dir=_SANDBOX)) / "worker"
    project.mkdir()
    (project / "test_worker.py").write_text("def test_worker():\n    ...\n")
    apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    paths: list[Path] = []
    out.mkdir(parents=True, exist_ok=True)
    with ScriptedOpenAI() as server:
        thought = [delta(reasoning_content=THOUGHT[i : i + 24]) for i in range(0, len(THOUGHT), 24)]
        answer = [delta(content=ANSWER[i : i + 16]) for i in range(0, len(ANSWER), 16)]
        half = len(thought) // 2  # a real model thinks for a while
        server.script([*thought[:half], pause(3.2), *thought[half:], *answer, done()])
        settings = Settings(connection="openai", openai_base_url=server.base_url, model="qwen3")
        window = build_main_window(str(project), settings, api_key="k", persist_settings=False)
        window.resize(1400, 860)
        window.show()

        async def scenario() -> None:
            window.choices.set_models([])
            window.choices.set_model("qwen3")
            window.chat.input.setPlainText("Why is test_worker flaky?")
            window.chat.input.send()
            await wait_until(lambda: not window.bridge.busy and window.session.loop.legs)
            await asyncio.sleep(0.2)

        loop.run_until_complete(scenario())
        transcript = window.chat.transcript
        for name in ("folded", "open"):
            if name == "open":
                transcript.toggle_thinking(transcript.thinking_blocks()[0].number)
            app.processEvents()
            path = out / f"screenshot-thinking-{name}.png"
            window.grab().save(str(path))
            paths.append(path)
        window.chat.input.attach(fit_image(chart(), "timings.png"))
        window.chat.input.setPlainText("And what does this chart say about the slow runs?")
        loop.run_until_complete(asyncio.sleep(0.2))
        path = out / "screenshot-image-chip.png"
        window.grab().save(str(path))
        paths.append(path)
        loop.run_until_complete(window.aclose())
        window.close()
    loop.close()
    return paths


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "docs"
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    for path in shoot(app, out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
