"""SIGTERM and SIGINT while a command runs (the real app, against a scripted server):
exit 0, nothing on stderr, and the call is answered in the journal (never left open)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from melgui.core.store import open_store
from tests.fakes import ScriptedOpenAI, text, tool_call, tool_calls

ROOT = Path(__file__).resolve().parents[2]
# As a module from the checkout: run as a script, tests/fakes would shadow packages
# (tests/fakes/mcp.py is not the MCP SDK).
DRIVER = ["-m", "tests.fakes.app_driver"]
OFFSCREEN_NOTE = "This plugin does not support propagateSizeHints()"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


# Three runs of each, each its own app process and its own test (and time budget).
@pytest.mark.parametrize("run", range(3))
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_a_command_runs_exits_cleanly(
    scripted_openai: ScriptedOpenAI, tmp_path: Path, signum: signal.Signals, run: int
) -> None:
    scripted_openai.strict = False  # the turn ends before the answer leg is asked for
    scripted_openai.script(
        [
            text("Running it."),
            tool_calls(tool_call("run_command", {"command": "sleep 30"}, id=f"c{run}")),
        ]
    )
    project = tmp_path / f"project{run}"
    project.mkdir()
    config = tmp_path / f"config{run}"
    config.mkdir()
    settings = {
        "connection": "openai",
        "openai_base_url": scripted_openai.base_url,
        "model": "gpt-test",
        "rules": ["allow run_command: sleep"],  # runs without asking
    }
    (config / "settings.json").write_text(json.dumps(settings))
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "MELGUI_CONFIG_DIR": str(config),
        "MELGUI_DATA_DIR": str(tmp_path / f"data{run}"),
        "OPENAI_API_KEY": "test-key",
    }
    process = subprocess.Popen(
        [sys.executable, *DRIVER, str(project), "Sleep for a while."],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        while "tool-started" not in lines:
            line = process.stdout.readline()
            assert line, f"the app ended before the tool started: {lines}"
            lines.append(line.strip())
        process.send_signal(signum)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    err = "".join(line for line in err.splitlines(True) if line.strip() != OFFSCREEN_NOTE)
    assert (process.returncode, err) == (0, ""), f"run {run}: {process.returncode}\n{err}"
    store = open_store(tmp_path / f"data{run}")
    try:
        (conversation,) = store.conversations(str(project))
        messages = [m.message for m in store.messages(conversation.id)]
    finally:
        store.close()
    assert [m.role for m in messages] == ["user", "assistant", "tool"], messages
    assert messages[2].tool_call_id == f"c{run}"  # the call got its one result
