"""A real sshd on 127.0.0.1 for a second local user, configured for the person's ssh as a
`Host` block (tests/remote/sshd.py), and what the remote user's Python needs to run
melgui's host (tests/remote/remote_python.py).

A plugin of the root conftest, not a conftest of its own: tests/remote and tests/ui/remote
share the one session's server (a second one would find the remote user still busy)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.projects import git
from tests.remote.remote_python import REMOTE_PYTHON, remote_python_path
from tests.remote.sshd import TestSshServer


@dataclass(frozen=True)
class Remote:
    """The ssh server and how the remote user runs melgui there."""

    server: TestSshServer
    python_path: str  # PYTHONPATH on the remote (the code copy and its dependencies)
    python: str = REMOTE_PYTHON

    @property
    def host_argv(self) -> list[str]:
        """The argv that starts melgui's host on the remote, env included."""
        return ["env", f"PYTHONPATH={self.python_path}", self.python, "-m", "melgui", "host"]

    def folder(self, name: str) -> Path:
        """A fresh folder in the remote user's home, owned by it."""
        place = self.server.home / name
        shutil.rmtree(place, ignore_errors=True)
        place.mkdir()
        self.server.give(place)
        return place


def url(remote: Remote, folder: Path) -> str:
    """The folder's URL, as a person gives it (`ssh://HOST/abs/path`)."""
    return f"ssh://{remote.server.alias}{folder}"


def git_folder_there(remote: Remote, name: str, files: dict[str, str]) -> Path:
    """A fresh folder there holding `files`, a git repository with them committed."""
    folder = remote.folder(name)
    for path, text in files.items():
        (folder / path).write_text(text)
    mine = ("-c", "safe.directory=*")  # made here as root, then given to the remote user
    git(folder, *mine, "init", "-q")
    git(folder, *mine, "add", "-A")
    git(folder, *mine, "commit", "-q", "-m", "start")
    remote.server.give(folder)
    return folder


@pytest.fixture(scope="session")
def ssh_server() -> Iterator[TestSshServer]:
    if os.geteuid() != 0:
        pytest.skip("the sshd tests make a second local user, which needs root")
    workdir = Path(tempfile.mkdtemp(prefix="melgui-sshd-"))
    try:
        with TestSshServer.start(workdir) as server:
            yield server
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def remote(ssh_server: TestSshServer) -> Remote:
    paths = remote_python_path(ssh_server.workdir)
    return Remote(ssh_server, ":".join(paths))
