"""The real sshd for a second local user (tests/remote), for the window's remote tests."""

from tests.remote.conftest import remote, ssh_server

__all__ = ["remote", "ssh_server"]
