"""Render docs/screenshot-changes.png: the Changes view of a real worker worktree (a
commit, uncommitted edits, a new file), one hunk already applied to the main folder.

    QT_QPA_PLATFORM=offscreen python -m tests.ui.changes.screenshot_changes [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtWidgets import QApplication

from melgui.core.worktrees.model import Worktree
from melgui.ui.changes.view import ChangesView, open_changes
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.runtime.theme import apply_theme
from tests.fakes.projects import GIT_ENV
from tests.fakes.worktree_repos import run_git

PARSER = '''"""Read the settings file: one `name = value` per line."""


def parse(text: str) -> dict[str, str]:
    settings = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, value = line.split("=")
        settings[name.strip()] = value.strip()
    return settings


def dump(settings: dict[str, str]) -> str:
    lines = []
    for name in sorted(settings):
        lines.append(f"{name} = {settings[name]}")
    return "\\n".join(lines) + "\\n"


def merge(first: dict[str, str], second: dict[str, str]) -> dict[str, str]:
    merged = dict(first)
    merged.update(second)
    return merged


def load(path: str) -> dict[str, str]:
    with open(path) as handle:
        return parse(handle.read())
'''

PARSER_BY_WORKER = '''"""Read the settings file: one `name = value` per line; `#` comments."""


def parse(text: str) -> dict[str, str]:
    settings = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0]
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise ValueError(f"line {number}: expected name = value")
        settings[name.strip()] = value.strip()
    return settings


def dump(settings: dict[str, str]) -> str:
    lines = []
    for name in sorted(settings):
        lines.append(f"{name} = {settings[name]}")
    return "\\n".join(lines) + "\\n"


def merge(first: dict[str, str], second: dict[str, str]) -> dict[str, str]:
    merged = dict(first)
    merged.update(second)
    return merged


def load(path: str) -> dict[str, str]:
    with open(path, encoding="utf-8") as handle:
        return parse(handle.read())
'''


AUTHOR = "worker 2 <worker@melgui.invalid>"


def make_worktree(root: Path) -> Worktree:
    main = root / "settings-app"
    main.mkdir()
    run_git(main, "init", "-q", "-b", "main")
    (main / "parser.py").write_text(PARSER)
    (main / "README.md").write_text("# settings-app\n\nReads settings files.\n")
    run_git(main, "add", "-A")
    run_git(main, "commit", "-q", "-m", "First parser")
    base = run_git(main, "rev-parse", "HEAD").strip()
    path = root / "worktrees" / "settings-app-2-comments"
    branch = "melgui/2-comments"
    run_git(main, "worktree", "add", "-q", "-b", branch, str(path), base)
    worktree = Worktree(path, branch, base, main)
    (path / "README.md").write_text(
        "# settings-app\n\nReads settings files. Lines may end with a `# comment`.\n"
    )
    run_git(path, "commit", "-q", f"--author={AUTHOR}", "-am", "README: mention comments")
    (path / "parser.py").write_text(PARSER_BY_WORKER)
    run_git(path, "commit", "-q", f"--author={AUTHOR}", "-am", "Parser: comments and a clear error")
    (path / "test_parser.py").write_text(
        "from parser import parse\n\n\ndef test_comment() -> None:\n"
        '    assert parse("a = 1  # one") == {"a": "1"}\n'
    )
    (path / "parser.py").write_text(PARSER_BY_WORKER.replace("load(path: str)", "load(path)"))
    return worktree


def render(out: Path) -> None:
    for name, value in GIT_ENV.items():
        os.environ[name] = value
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    colors = apply_theme(app, "light")
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="melgui-changes-shot-") as folder:
        worktree = make_worktree(Path(folder))
        view = open_changes(None, worktree, colors)
        view.resize(1180, 720)

        async def scenario() -> None:
            await _settle(view)
            for row in range(view.files.topLevelItemCount()):
                item = view.files.topLevelItem(row)
                if item is not None and item.text(1) == "parser.py":
                    view.files.setCurrentItem(item)
            await _settle(view)
            view.diff.hunks[0].button.click()
            await _settle(view)
            await asyncio.sleep(0.2)

        loop.run_until_complete(scenario())
        out.mkdir(parents=True, exist_ok=True)
        view.grab().save(str(out / "screenshot-changes.png"))
        view.close()
    loop.close()


async def _settle(view: ChangesView) -> None:
    deadline = time.monotonic() + 20
    await asyncio.sleep(0.05)
    while not (view.idle and view.changes is not None):
        if time.monotonic() > deadline:
            raise TimeoutError("the Changes view did not settle")
        await asyncio.sleep(0.02)


if __name__ == "__main__":
    render(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs"))
