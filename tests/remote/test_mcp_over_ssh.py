"""A remote folder's MCP server over the real sshd (a second local user): `melgui exec
--folder ssh://…` starts it in melgui's host on the remote user's side, where it runs as
that user in the folder there, and the model gets its call's result."""

from __future__ import annotations

import json

from melgui.tools.mcp.config import user_path
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines
from tests.remote.fixtures import Remote, exec_there


def test_exec_over_ssh_runs_the_mcp_server_as_the_remote_user(
    scripted_relay: ScriptedRelay, remote: Remote
) -> None:
    folder = remote.folder("project-mcp")
    entry = remote.mcp_server_in(folder, trusted=True)  # the remote user's copy
    user_path().parent.mkdir(parents=True, exist_ok=True)
    user_path().write_text(json.dumps({"mcpServers": {"there": entry}}), encoding="utf-8")
    scripted_relay.script(
        [tool_calls(tool_call("mcp__there__whereami", {}, id="m1"),
                    tool_call("mcp__there__tally", {"seconds": 0}, id="m2"))],
        [text("Done."), done()],
    )  # fmt: skip
    result = exec_there(scripted_relay.base_url, remote, folder, "look there")
    assert result.returncode == 0, result.stderr
    results = {e["id"]: e for e in json_lines(result.stdout) if e["kind"] == "tool_result"}
    assert results["m1"]["status"] == "ok" and results["m2"]["content"] == "counted"
    user = remote.server.user.pw_name
    assert f" user={user} cwd={folder} " in results["m1"]["content"]
    counter = folder / "counter"  # written there by the server, as the remote user
    assert counter.read_text() == "x\n"
    assert counter.stat().st_uid == remote.server.user.pw_uid
