"""`melgui exec --folder ssh://HOST/abs/path` against a real sshd on 127.0.0.1: the loop
and the key stay here, the tools run in melgui's host on the remote user's side; and the
`ssh` client killed mid-call: the link reconnects, the call's one result arrives, it ran
once there, and the model saw exactly one result per call."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from melgui.remote.connect import HOST_COMMAND_ENV
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import ROOT, json_lines, melgui_exec
from tests.remote.fixtures import Remote

KEY = "k-remote"


def exec_env(remote: Remote) -> dict[str, str]:
    return {"MELIAI_API_KEY": KEY, HOST_COMMAND_ENV: shlex.join(remote.host_argv)}


def url(remote: Remote, folder: Path) -> str:
    return f"ssh://{remote.server.alias}{folder}"


def tool_results(request: Any) -> dict[str, int]:
    """How many results the model got for each call id, in one request."""
    counts: dict[str, int] = {}
    for message in request.messages:
        if message.get("role") == "tool":
            counts[message["tool_call_id"]] = counts.get(message["tool_call_id"], 0) + 1
    return counts


def test_exec_over_ssh_reads_and_writes_on_the_remote(
    scripted_relay: ScriptedRelay, remote: Remote
) -> None:
    folder = remote.folder("project-rw")
    (folder / "a.txt").write_text("written on the remote\n")
    remote.server.give(folder)
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"),
                    tool_call("write_file", {"path": "out.txt", "content": "made"}, id="w1"))],
        [text("Done."), done()],
    )  # fmt: skip
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", url(remote, folder), "--approve", "all",
        "--json", "read a and write out",
        env=exec_env(remote),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    assert [e["status"] for e in events if e["kind"] == "tool_result"] == ["ok", "ok"]
    written = folder / "out.txt"
    assert written.read_text() == "made"
    assert written.stat().st_uid == remote.server.user.pw_uid  # written by the remote user
    second = scripted_relay.legs_received[1]
    assert tool_results(second) == {"r1": 1, "w1": 1}
    read = next(m for m in second.messages if m.get("tool_call_id") == "r1")
    assert "written on the remote" in read["content"]
    # The key went to the model's server, never to the remote.
    assert second.authorization == f"Bearer {KEY}"
    assert KEY not in _remote_files_text(remote.server.home)


def _remote_files_text(home: Path) -> str:
    texts = []
    for path in home.rglob("*"):
        if path.is_file() and path.stat().st_size < 1_000_000:
            texts.append(path.read_bytes().decode(errors="replace"))
    return "\n".join(texts)


def ssh_children(pid: int, name: str = "ssh") -> list[int]:
    """The processes named `name` whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        called = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        if parent == pid and called == name:
            found.append(int(entry.name))
    return found


def session_sshd(listener: int) -> list[int]:
    return [
        child
        for monitor in ssh_children(listener, "sshd")
        for child in ssh_children(monitor, "sshd")
    ]


def wait_for(check: Any, timeout: float = 60.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("killed", ["the ssh client", "the session's sshd child"])
def test_a_link_killed_mid_call_the_call_runs_once_and_its_result_arrives_once(
    scripted_relay: ScriptedRelay, remote: Remote, killed: str
) -> None:
    folder = remote.folder("project-fault")
    command = "echo s >> started; sleep 2; echo x >> counter; echo ran"
    scripted_relay.script(
        [tool_calls(tool_call("run_command", {"command": command}, id="c1"))],
        [tool_calls(tool_call("read_file", {"path": "counter"}, id="c2"))],
        [text("Counted."), done()],
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **exec_env(remote)}
    process = subprocess.Popen(
        [sys.executable, "-m", "melgui", "exec", "--url", scripted_relay.base_url,
         "--folder", url(remote, folder), "--approve", "all", "--json", "count"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=environment, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: (folder / "started").exists(), what="the command to start there")
        if killed == "the ssh client":
            victims = wait_for(lambda: ssh_children(process.pid), what=killed)
        else:  # the connection's process ("sshd: USER@notty"), under its monitor ("[priv]")
            victims = wait_for(lambda: session_sshd(remote.server.process.pid), what=killed)
        assert len(victims) == 1
        os.kill(victims[0], signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "reconnected to" in stderr
    assert (folder / "started").read_text() == "s\n"
    assert (folder / "counter").read_text() == "x\n"  # it ran once
    events = json_lines(stdout)
    results = [e for e in events if e["kind"] == "tool_result"]
    assert [(e["id"], e["status"]) for e in results] == [("c1", "ok"), ("c2", "ok")]
    assert "ran" in results[0]["content"]
    legs = scripted_relay.legs_received
    assert tool_results(legs[1]) == {"c1": 1}
    assert tool_results(legs[2]) == {"c1": 1, "c2": 1}
    counted = next(m for m in legs[2].messages if m.get("tool_call_id") == "c2")
    assert counted["content"].count("x") == 1
