"""Render docs/screenshot-light.png and docs/screenshot-dark.png: the window mid-turn,
an edit_file call waiting for approval, against the scripted relay.

    QT_QPA_PLATFORM=offscreen python -m tests.ui.screenshots [OUT_DIR]

With `--gallery [OUT_DIR]` (default docs/look) it renders the look's gallery instead:
every scene of tests/ui/screenshots_gallery.py in both themes at 1366×768 and 1920×1080;
`--gallery-dpr2` (run with QT_SCALE_FACTOR=2) one scene at twice the pixels.
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

from PySide6.QtWidgets import QApplication  # noqa: E402

from melgui.core.config.settings import Settings  # noqa: E402
from melgui.ui.runtime.qt_loop import QtEventLoop  # noqa: E402
from melgui.ui.runtime.theme import apply_theme  # noqa: E402
from melgui.ui.window.main_window import build_main_window  # noqa: E402
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls  # noqa: E402

APP_PY = '''"""A tiny greeting service."""

import sys


def main() -> int:
    print("hello")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

ANSWER = """I'll add a `greet(name)` function and use it from `main()`:

1. **greet** builds the message, so it is easy to test
2. `main()` prints `greet(sys.argv[1])`, or greets the world

```python
def greet(name: str = "world") -> str:
    \"\"\"The greeting for `name`.\"\"\"
    return f"Hello, {name}!"
```

Here is the edit:
"""

PLAN = """1. Add `greet()` to app.py
2. Call it from `main()`
3. Add `tests/test_app.py` and run `pytest -q`
"""


async def wait_until(condition: object, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError("screenshot scenario did not reach its state")
        await asyncio.sleep(0.02)


def shoot(app: QApplication, theme: str, out: Path) -> Path:
    project = Path(tempfile.mkdtemp(prefix="greeter-", dir=_SANDBOX)) / "greeter"
    project.mkdir()
    (project / "app.py").write_text(APP_PY)
    edit = tool_call(
        "edit_file",
        {
            "path": "app.py",
            "old_string": 'def main() -> int:\n    print("hello")',
            "new_string": 'def greet(name: str = "world") -> str:\n'
            '    """The greeting for `name`."""\n'
            '    return f"Hello, {name}!"\n\n\n'
            "def main() -> int:\n"
            "    print(greet(*sys.argv[1:2]))",
        },
        id="call_edit",
    )
    plan = tool_call("write_plan", {"title": "Greeting", "markdown": PLAN}, id="call_plan")
    read = tool_call("read_file", {"path": "app.py"}, id="call_read")
    apply_theme(app, theme)  # type: ignore[arg-type]
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with ScriptedRelay() as relay:
        relay.script(
            [text("Let me look at the project first."), tool_calls(plan, read)],
            [*(text(ANSWER[i : i + 12]) for i in range(0, len(ANSWER), 12)), tool_calls(edit)],
            [text("Done."), done()],
        )
        settings = Settings(
            connection="relay",
            relay_url=relay.url,
            model="mel-large",
            theme=theme,  # type: ignore[arg-type]
        )
        window = build_main_window(str(project), settings, api_key="k", persist_settings=False)
        window.resize(1400, 860)
        window.show()

        async def scenario() -> None:
            window.choices.set_models([])
            window.choices.set_model("mel-large")
            window.chat.input.setPlainText(
                "Add a greet(name) function to app.py and use it in main"
            )
            window.chat.input.send()
            await wait_until(lambda: window.inspector.book.pending())
            record = window.inspector.current_record()
            await wait_until(lambda: bool(record and record.preview))
            window.inspector.detail.show_record(record)
            window.chat.input.setPlainText("Also add a test, please")
            await asyncio.sleep(0.3)

        loop.run_until_complete(scenario())
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"screenshot-{theme}.png"
        window.grab().save(str(path))
        for request in window.approvals.pending():
            request.deny("screenshot done")
        loop.run_until_complete(window.aclose())
        relay.strict = False
        window.close()
    loop.close()
    return path


def main(argv: list[str]) -> int:
    docs = Path(__file__).resolve().parents[2] / "docs"
    if argv and argv[0] in ("--gallery", "--gallery-dpr2"):
        from tests.ui.screenshots_gallery import at_twice_the_pixels, gallery

        out = Path(argv[1]) if len(argv) > 1 else docs / "look"
        (gallery if argv[0] == "--gallery" else at_twice_the_pixels)(out)
        return 0
    out = Path(argv[0]) if argv else docs
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    for theme in ("light", "dark"):
        print(shoot(app, theme, out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
