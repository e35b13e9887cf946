"""A remote folder's ACP agent (melgui/remote/remote_agent.py): its program runs on the
remote host, in the folder there, through a local command that behaves like a
container's exec (tests/remote/local_target.py), against tests/fakes/acp_scripted_agent.py,
a real ACP agent on the official SDK:

- it runs in the folder there (its own process, a child of the host, not of this test);
- its file requests read and write the folder there, confined to it;
- its terminals run there, in the folder;
- the link killed mid-turn: the agent runs on there, the turn finishes after the
  reconnect, and the next turn works;
- an agent that crashes there says its stderr's last lines;
- its writes are checkpointed there (the host's Checkpointer, under the write's id), as
  a local agent's are here, and a restore there puts the file back.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import Settings
from melgui.core.protocol.tooling import CheckpointThere
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.host import AcpHost, AgentFailed
from melgui.remote.link import Link
from melgui.remote.remote_agent import AgentThere
from tests.fakes.acp_host import Events, scripted_agent
from tests.remote.fixtures import make_link
from tests.remote.local_target import box_host, host_pid

LIMIT = 60


def agent_there(
    tmp_path: Path,
    link: Link,
    folder: Path,
    name: str = "scripted",
    checkpoint: CheckpointThere | None = None,
) -> AcpHost:
    """An agent pane's host as a remote folder's window makes it: its own local folder
    (the window's stand-in), the agent run in `folder` there."""
    stand_in = tmp_path / "here"
    stand_in.mkdir(exist_ok=True)
    host = AcpHost(scripted_agent(name=name), str(stand_in), source="pane 2")

    async def the_link() -> Link:
        return link

    there = AgentThere(the_link, str(folder), checkpoint)
    host.run_there(
        str(folder),
        there.spawn,
        there.files(host.source),
        there.terminals(None, None),
    )
    return host


async def run(host: AcpHost, *steps: dict[str, Any]) -> Events:
    events = Events()
    unsubscribe = host.subscribe(events)
    try:
        assert await asyncio.wait_for(host.prompt(json.dumps(list(steps))), LIMIT) == "end_turn"
    finally:
        unsubscribe()
    return events


@pytest.fixture
def box(tmp_path: Path) -> Path:
    folder = tmp_path / "box"
    folder.mkdir()
    (folder / "notes.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "secret.txt").write_text("outside")
    return folder


async def test_the_agent_runs_there_and_its_files_and_terminals_are_there(
    tmp_path: Path, box: Path
) -> None:
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        host = agent_there(tmp_path, link, box)
        try:
            await asyncio.wait_for(host.start(), LIMIT)
            said = await run(
                host,
                {"read": str(box / "notes.txt"), "line": 2, "limit": 1},
                {"read": str(tmp_path / "secret.txt")},
                {"write": str(box / "sub" / "made.txt"), "content": "from the agent\n"},
                {"run": ["sh", "-c", "pwd; echo ppid=$PPID; cat sub/made.txt"]},
                {"run": ["pwd"], "cwd": "sub"},
                {"run": ["pwd"], "cwd": "../.."},
            )
            pid = host_pid(tmp_path / "run")
        finally:
            await host.aclose()
            await link.aclose()
    text = said.text()
    assert "read:two\n" in text
    assert "refused:" in text and "outside the project folder" in text and "outside\n" not in text
    assert "wrote" in text
    assert (box / "sub" / "made.txt").read_text() == "from the agent\n"
    # its terminals ran there, in the folder (and a sub-folder of it), the file it wrote
    assert f"exit 0:{box}\n" in text.replace("\r\n", "\n")
    assert "from the agent" in text.split("exit 0:")[1]
    assert f"{box / 'sub'}" in text
    assert "outside the folder" in text  # a cwd out of it refused
    assert pid is not None and str(os.getpid()) not in text.split("ppid=")[1][:12]


async def test_the_agent_runs_on_there_across_a_dropped_link(tmp_path: Path, box: Path) -> None:
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        host = agent_there(tmp_path, link, box)
        try:
            await asyncio.wait_for(host.start(), LIMIT)
            first = await run(host, {"say": "before"})
            assert "before" in first.text()
            # a turn whose command outlasts the link: the link's process dies meanwhile
            turn = asyncio.ensure_future(
                run(host, {"run": ["sh", "-c", "sleep 1.5; echo slept"]}, {"say": "after"})
            )
            await asyncio.sleep(0.5)
            pid = link.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            events = await asyncio.wait_for(turn, LIMIT)
            assert "slept" in events.text() and "after" in events.text()
            again = await run(host, {"say": "still here"})
            assert "still here" in again.text()
        finally:
            await host.aclose()
            await link.aclose()


async def test_an_agent_that_crashes_there_says_its_last_words(tmp_path: Path, box: Path) -> None:
    events = Events()
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        host = agent_there(tmp_path, link, box)
        host.subscribe(events)
        try:
            await asyncio.wait_for(host.start(), LIMIT)
            step = {"crash": 3, "stderr": "panic: out of cheese\nat main.rs:12"}
            stop = await asyncio.wait_for(host.prompt(json.dumps([step])), LIMIT)
            with pytest.raises(AgentFailed):
                await host.prompt("[]")
        finally:
            await host.aclose()
            await link.aclose()
    assert stop == "failed"
    failure = events.of("turn_failed")[0].message
    assert "exited (code 3)" in failure and "at main.rs:12" in failure


async def test_the_agents_writes_are_checkpointed_there_and_put_back_there(
    tmp_path: Path, box: Path
) -> None:
    settings = Settings()
    assert settings.checkpoints  # the default: a write takes a checkpoint
    here = tmp_path / "desk"
    here.mkdir()
    desk = Desk(str(here), settings, api_key=None, plans=lambda t, m: None)
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        host = agent_there(tmp_path, link, box, checkpoint=desk.checkpoint_there())
        try:
            await asyncio.wait_for(host.start(), LIMIT)
            said = await run(
                host,
                {"write": str(box / "notes.txt"), "content": "rewritten\n"},
                {"write": "made.txt", "content": "new\n"},
            )
            there = Checkpointer(str(box), data_folder=tmp_path / "data")
            try:
                records = there.records()
            finally:
                there.close()
            calls = [r.call_id for r in records]
            restored = await link.restore_checkpoints(str(box), calls)
            local = desk.checkpoints.records()
        finally:
            await host.aclose()
            await link.aclose()
            await desk.aclose()
    assert said.text().count("wrote") == 2
    assert [(r.tool, r.source, [f.path for f in r.files]) for r in records] == [
        ("write_file", "pane 2", ["notes.txt"]), ("write_file", "pane 2", ["made.txt"]),
    ]  # fmt: skip
    assert all(c.startswith("acp-write-") for c in calls) and len(set(calls)) == 2
    assert [r.summary for r in records] == ["notes.txt (2 lines)", "made.txt (2 lines)"]
    assert local == []  # none here: the files are there
    assert restored["files"] == ["made.txt", "notes.txt"]
    assert (box / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert not (box / "made.txt").exists()


async def test_with_checkpoints_off_the_agents_write_takes_none_there(
    tmp_path: Path, box: Path
) -> None:
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        host = agent_there(tmp_path, link, box, checkpoint=lambda name, arguments: None)
        try:
            await asyncio.wait_for(host.start(), LIMIT)
            await run(host, {"write": "made.txt", "content": "new\n"})
            there = Checkpointer(str(box), data_folder=tmp_path / "data")
            try:
                records = there.records()
            finally:
                there.close()
        finally:
            await host.aclose()
            await link.aclose()
    assert (box / "made.txt").read_text() == "new\n" and records == []
