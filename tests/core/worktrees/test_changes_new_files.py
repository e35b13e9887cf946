"""New files' patches written without git match what git writes, byte for byte (but the
"index" line, which git apply does not need)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from melgui.core.worktrees.changes.new_files import new_file_patch
from tests.fakes.projects import GIT_ENV

FILES: dict[str, bytes] = {
    "plain.txt": b"one\ntwo\n",
    "no-newline.txt": b"one\ntwo",
    "one line.txt": b"only\n",
    "empty.txt": b"",
    "crlf.txt": b"a\r\nb\r\n",
    'tab\tand "quote".txt': b"odd name\n",
    "é-accent.md": "naïve\n".encode(),
    "latin1.txt": b"caf\xe9\n",
    "blank-lines.txt": b"\n\n\n",
}


def _git_patch(root: Path, path: str) -> str:
    result = subprocess.run(
        ["git", "-c", "core.quotePath=false", "diff", "--no-index", "--binary", "--no-color",
         "--src-prefix=a/", "--dst-prefix=b/", "--", "/dev/null", path],
        cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    text = result.stdout.decode("utf-8", "surrogateescape")
    return "".join(line for line in text.splitlines(True) if not line.startswith("index "))


@pytest.mark.parametrize("name", sorted(FILES))
def test_written_like_git(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(FILES[name])
    assert new_file_patch(tmp_path, name) == _git_patch(tmp_path, name)


def test_executable_mode(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_bytes(b"#!/bin/sh\n")
    (tmp_path / "run.sh").chmod(0o755)
    assert new_file_patch(tmp_path, "run.sh") == _git_patch(tmp_path, "run.sh")


def test_binary_and_links_are_left_to_git(tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"a\0b")
    (tmp_path / "link").symlink_to("blob")
    assert new_file_patch(tmp_path, "blob") is None
    assert new_file_patch(tmp_path, "link") is None
    assert new_file_patch(tmp_path, "missing") is None
