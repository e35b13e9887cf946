"""A remote folder's own hooks over a real sshd on 127.0.0.1 (`melgui exec --folder
ssh://…`): once the folder is trusted by its URL, its hooks file there runs on the
remote machine, in the folder, as the remote user, and judges the calls; untrusted, it
does not run; the ssh client killed while a hook runs there: the hook ran once, its
answer arrived after the reconnect, and the model saw one result for the call; a point
no hook there matches is not sent over ssh."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from melgui.core.config.trust import FolderTrust
from melgui.core.hooks.hooks import HookFiles, Hooks
from melgui.core.protocol.events import ToolCall
from melgui.remote.remote_tools import RemoteTools
from melgui.remote.target import parse_folder
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines
from tests.remote.fixtures import (
    Remote,
    exec_there,
    kill_mid_call,
    start_exec,
    tool_results,
    url,
)
from tests.remote.test_hooks_there import CountingLink


def hooks_file(folder: Path, remote: Remote, groups: dict[str, list[dict[str, object]]]) -> None:
    (folder / ".melgui").mkdir()
    (folder / ".melgui" / "hooks.json").write_text(json.dumps({"hooks": groups}))
    remote.server.give(folder)


def command(line: str, matcher: str = "") -> dict[str, object]:
    return {"matcher": matcher, "hooks": [{"type": "command", "command": line}]}


GUARD = {
    "PreToolUse": [
        command('echo "$(id -un) $(pwd) $CLAUDE_PROJECT_DIR" >> who'),
        command("echo 'writes are reviewed first' >&2; exit 2", "Write"),
    ]
}


def test_a_trusted_remote_folders_hooks_run_there_as_the_remote_user(
    scripted_relay: ScriptedRelay, remote: Remote
) -> None:
    folder = remote.folder("project-hooks")
    hooks_file(folder, remote, GUARD)
    FolderTrust().trust(url(remote, folder))  # the trust bar's answer, by the folder's URL
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "w.txt", "content": "x"}, id="w1"),
                    tool_call("run_command", {"command": "echo hi"}, id="c1"))],
        [text("Done."), done()],
    )  # fmt: skip
    result = exec_there(scripted_relay.base_url, remote, folder, "write and run")
    assert result.returncode == 0, result.stderr
    results = [e for e in json_lines(result.stdout) if e["kind"] == "tool_result"]
    assert [(e["id"], e["status"]) for e in results] == [("w1", "denied"), ("c1", "ok")]
    assert "writes are reviewed first" in results[0]["content"]
    assert not (folder / "w.txt").exists()
    user = remote.server.user.pw_name
    assert (folder / "who").read_text() == f"{user} {folder} {folder}\n" * 2
    assert (folder / "who").stat().st_uid == remote.server.user.pw_uid
    sent = tool_results(scripted_relay.legs_received[1])
    assert sent == {"w1": 1, "c1": 1}


def test_an_untrusted_remote_folders_hooks_do_not_run(
    scripted_relay: ScriptedRelay, remote: Remote
) -> None:
    folder = remote.folder("project-hooks-untrusted")
    hooks_file(folder, remote, GUARD)
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "w.txt", "content": "x"}, id="w1"))],
        [text("Done."), done()],
    )
    result = exec_there(scripted_relay.base_url, remote, folder, "write")
    assert result.returncode == 0, result.stderr
    results = [e for e in json_lines(result.stdout) if e["kind"] == "tool_result"]
    assert [(e["id"], e["status"]) for e in results] == [("w1", "ok")]
    assert (folder / "w.txt").read_text() == "x" and not (folder / "who").exists()


def test_the_ssh_client_killed_while_a_hook_runs_there_the_call_gets_one_answer(
    scripted_relay: ScriptedRelay, remote: Remote
) -> None:
    folder = remote.folder("project-hooks-fault")
    slow = "echo s >> started; sleep 2; echo x >> counter"
    hooks_file(folder, remote, {"PreToolUse": [command(slow + "; echo 'held back' >&2; exit 2")]})
    FolderTrust().trust(url(remote, folder))
    scripted_relay.script(
        [tool_calls(tool_call("run_command", {"command": "touch ran"}, id="c1"))],
        [text("Stopped."), done()],
    )
    process = start_exec(scripted_relay.base_url, remote, folder, "touch it")
    stdout, stderr = kill_mid_call(process, folder / "started")
    assert process.returncode == 0, stderr
    assert "reconnected to" in stderr
    assert (folder / "counter").read_text() == "x\n"  # the hook ran once there
    results = [e for e in json_lines(stdout) if e["kind"] == "tool_result"]
    assert [(e["id"], e["status"]) for e in results] == [("c1", "denied")]
    assert "held back" in results[0]["content"]  # its answer, after the reconnect
    assert not (folder / "ran").exists()
    assert tool_results(scripted_relay.legs_received[1]) == {"c1": 1}


async def test_over_ssh_a_point_no_hook_there_matches_is_not_sent(remote: Remote) -> None:
    """Hooks only for PreToolUse on Bash there: a read's points and a command's
    PostToolUse cost no round trip over ssh; the command's PreToolUse runs there."""
    folder = remote.folder("project-hooks-points")
    hooks_file(folder, remote, {"PreToolUse": [command("echo judged >> judged", "Bash")]})
    target = parse_folder(url(remote, folder))
    link = CountingLink(target, [*remote.host_argv, "--bridge"], heartbeat=0.5)
    await link.open()
    try:
        tools = RemoteTools(link, str(folder), options={"diagnostics": True})
        hooks = Hooks(HookFiles(str(remote.server.workdir), project_files=False),
                      cwd=str(folder), there=tools.hooks_there())  # fmt: skip
        read = ToolCall("r1", "read_file", json.dumps({"path": "judged"}))
        ran = ToolCall("c1", "run_command", json.dumps({"command": "true"}))
        for call, arguments in ((read, {"path": "judged"}), (ran, {"command": "true"})):
            await asyncio.wait_for(hooks.before_call(call, arguments), 60)
            await asyncio.wait_for(hooks.after_call(call, arguments, "ok", ""), 60)
    finally:
        await link.aclose()
    assert link.points == ["PreToolUse"]  # the command's, and nothing else
    assert (folder / "judged").read_text() == "judged\n"
