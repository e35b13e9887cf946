"""A view's approval settings for a session of the host (protocol 13: `settings/update`'s
`approval`), against the real host process: the host's loop asks exactly when the view's
would, by the view's per-tool modes and rules rather than its own settings file's; a
change is taken at once; a new host that reopens the session after a kill -9 keeps them."""

from __future__ import annotations

from pathlib import Path

from melgui.host.client import HostClient
from melgui.host.wire import RpcError
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess
from tests.host.conftest import open_session, wait_for


def write(name: str, call_id: str) -> object:
    return tool_calls(tool_call("write_file", {"path": name, "content": "x"}, id=call_id))


async def turn(client: HostClient, session: str, prompt: str) -> dict[str, object]:
    """Prompt, and the session once it is idle or asks."""
    await client.call("turn/prompt", session=session, text=prompt)
    return await wait_for(client, session, lambda s: not s["busy"] or s["approvals"])


async def test_the_views_modes_and_rules_decide_what_the_host_asks(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("a"), write("a.txt", "w1")], [text("Wrote a."), done()],
        [text("b"), write("b.txt", "w2")], [text("Not written."), done()],
        [text("c"), tool_calls(tool_call("run_command", {"command": "echo hi"}, id="r1"))],
        [text("Ran it."), done()],
        [text("d"), write("d.txt", "w3")], [text("Wrote d."), done()],
    )  # fmt: skip
    client = await host.client("window")
    session = await open_session(client, str(tmp_path), scripted_relay.base_url)
    await client.attach({session: None})
    # The view's tool settings: write_file without asking (the host's file says ask).
    auto = {"modes": {"write_file": "auto"}, "rules": [], "project_rules": []}
    await client.call("settings/update", session=session, approval=auto)
    listed = await turn(client, session, "write a")
    assert listed["approvals"] == [] and (tmp_path / "a.txt").exists()

    # Changed: write_file asks again; a rule of the project's allows echo.
    rules = {"modes": {}, "rules": [], "project_rules": ["allow run_command: echo"]}
    await client.call("settings/update", session=session, approval=rules)
    listed = await turn(client, session, "write b")
    assert [q["name"] for q in listed["approvals"]] == ["write_file"]  # type: ignore[index]
    await client.call("approval/answer", session=session, call="w2", decision="deny")
    await wait_for(client, session, lambda s: not s["busy"])
    assert not (tmp_path / "b.txt").exists()
    listed = await turn(client, session, "echo")
    assert listed["approvals"] == []

    # Refused in words: a mode that is none.
    try:
        await client.call("settings/update", session=session, approval={"modes": {"x": "yes"}})
    except RpcError as exc:
        assert "modes map a tool to one of" in str(exc)
    else:
        raise AssertionError("a mode that is none was taken")

    # kill -9: the new host reopens the session with the view's settings from the journal.
    await client.call("settings/update", session=session, approval=auto)
    host.kill()
    await client.wait_gone()
    await client.aclose()
    host.start()
    again = await host.client("window after the crash")
    try:
        await again.attach({session: None})
        listed = await turn(again, session, "write d")
        assert listed["approvals"] == [] and (tmp_path / "d.txt").exists()
    finally:
        await again.aclose()
