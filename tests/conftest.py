"""Test-wide setup: Qt offscreen, config and data folders that never touch the real home."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Forced, not defaulted: an exported value would put the suite on a real display.
os.environ["QT_QPA_PLATFORM"] = "offscreen"
# Code that runs at import time gets these; every test then gets folders of its own.
_SANDBOX = tempfile.mkdtemp(prefix="melgui-tests-")
atexit.register(shutil.rmtree, _SANDBOX, ignore_errors=True)
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
# The melgui host's place: a window under test whose host ends starts a new one (as it
# should), and that must never be, or join, the developer's own host.
os.environ["XDG_RUNTIME_DIR"] = os.path.join(_SANDBOX, "runtime")
os.mkdir(os.environ["XDG_RUNTIME_DIR"], 0o700)
# Never let a developer's real keys or servers leak into a test.
for _name in ("MELIAI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)
# keyring must never reach a real desktop keyring from tests.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"

pytest_plugins: list[str] = []
if os.path.exists(os.path.join(os.path.dirname(__file__), "fakes", "fixtures.py")):
    pytest_plugins.append("tests.fakes.fixtures")
if os.path.exists(os.path.join(os.path.dirname(__file__), "remote", "fixtures.py")):
    pytest_plugins.append("tests.remote.fixtures")  # the sshd: one per session


@pytest.fixture(autouse=True)
def own_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each test's own config and data folders: no history, memory or settings shared."""
    base = tmp_path_factory.mktemp("melgui-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MELGUI_CONFIG_DIR", str(base / "config"))
        patch.setenv("MELGUI_DATA_DIR", str(base / "data"))
        yield base
    from melgui.core.config.redaction import forget_secrets

    forget_secrets()  # the keys a test's transports held hide nothing in the next test


@pytest.fixture(autouse=True)
def no_box_host_left() -> Iterator[None]:
    """A host started in a `box_host` runtime after its block ended (by a window the test
    closed later) is ended and fails the test: it would outlive the run."""
    yield
    from tests.remote.local_target import hosts_started_late

    late = hosts_started_late()
    assert not late, f"melgui host {late} started after its box_host block ended"
