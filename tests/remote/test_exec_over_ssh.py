"""`melgui exec --folder ssh://HOST/abs/path` against a real sshd on 127.0.0.1: the loop
and the key stay here, the tools run in melgui's host on the remote user's side; and the
`ssh` client killed mid-call: the link reconnects, the call's one result arrives, it ran
once there, and the model saw exactly one result per call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines
from tests.remote.fixtures import (
    KEY,
    Remote,
    assert_one_run_one_result,
    exec_there,
    kill_mid_call,
    script_count,
    session_sshd,
    start_exec,
    tool_results,
)


def test_exec_over_ssh_reads_and_writes_on_the_remote(
    scripted_relay: ScriptedRelay, remote: Remote
) -> None:
    folder = remote.folder("project-rw", {"a.txt": "written on the remote\n"})
    scripted_relay.script(
        [tool_calls(tool_call("read_file", {"path": "a.txt"}, id="r1"),
                    tool_call("write_file", {"path": "out.txt", "content": "made"}, id="w1"))],
        [text("Done."), done()],
    )  # fmt: skip
    result = exec_there(scripted_relay.base_url, remote, folder, "read a and write out")
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


@pytest.mark.parametrize("killed", ["the ssh client", "the session's sshd child"])
def test_a_link_killed_mid_call_the_call_runs_once_and_its_result_arrives_once(
    scripted_relay: ScriptedRelay, remote: Remote, killed: str
) -> None:
    folder = remote.folder("project-fault")
    script_count(scripted_relay, "echo s >> started; sleep 2; echo x >> counter; echo ran")
    process = start_exec(scripted_relay.base_url, remote, folder, "count")
    sshd = lambda: session_sshd(remote.server.process.pid)  # noqa: E731
    victims = None if killed == "the ssh client" else sshd
    stdout, stderr = kill_mid_call(process, folder / "started", victims, killed)
    assert process.returncode == 0, stderr
    assert "reconnected to" in stderr
    assert_one_run_one_result(scripted_relay, folder, stdout)
