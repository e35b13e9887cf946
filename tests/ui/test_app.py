"""`melgui FOLDER` as a real process: it opens, and a polite kill closes it cleanly (its
history too: the next start skips the history's integrity check)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from melgui.core.store import database as writers
from melgui.core.store.paths import database_path

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")


def catches_sigterm(pid: int) -> bool:
    """True once the process installed its SIGTERM handler (the window is up by then)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


def stop_the_host(env: dict[str, str]) -> None:
    """End the melgui host the window started: it outlives the window (it would end
    itself after 10 idle minutes), and may still be starting when the window quits."""
    deadline = time.monotonic() + 30
    while True:
        stopped = subprocess.run(
            [sys.executable, "-m", "melgui", "host", "--stop"],
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if stopped.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def started_a_host(pid: int) -> bool:
    """True once the window (up: it catches SIGTERM) has started a host of its own, its
    child (`--no-host`: after its first paint)."""
    if not catches_sigterm(pid):
        return False
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        return any(Path(f"/proc/{pid}/task/{t}/children").read_text().split() for t in tasks)
    except OSError:
        return False


def run_until_sigterm(
    tmp_path: Path, *options: str, ready: Callable[[int], bool] = catches_sigterm, **environ: str
) -> str:
    """`melgui FOLDER`, with `options` and `environ`, from its start (`ready`: the window
    is up) to a clean quit on SIGTERM; what it wrote on stderr."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "MELGUI_CONFIG_DIR": str(tmp_path / "config"),
        "MELGUI_DATA_DIR": str(tmp_path / "data"),
        "XDG_RUNTIME_DIR": str(runtime),  # the host's socket: this test's own
        **environ,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "melgui", *options, str(project)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not ready(process.pid):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the app did not come up"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        if "--no-host" not in options:
            stop_the_host(env)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    return err


def test_the_app_starts_on_a_folder_and_quits_cleanly_on_sigterm(tmp_path: Path) -> None:
    run_until_sigterm(tmp_path)


def test_a_window_closed_cleanly_leaves_its_history_unchecked_at_the_next_start(
    tmp_path: Path,
) -> None:
    """The window closes the history it opened: its writer lease goes with it, so the
    next start does not read the whole file for damage (a killed window's would)."""
    run_until_sigterm(tmp_path, "--no-host")
    database = database_path(tmp_path / "data")
    assert database.exists()
    leases = [p.name for p in writers.writers_folder(database).iterdir()]
    assert leases == [writers.IDENTITY]  # no lease left behind by the window
    lease = writers.take_lease(database)
    try:
        assert not lease.needs_check
    finally:
        lease.release()


def test_an_open_window_with_no_acp_agent_holds_no_acp_sdk(tmp_path: Path) -> None:
    """The ACP SDK (about 20 MiB and 0.4 s of its pydantic schema) is imported when an ACP
    agent is made, not with the window: the window's log of what it imported
    (`-X importtime`) does not name it."""
    err = run_until_sigterm(tmp_path, "--no-host", PYTHONPROFILEIMPORTTIME="1")
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in err.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert {"melgui.ui.window.main_window", "melgui.desk.hosted_agents.session"} <= imported
    assert sorted(m for m in imported if m.split(".")[0] == "acp") == []


def test_a_window_that_is_a_host_s_view_loads_no_workspace_tool(tmp_path: Path) -> None:
    """The workspace tools (files, search, commands, PDF, memory) run in the host: a window
    that is its view imports none of them, neither as it opens nor once its host runs
    (the window's log of what it imported, `-X importtime`, does not name them)."""
    err = run_until_sigterm(
        tmp_path, "--no-host", ready=started_a_host, PYTHONPROFILEIMPORTTIME="1"
    )
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in err.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert {"melgui.ui.window.main_window", "melgui.desk.desk"} <= imported
    tools = (
        *("melgui.tools.toolbox", "melgui.tools.files", "melgui.tools.search"),
        *("melgui.tools.pdf", "melgui.tools.memory", "melgui.tools.commands.run_command"),
    )
    assert sorted(m for m in imported if m.startswith(tools)) == []


def test_a_missing_folder_is_one_clear_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "melgui", str(tmp_path / "nope")],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "is not a folder" in result.stderr and "Traceback" not in result.stderr
