"""The one walker: the project's files as ripgrep sees them."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from melgui.core.config.project_files import TooManyEntries, walk_files


def make(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_gitignore_files_apply_deeper_ones_winning(tmp_path: Path) -> None:
    make(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild/\n",
            "app.log": "",
            "main.py": "",
            "build/out.txt": "",
            "docs/.gitignore": "!keep.log\ndraft/\n",
            "docs/keep.log": "",
            "docs/other.log": "",
            "docs/draft/a.md": "",
            "docs/index.md": "",
            ".hidden/x.py": "",
            ".env": "",
        },
    )
    (tmp_path / "link.py").symlink_to(tmp_path / "main.py")
    assert list(walk_files(str(tmp_path))) == ["main.py", "docs/index.md", "docs/keep.log"]


def test_skipped_folders_are_not_entered(tmp_path: Path) -> None:
    make(tmp_path, {"node_modules/x/index.js": "", "src/node_modules.py": "", "a.txt": ""})
    walked = walk_files(str(tmp_path), skip_dirs=frozenset({"node_modules"}))
    assert sorted(walked) == ["a.txt", "src/node_modules.py"]


def test_the_entry_budget_ends_a_walk_of_empty_folders(tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"d{n}").mkdir()
    assert list(walk_files(str(tmp_path), max_entries=30)) == []
    with pytest.raises(TooManyEntries):
        list(walk_files(str(tmp_path), max_entries=29))


def test_a_missing_root_walks_nothing(tmp_path: Path) -> None:
    assert list(walk_files(str(tmp_path / "missing"))) == []


def _walk_within(root: Path, bound_s: float = 60.0) -> list[str]:
    """walk_files in a thread, bounded; a FIFO it blocks on gets a writer so the test
    process itself never hangs."""
    found: list[list[str]] = []
    notes: list[str] = []
    worker = threading.Thread(target=lambda: found.append(list(walk_files(str(root), notes=notes))))
    worker.daemon = True
    worker.start()
    worker.join(bound_s)
    if worker.is_alive():
        for fifo in root.rglob(".gitignore"):
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(5)
        raise AssertionError(f"walk_files blocked for {bound_s:g} s on a special file")
    return [*found[0], *notes]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_special_gitignore_in_a_subfolder_is_skipped_not_waited_on(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "a.txt").write_text("a")
    trap = tmp_path / "trap"
    trap.mkdir()
    (trap / "kept.txt").write_text("t")
    if kind == "fifo":
        os.mkfifo(trap / ".gitignore")
    else:
        (trap / ".gitignore").symlink_to("/dev/zero")
    *files, note = _walk_within(tmp_path)
    assert files == ["a.txt", "trap/kept.txt"]
    what = "a FIFO" if kind == "fifo" else "a character device (through a symlink)"
    assert note == f"skipped {trap / '.gitignore'} is {what}"


def test_a_fifo_or_device_gitignore_is_no_rules_and_no_hang(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    os.mkfifo(tmp_path / "a" / ".gitignore")
    (tmp_path / "a" / "kept.txt").write_text("k")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / ".gitignore").symlink_to("/dev/zero")
    (tmp_path / "b" / "kept.txt").write_text("k")
    assert list(walk_files(str(tmp_path))) == ["a/kept.txt", "b/kept.txt"]
