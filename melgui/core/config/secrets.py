"""API keys: in the system keyring, or only for this session, or in a protected file.

`kind` names whose key it is: "relay", or an OpenAI-compatible preset id ("meliai",
"openai", …), or "custom". Lookup order: a key set this session, the keyring, the
protected file, then the environment (`MELIAI_API_KEY` for the relay and the Meliai
API, `OPENAI_API_KEY` for the others).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

from melgui.core.config.settings import config_dir

SERVICE = "melgui"
KEY_FILE = "api-keys.json"
Persist = Literal["keyring", "file", "session"]

_ENV_BY_KIND = {"relay": "MELIAI_API_KEY", "meliai": "MELIAI_API_KEY"}
_session_keys: dict[str, SecretStr] = {}


@dataclass(frozen=True, slots=True)
class KeyringStatus:
    available: bool
    backend: str
    message: str


@dataclass(frozen=True, slots=True)
class KeySaved:
    """Where a key went, and a sentence saying so."""

    where: Persist
    message: str


def env_var_for(kind: str) -> str:
    return _ENV_BY_KIND.get(kind, "OPENAI_API_KEY")


def keyring_status() -> KeyringStatus:
    """Whether a usable system keyring exists; when not, what happens to keys instead."""
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
    except Exception as exc:  # keyring itself broken (e.g. a bad backend setting)
        return KeyringStatus(False, "none", _no_keyring_message(f"keyring failed: {exc}"))
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    priority = getattr(backend, "priority", 0)
    if isinstance(backend, fail.Keyring) or not isinstance(priority, int | float) or priority <= 0:
        return KeyringStatus(False, name, _no_keyring_message("no keyring backend is available"))
    return KeyringStatus(True, name, f"Keys are kept in the system keyring ({name}).")


def _no_keyring_message(why: str) -> str:
    return (
        f"No system keyring: {why}. The key is kept only for this session unless you "
        "choose to save it in a protected file (readable only by you)."
    )


def get_api_key(kind: str) -> str | None:
    """The key for `kind`, or None when none is set anywhere."""
    if kind in _session_keys:
        return _session_keys[kind].get_secret_value()
    stored = _keyring_get(kind) or _file_keys().get(kind)
    if stored:
        return stored
    return os.environ.get(env_var_for(kind)) or None


def stored_secret(kind: str) -> str | None:
    """What melgui itself keeps for `kind` (session, keyring, protected file); never the
    environment. For secrets that are not API keys (an MCP server's OAuth tokens)."""
    if kind in _session_keys:
        return _session_keys[kind].get_secret_value()
    return _keyring_get(kind) or _file_keys().get(kind)


def save_secret(kind: str, value: str) -> KeySaved:
    """Keep `value` across runs: in the keyring, or where there is none in the protected
    file (a run of `melgui exec` cannot ask where)."""
    return set_api_key(kind, value, "keyring" if keyring_status().available else "file")


def key_source(kind: str) -> str:
    """Where get_api_key(kind) would find the key, in words (for the Settings dialog)."""
    if kind in _session_keys:
        return "this session only"
    if _keyring_get(kind):
        return "system keyring"
    if _file_keys().get(kind):
        return f"protected file {key_file_path()}"
    if os.environ.get(env_var_for(kind)):
        return f"environment variable {env_var_for(kind)}"
    return "not set"


def set_api_key(kind: str, key: str, persist: Persist = "keyring") -> KeySaved:
    """Store the key; an empty key removes it. Never raises for storage trouble.

    With persist="keyring" and no usable keyring, the key is kept for the session only
    and the returned message says so.
    """
    key = key.strip()
    if not key:
        delete_api_key(kind)
        return KeySaved("session", "The key was removed.")
    _session_keys[kind] = SecretStr(key)
    if persist == "session":
        return KeySaved("session", "The key is kept only until melgui closes.")
    if persist == "file":
        try:
            _write_file_keys({**_file_keys(), kind: key})
        except OSError as exc:
            return KeySaved(
                "session",
                f"Cannot write {key_file_path()} ({exc.strerror}); "
                "the key is kept only for this session.",
            )
        return KeySaved("file", f"The key is saved in {key_file_path()} (mode 0600).")
    status = keyring_status()
    if not status.available:
        return KeySaved("session", status.message)
    try:
        import keyring

        keyring.set_password(SERVICE, kind, key)
    except Exception as exc:  # a locked or broken keyring
        return KeySaved(
            "session", f"The keyring refused the key ({exc}); it is kept only for this session."
        )
    return KeySaved("keyring", "The key is saved in the system keyring.")


def delete_api_key(kind: str) -> None:
    """Forget the key everywhere melgui stores it (not the environment)."""
    _session_keys.pop(kind, None)
    if keyring_status().available:
        try:
            import keyring

            keyring.delete_password(SERVICE, kind)
        except Exception:  # absent already, or a locked keyring: nothing to remove
            pass
    keys = _file_keys()
    if kind in keys:
        del keys[kind]
        with contextlib.suppress(OSError):
            _write_file_keys(keys)


def forget_session_keys() -> None:
    """Drop keys held in memory (tests; closing the app)."""
    _session_keys.clear()


def _keyring_get(kind: str) -> str | None:
    if _no_keyring_backend_here() or not keyring_status().available:
        return None
    try:
        import keyring

        value = keyring.get_password(SERVICE, kind)
    except Exception:  # a locked or broken keyring reads as "no key"
        return None
    return value or None


def key_file_path() -> Path:
    return config_dir() / KEY_FILE


def _file_keys() -> dict[str, str]:
    try:
        data = json.loads(key_file_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, str)}


def _write_file_keys(keys: dict[str, str]) -> None:
    path = key_file_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{KEY_FILE}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if hasattr(os, "fchmod"):  # an existing file keeps its mode otherwise
            os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(keys, out)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    os.replace(temp, path)


def _no_keyring_backend_here() -> bool:
    """True only where keyring itself would find no backend, told without importing it
    (importing keyring, scanning every installed package's entry points and importing
    its backends costs a `melgui exec` about 60 ms of CPU, key in the environment or not).

    keyring picks, in order: PYTHON_KEYRING_BACKEND, its keyringrc.cfg, else the most
    viable backend its entry points name. On Linux its own backends all need the session
    bus: SecretService finds it through DBUS_SESSION_BUS_ADDRESS only (jeepney); KWallet
    (dbus-python) and libsecret (gi) may also find $XDG_RUNTIME_DIR/bus, so they must be
    missing. Any other package naming a backend, a keyring already imported (it may have
    been set up in this process), or anything unsure: False, and keyring decides."""
    try:
        if "keyring" in sys.modules or not sys.platform.startswith("linux"):
            return False
        env = os.environ
        if "PYTHON_KEYRING_BACKEND" in env or "DBUS_SESSION_BUS_ADDRESS" in env:
            return False
        config = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        if (config / "python_keyring" / "keyringrc.cfg").exists():
            return False
        runtime = env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
        if Path(runtime, "bus").exists():
            return False
        return _only_keyrings_own_backends(tuple(sys.path))
    except Exception:  # unsure: keyring decides
        return False


@functools.cache
def _only_keyrings_own_backends(path: tuple[str, ...]) -> bool:
    """No installed package but keyring names a `keyring.backends` entry point, and
    neither module that would let KWallet or libsecret reach a bus is installed."""
    if find_spec("gi") is not None or find_spec("dbus") is not None:
        return False
    for entry in path:
        folder = Path(entry or ".")
        if not folder.is_dir():
            if folder.exists():
                return False  # a zip on the path may hold packages: unsure
            continue
        for name in os.listdir(folder):
            if name.endswith(".egg"):
                return False  # an egg's metadata is not read here: unsure
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            points = folder / name / "entry_points.txt"
            try:
                text = points.read_text(encoding="utf-8")
            except (FileNotFoundError, NotADirectoryError):
                continue
            if "keyring.backends" not in text:
                continue
            if name.split("-")[0].lower() != "keyring" or not _own_backends(text):
                return False
    return True


def _own_backends(text: str) -> bool:
    """keyring's own entry points name only modules of `keyring.backends`."""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip()
        elif section == "keyring.backends" and "=" in line:
            target = line.split("=", 1)[1].strip()
            if not target.startswith("keyring.backends."):
                return False
    return True
