"""Test-wide setup: Qt offscreen, config and data folders that never touch the real home."""

from __future__ import annotations

import os
import tempfile

# Forced, not defaulted: an exported value would put the suite on a real display.
os.environ["QT_QPA_PLATFORM"] = "offscreen"
_SANDBOX = tempfile.mkdtemp(prefix="melgui-tests-")
os.environ["MELGUI_CONFIG_DIR"] = os.path.join(_SANDBOX, "config")
os.environ["MELGUI_DATA_DIR"] = os.path.join(_SANDBOX, "data")
# Never let a developer's real keys or servers leak into a test.
for _name in ("MELIAI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
    os.environ.pop(_name, None)
# keyring must never reach a real desktop keyring from tests.
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"

pytest_plugins: list[str] = []
if os.path.exists(os.path.join(os.path.dirname(__file__), "fakes", "fixtures.py")):
    pytest_plugins.append("tests.fakes.fixtures")
