"""API keys: keyring when there is one, the session or a 0600 file when there is not."""

from __future__ import annotations

import json
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


def _no_keyring(why: str) -> str:
    return (
        f"No system keyring: {why}. The key is kept only for this session unless you "
        "choose to save it in a protected file (readable only by you)."
    )


class RankedKeyring(MemoryKeyring):
    """A keyring whose priority a test sets (keyring skips backends ranked 0 or less)."""

    def __init__(self, rank: object) -> None:
        super().__init__()
        self.rank = rank

    @property
    def priority(self) -> object:  # type: ignore[override]
        return self.rank


def test_keyring_status_names_the_backend_and_says_exactly_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert secrets.keyring_status() == secrets.KeyringStatus(
        False, "keyring.backends.null.Keyring", _no_keyring("no keyring backend is available")
    )
    name = f"{__name__}.RankedKeyring"
    keyring.set_keyring(RankedKeyring(0.5))
    assert secrets.keyring_status() == secrets.KeyringStatus(
        True, name, f"Keys are kept in the system keyring ({name})."
    )
    for rank in (0, -1, "high"):  # ranked out, or a priority that is not a number
        keyring.set_keyring(RankedKeyring(rank))
        assert secrets.keyring_status() == secrets.KeyringStatus(
            False, name, _no_keyring("no keyring backend is available")
        ), rank

    def broken() -> None:
        raise RuntimeError("bad backend setting")

    monkeypatch.setattr(keyring, "get_keyring", broken)
    assert secrets.keyring_status() == secrets.KeyringStatus(
        False, "none", _no_keyring("keyring failed: bad backend setting")
    )


def test_each_way_of_keeping_a_key_says_exactly_where_it_went(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = secrets.key_file_path()
    assert secrets.set_api_key("relay", "k", "session") == secrets.KeySaved(
        "session", "The key is kept only until melgui closes."
    )
    assert secrets.set_api_key("relay", " ") == secrets.KeySaved("session", "The key was removed.")
    assert secrets.set_api_key("relay", "k") == secrets.KeySaved(
        "session", _no_keyring("no keyring backend is available")
    )
    assert secrets.set_api_key("relay", "k", "file") == secrets.KeySaved(
        "file", f"The key is saved in {path} (mode 0600)."
    )
    keyring.set_keyring(BrokenKeyring())
    assert secrets.set_api_key("relay", "k") == secrets.KeySaved(
        "session",
        "The keyring refused the key (the keyring is locked); it is kept only for this session.",
    )
    keyring.set_keyring(MemoryKeyring())
    assert secrets.set_api_key("relay", "k") == secrets.KeySaved(
        "keyring", "The key is saved in the system keyring."
    )
    blocked = path.parent / "blocked"
    blocked.write_text("a file where a folder should be")
    monkeypatch.setattr(secrets, "key_file_path", lambda: blocked / secrets.KEY_FILE)
    assert secrets.set_api_key("openai", "k", "file") == secrets.KeySaved(
        "session",
        f"Cannot write {blocked / secrets.KEY_FILE} (File exists); "
        "the key is kept only for this session.",
    )


def test_the_key_file_goes_in_a_new_nested_folder_and_is_made_private_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nested = secrets.key_file_path().parent / "a" / "b" / secrets.KEY_FILE
    monkeypatch.setattr(secrets, "key_file_path", lambda: nested)
    secrets.set_api_key("openai", "sk-é", "file")
    nested.chmod(0o644)  # loosened by someone: the next write tightens it
    secrets.set_api_key("relay", "r-1", "file")
    assert stat.S_IMODE(nested.stat().st_mode) == 0o600
    assert json.loads(nested.read_text(encoding="utf-8")) == {"openai": "sk-é", "relay": "r-1"}
    assert list(nested.parent.iterdir()) == [nested]  # no temporary file left
    with pytest.raises(TypeError):
        secrets._write_file_keys({"x": object()})  # type: ignore[dict-item]
    assert list(nested.parent.iterdir()) == [nested]  # a failed write leaves no temp file


def test_unreadable_or_odd_key_files_read_as_no_keys() -> None:
    path = secrets.key_file_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    for text, keys in (
        ("not json", {}),
        ('["a list"]', {}),
        ('{"openai": "sk", "relay": 5}', {"openai": "sk"}),
    ):
        path.write_text(text, encoding="utf-8")
        assert secrets._file_keys() == keys, text


def test_deleting_a_key_removes_it_from_the_keyring_and_the_file_only_for_that_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    backend.store[(secrets.SERVICE, "relay")] = "in-keyring"
    backend.store[(secrets.SERVICE, "openai")] = "other"
    secrets.set_api_key("relay", "in-file", "file")
    secrets.set_api_key("openai", "other-file", "file")
    secrets.delete_api_key("relay")
    assert backend.store == {(secrets.SERVICE, "openai"): "other"}
    assert secrets._file_keys() == {"openai": "other-file"}
    assert secrets.get_api_key("relay") is None


def test_key_source_names_the_file_the_variable_or_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert secrets.key_source("openai") == "not set"
    monkeypatch.setenv("OPENAI_API_KEY", "e")  # not the relay's variable
    assert secrets.key_source("relay") == "not set"
    assert secrets.key_source("openai") == "environment variable OPENAI_API_KEY"
    secrets.set_api_key("openai", "f", "file")
    secrets.forget_session_keys()
    assert secrets.key_source("openai") == f"protected file {secrets.key_file_path()}"
