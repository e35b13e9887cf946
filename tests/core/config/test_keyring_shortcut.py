"""Where keyring would find no backend, the key lookup says so without importing keyring;
wherever a backend could be found (a package naming one, keyring's config, a bus),
keyring decides and its key still beats the environment's. Real processes, a real
installed-looking package and a real keyringrc.cfg."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

ROOT = Path(__file__).resolve().parents[3]
PROBE = textwrap.dedent(
    """
    import json, sys
    from melgui.core.config import secrets
    key = secrets.get_api_key("relay")
    shortcut = "keyring" not in sys.modules
    print(json.dumps({"key": key, "shortcut": shortcut,
                      "available": secrets.keyring_status().available}))
    """
)
BACKEND = textwrap.dedent(
    """
    from keyring.backend import KeyringBackend

    class StoredKeyring(KeyringBackend):
        priority = 7

        def get_password(self, service, username):
            return "stored-key" if (service, username) == ("melgui", "relay") else None

        def set_password(self, service, username, password):
            raise NotImplementedError

        def delete_password(self, service, username):
            raise NotImplementedError
    """
)


def _probe(tmp_path: Path, extra_path: str = "", **env: str) -> dict[str, object]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")
    }
    clean.update(
        PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), extra_path) if p),
        MELIAI_API_KEY="env-key",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_RUNTIME_DIR=str(tmp_path / "runtime"),
        MELGUI_CONFIG_DIR=str(tmp_path / "melgui-config"),
        **env,
    )
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=clean, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _installed_backend(tmp_path: Path) -> Path:
    """A package on the path that names a keyring backend, as pip installs one."""
    site = tmp_path / "site"
    info = site / "storedring-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: storedring\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[keyring.backends]\nstored = storedring\n")
    (site / "storedring.py").write_text(BACKEND)
    return site


def test_with_no_backend_anywhere_keyring_is_not_imported_and_agrees(tmp_path: Path) -> None:
    found = _probe(tmp_path)
    assert found == {"key": "env-key", "shortcut": True, "available": False}


def test_a_package_naming_a_backend_is_asked_and_beats_the_environment(tmp_path: Path) -> None:
    found = _probe(tmp_path, str(_installed_backend(tmp_path)))
    assert found == {"key": "stored-key", "shortcut": False, "available": True}


def test_keyrings_own_config_is_followed(tmp_path: Path) -> None:
    site = _installed_backend(tmp_path)
    (site / "storedring-1.0.dist-info" / "entry_points.txt").unlink()  # only the config names it
    config = tmp_path / "config" / "python_keyring"
    config.mkdir(parents=True)
    (config / "keyringrc.cfg").write_text("[backend]\ndefault-keyring=storedring.StoredKeyring\n")
    found = _probe(tmp_path, str(site))
    assert found == {"key": "stored-key", "shortcut": False, "available": True}


@pytest.mark.parametrize("variable", ["PYTHON_KEYRING_BACKEND", "DBUS_SESSION_BUS_ADDRESS"])
def test_a_named_backend_or_a_session_bus_leaves_it_to_keyring(
    tmp_path: Path, variable: str
) -> None:
    value = {
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path / 'no-bus'}",
    }[variable]
    found = _probe(tmp_path, **{variable: value})
    assert found == {"key": "env-key", "shortcut": False, "available": False}


def test_a_bus_socket_in_the_runtime_folder_leaves_it_to_keyring(tmp_path: Path) -> None:
    (tmp_path / "runtime").mkdir()
    (tmp_path / "runtime" / "bus").touch()
    found = _probe(tmp_path)
    assert found == {"key": "env-key", "shortcut": False, "available": False}
