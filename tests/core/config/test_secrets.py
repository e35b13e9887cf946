"""API keys: keyring when there is one, the session or a 0600 file when there is not."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend

from melgui.core.config import secrets


class MemoryKeyring(KeyringBackend):
    """A working keyring held in a dict."""

    priority = 5  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    secrets.forget_session_keys()
    if secrets.key_file_path().exists():
        secrets.key_file_path().unlink()
    previous = keyring.get_keyring()
    yield
    keyring.set_keyring(previous)
    secrets.forget_session_keys()
    if secrets.key_file_path().exists():
        secrets.key_file_path().unlink()


def test_without_a_keyring_the_key_lives_only_for_the_session() -> None:
    status = secrets.keyring_status()
    assert not status.available
    assert "only for this session" in status.message
    saved = secrets.set_api_key("relay", "k-123")
    assert saved.where == "session" and "only for this session" in saved.message
    assert secrets.get_api_key("relay") == "k-123"
    secrets.forget_session_keys()
    assert secrets.get_api_key("relay") is None


def test_the_protected_file_is_private_to_the_user() -> None:
    saved = secrets.set_api_key("openai", "sk-file", persist="file")
    assert saved.where == "file"
    mode = stat.S_IMODE(os.stat(secrets.key_file_path()).st_mode)
    assert mode == 0o600
    secrets.forget_session_keys()
    assert secrets.get_api_key("openai") == "sk-file"
    secrets.delete_api_key("openai")
    assert secrets.get_api_key("openai") is None


def test_a_working_keyring_keeps_the_key() -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    assert secrets.keyring_status().available
    assert secrets.set_api_key("meliai", "m-key").where == "keyring"
    assert backend.store[(secrets.SERVICE, "meliai")] == "m-key"
    secrets.forget_session_keys()
    assert secrets.get_api_key("meliai") == "m-key"
    assert secrets.key_source("meliai") == "system keyring"


def test_environment_keys_are_picked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MELIAI_API_KEY", "from-env")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-env")
    assert secrets.get_api_key("relay") == "from-env"
    assert secrets.get_api_key("meliai") == "from-env"
    assert secrets.get_api_key("openai") == "openai-env"
    assert secrets.get_api_key("custom") == "openai-env"
    assert "MELIAI_API_KEY" in secrets.key_source("relay")


def test_an_empty_key_removes_it() -> None:
    secrets.set_api_key("relay", "x", persist="session")
    secrets.set_api_key("relay", "  ")
    assert secrets.get_api_key("relay") is None


class BrokenKeyring(MemoryKeyring):
    """A keyring that is there but fails every call (locked, or its service crashed)."""

    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("the keyring is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError("the keyring is locked")


def test_lookup_order_is_session_keyring_file_then_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert secrets.get_api_key("openai") == "from-env"
    secrets.set_api_key("openai", "from-file", persist="file")
    secrets.forget_session_keys()
    assert secrets.get_api_key("openai") == "from-file"
    backend.store[(secrets.SERVICE, "openai")] = "from-keyring"
    assert secrets.get_api_key("openai") == "from-keyring"
    assert secrets.key_source("openai") == "system keyring"
    secrets.set_api_key("openai", "from-session", persist="session")
    assert secrets.get_api_key("openai") == "from-session"
    assert secrets.key_source("openai") == "this session only"


def test_a_failing_keyring_falls_back_instead_of_raising(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    keyring.set_keyring(BrokenKeyring())
    monkeypatch.setenv("MELIAI_API_KEY", "from-env")
    assert secrets.get_api_key("relay") == "from-env"
    saved = secrets.set_api_key("relay", "typed-key")
    assert saved.where == "session"
    secrets.forget_session_keys()
    assert secrets.get_api_key("relay") == "from-env"
