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
