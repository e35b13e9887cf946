"""`melgui exec --host` sees and drives the sessions of a real running host: it lists them,
sends a prompt to one and prints its turn as exec prints, answers questions by
--approve or leaves them waiting for a person."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from tests.fakes import ScriptedRelay, done, text, tool_calls
from tests.fakes.exec import json_lines, melgui_exec
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.host.conftest import open_session, wait_for, write_b


async def exec_on(host: HostProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(melgui_exec, "--host", *args, env=host.env)


async def test_exec_lists_the_hosts_sessions(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    client = await host.client("window")
    try:
        first = await open_session(client, str(tmp_path), scripted_relay.base_url)
        second = await open_session(client, str(tmp_path), scripted_relay.base_url)
        listed = await exec_on(host, "--list")
        assert listed.returncode == 0, listed.stderr
        lines = listed.stdout.splitlines()
        assert sorted(line.split()[0] for line in lines) == sorted([first, second])
        assert all(" idle " in line and str(tmp_path) in line for line in lines)
        as_json = await exec_on(host, "--list", "--json")
        assert {s["id"] for s in json_lines(as_json.stdout)} == {first, second}
    finally:
        await client.aclose()


async def test_exec_drives_a_session_and_answers_by_approve(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("Writing "), text("b."), tool_calls(write_b())],
        [text("Written."), done()],
    )
    client = await host.client("window")
    try:
        session = await open_session(client, str(tmp_path), scripted_relay.base_url)
        ran = await exec_on(host, "--session", session[:8], "--approve", "all", "write b")
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == "Writing b.Written.\n"
        assert (tmp_path / "b.txt").read_text() == "x"
        described = await wait_for(client, session, lambda s: not s["busy"])
        assert described["approvals"] == []
        # The window's view of the session has the turn exec drove.
        snapshot = (await client.attach({session: None}))[session]["snapshot"]
        assert [m["role"] for m in snapshot["messages"]] == [
            "user",
            "assistant",
            "tool",
            "assistant",
        ]
    finally:
        await client.aclose()


async def test_without_approve_a_question_is_left_waiting_for_a_person(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([tool_calls(write_b())], [text("Written."), done()])
    client = await host.client("window")
    try:
        session = await open_session(client, str(tmp_path), scripted_relay.base_url)
        ran = await exec_on(host, "--session", session, "--json", "write b")
        assert ran.returncode == 3, ran.stderr
        assert "write_file waits for approval in the melgui host" in ran.stderr
        assert f"melgui {tmp_path}" in ran.stderr
        assert [e["kind"] for e in json_lines(ran.stdout)] == ["usage", "tool_call"]
        waiting = await wait_for(client, session, lambda s: bool(s["approvals"]))
        assert [q["id"] for q in waiting["approvals"]] == ["w1"]
        assert not (tmp_path / "b.txt").exists()
        answer = await client.call(
            "approval/answer", session=session, call="w1", decision="approve"
        )
        assert answer == {"answered": True}
        await wait_for(client, session, lambda s: not s["busy"])
        assert (tmp_path / "b.txt").read_text() == "x"
    finally:
        await client.aclose()


async def test_exec_says_plainly_when_no_host_runs_or_the_session_is_unknown(
    host: HostProcess, tmp_path: Path
) -> None:
    unknown = await exec_on(host, "--session", "nosuch", "hello")
    assert unknown.returncode == 2
    assert "no session whose id begins 'nosuch'" in unknown.stderr
    with runtime_dir() as empty:
        env = {**host.env, "XDG_RUNTIME_DIR": str(empty)}
        alone = await asyncio.to_thread(melgui_exec, "--host", "--list", env=env)
    assert alone.returncode == 1
    assert "no melgui host is running" in alone.stderr
    usage = await asyncio.to_thread(melgui_exec, "--host", "hello", env=host.env)
    assert usage.returncode == 2 and "--host needs --list, or --session ID" in usage.stderr
