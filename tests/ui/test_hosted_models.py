"""A window that is a host's view asks its host for the model list (`models/list`): the
window's process loads no HTTP client and opens no connection to the model server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from melgui.core.config.settings import Settings, save_settings
from tests.fakes.scripted_server import ScriptedOpenAI
from tests.ui.test_app import started_a_host

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")


def test_a_host_s_view_lists_its_models_through_the_host(tmp_path: Path) -> None:
    project, runtime, log = tmp_path / "project", tmp_path / "runtime", tmp_path / "err"
    project.mkdir()
    runtime.mkdir(mode=0o700)
    with ScriptedOpenAI(models=[{"id": "from-the-server"}]) as server:
        save_settings(
            Settings(connection="openai", openai_base_url=server.base_url, model="x"),
            tmp_path / "config" / "settings.json",
        )
        env = {
            **os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPROFILEIMPORTTIME": "1",
            "MELGUI_CONFIG_DIR": str(tmp_path / "config"), "OPENAI_API_KEY": "sk-test",
            "MELGUI_DATA_DIR": str(tmp_path / "data"), "XDG_RUNTIME_DIR": str(runtime),
        }  # fmt: skip
        with log.open("w") as err:  # a file: the import log outgrows a pipe's buffer
            window = subprocess.Popen(
                [sys.executable, "-m", "melgui", "--no-host", str(project)], env=env, stderr=err
            )
            try:
                deadline = time.monotonic() + 60
                while not (
                    started_a_host(window.pid)
                    and any(r.path.endswith("/models") for r in list(server.requests))
                ):
                    assert window.poll() is None and time.monotonic() < deadline
                    time.sleep(0.1)
                window.send_signal(signal.SIGTERM)
                assert window.wait(timeout=60) == 0
            finally:
                if window.poll() is None:
                    window.kill()
                    window.wait()
    # The window's own imports (its host child writes to a log of its own).
    lines = log.read_text().splitlines()
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in lines
        if line.startswith("import time:") and line.count("|") == 2
    }
    http = ("httpx", "httpcore", "h11", "melgui.core.transports.openai_compat")
    assert sorted(m for m in imported if m.split(".")[0] in http or m in http) == []
    assert "melgui.ui.window.host_view.models" in imported  # it asked its host
