"""The test sshd works as a person's ssh sees it: the Host block, the keys, the user."""

from __future__ import annotations

import shlex
import subprocess

from tests.remote.fixtures import Remote
from tests.remote.sshd import TestSshServer, person_ssh_config


def test_the_host_block_reaches_the_remote_user(ssh_server: TestSshServer) -> None:
    assert f"Host {ssh_server.alias}" in person_ssh_config().read_text()
    done = ssh_server.ssh("id -un; echo $HOME")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [ssh_server.user.pw_name, str(ssh_server.home)]


def test_an_unknown_host_key_is_refused(ssh_server: TestSshServer) -> None:
    """Nothing connects silently: the same server under another name has no known key."""
    done = subprocess.run(
        ["ssh", "-T", "-o", "BatchMode=yes", "-o", "UserKnownHostsFile=/dev/null",
         ssh_server.alias, "true"],
        capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 255
    assert "Host key verification failed" in done.stderr


def test_the_remote_python_imports_melgui_host(remote: Remote) -> None:
    argv = [*remote.host_argv[:3], "-c", "import melgui.host.main, httpx"]
    done = remote.server.ssh(shlex.join(argv))
    assert done.returncode == 0, done.stderr
