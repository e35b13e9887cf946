"""Real temporary projects for checkpoint tests: with or without git, and a fingerprint
of a folder (every byte, mode and link) to prove a `.git` was never written."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(project: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=project, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_project(root: Path, *, with_git: bool) -> Path:
    """A small project: text files, a binary, a script, a symlink, an ignored log."""
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hello')\n")
    (project / "src" / "util.py").write_text("def f():\n    return 1\n")
    (project / "README.md").write_text("# demo\n")
    (project / "logo.bin").write_bytes(bytes(range(256)) * 4)
    (project / "run.sh").write_text("#!/bin/sh\necho run\n")
    (project / "run.sh").chmod(0o644)
    os.symlink("README.md", project / "readme-link")
    (project / ".gitignore").write_text("*.log\n")
    (project / "build.log").write_text("old log\n")
    if with_git:
        git(project, "init", "-q")
        git(project, "add", "-A")
        git(project, "commit", "-q", "-m", "start")
        git(project, "stash", "list")
    return project


def fingerprint(folder: Path) -> dict[str, tuple[int, str]]:
    """Path -> (mode, sha256 of contents or link target) for everything under `folder`,
    including timestamps of files so that even a rewrite with equal bytes shows."""
    result: dict[str, tuple[int, str]] = {}
    if not folder.exists():
        return result
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                digest = os.readlink(full)
            elif stat.S_ISREG(info.st_mode):
                with open(full, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest() + f"@{info.st_mtime_ns}"
            else:
                digest = "dir"
            result[os.path.relpath(full, folder)] = (info.st_mode, digest)
    return result


def tree(project: Path) -> dict[str, tuple[int, str]]:
    """The project's own files (not .git) with modes and contents, no timestamps."""
    return {
        path: (mode, digest.split("@")[0])
        for path, (mode, digest) in fingerprint(project).items()
        if not path.startswith(".git" + os.sep) and path != ".git"
    }
