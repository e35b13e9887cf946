"""The loop running there too (a per-folder choice): a session opened on the remote's
host with the model connection and the key in `session/open`, through a local command
that behaves like a container's exec (tests/remote/local_target.py), against a scripted
relay on loopback that refuses any other key:

- the loop reaches the model from the remote with the key sent, not its own key there;
- the key is in no file there (the host's journal, the history, settings, logs) and in
  nothing the host sends back, even when a tool reads it from a file here;
- the link dropped mid-turn, and kept down: the turn goes on there to its end; the view
  reconnects and hears the whole turn, no gap, no duplicate, every call one result;
- a second view that attaches afterwards gets the whole turn too.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent, TurnFailed
from melgui.core.thread.entries import AssistantEntry, NoteEntry
from melgui.host.client import HostClient
from melgui.host.place import HostPlace
from melgui.host.remote_session import RemoteSession
from melgui.remote.link import Link
from melgui.remote.link_client import LinkClient
from melgui.remote.target import CommandTarget, command_target
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.remote.fixtures import until
from tests.remote.local_target import BRIDGE, ROOT, box_host, host_pid

KEY = "sk-sent-once-0123456789abcdef"
LIMIT = 60


class Remote:
    """The "remote machine": a home, a runtime folder and a folder of its own, reached
    through a command that fails while `hold` exists (the laptop asleep)."""

    def __init__(self, base: Path) -> None:
        self.home = base / "home"
        self.runtime = base / "run"
        self.folder = base / "project"
        self.hold = base / "hold"
        for place in (self.home, self.folder):
            place.mkdir()

    def target(self) -> CommandTarget:
        gate = f'[ -e {self.hold} ] && exit 1; exec "$@"'
        env = (
            f"env -u OPENAI_API_KEY MELIAI_API_KEY=its-own-key-there HOME={self.home} "
            f"XDG_RUNTIME_DIR={self.runtime} PYTHONPATH={ROOT} "
            f"MELGUI_CONFIG_DIR={self.home / '.config/melgui'} "
            f"MELGUI_DATA_DIR={self.home / '.local/share/melgui'}"
        )
        return command_target(f"sh -c '{gate}' sh {env}", str(self.folder))

    def link(self) -> Link:
        return Link(self.target(), BRIDGE, heartbeat=0.2, dead_after=2.0,
                    backoff=(0.1, 0.3), give_up=LIMIT)  # fmt: skip

    async def host(self) -> HostClient:
        """The host there, reached directly (a test's look, not a view's)."""
        return await HostClient.connect(HostPlace(self.runtime / "melgui"), client="test")

    def files_holding(self, secret: str) -> list[str]:
        found = []
        for top in (self.home, self.runtime, self.folder):
            for path in top.rglob("*"):
                if path.is_file() and secret.encode() in path.read_bytes():
                    found.append(str(path))
        return found


def approve_all(events: list[LoopEvent]) -> Callable[[LoopEvent], None]:
    def heard(event: LoopEvent) -> None:
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            event.request.approve()

    return heard


def failed_into(said: list[str]) -> Callable[[LoopEvent], None]:
    def heard(event: LoopEvent) -> None:
        if isinstance(event, TurnFailed):
            said.append(event.message)

    return heard


def said(session: RemoteSession) -> str:
    return "".join(e.text for e in session.thread.entries if isinstance(e, AssistantEntry))


async def test_the_turn_goes_on_there_while_the_link_is_down_and_the_key_stays_in_memory(
    tmp_path: Path,
) -> None:
    remote = Remote(tmp_path)
    (remote.folder / "settings.env").write_text(f"KEY={KEY}\n")  # a tool reads it
    relay = ScriptedRelay(api_key=KEY)  # refuses any other key (and none)
    sleepy = "echo s >> started; sleep 2; echo x >> counter; echo ran"
    relay.script(
        [text("Reading. "), tool_calls(tool_call("read_file", {"path": "settings.env"}, id="r"))],
        [tool_calls(tool_call("run_command", {"command": sleepy}, id="c"))],
        [text(f"Done; it said {KEY}."), done()],
    )
    with relay, box_host(remote.runtime):
        settings = {"connection": "relay", "relay_url": relay.base_url}
        link = remote.link()
        await link.open()
        client = LinkClient(link)
        events: list[LoopEvent] = []
        session = RemoteSession.start(client, folder=str(remote.folder), settings=settings,
                                      api_key=KEY, source="there")  # fmt: skip
        session.subscribe(approve_all(events))
        try:
            session.submit("read the settings, then run it")
            await until(lambda: (remote.folder / "started").exists(), "the command started")
            remote.hold.touch()  # the laptop sleeps: no connection until it wakes
            first = link.pid
            assert first is not None
            os.kill(first, signal.SIGKILL)
            direct = await remote.host()
            try:  # the turn ends there with nobody attached
                while (await direct.call("session/list"))[0]["busy"]:
                    await asyncio.sleep(0.05)
            finally:
                await direct.aclose()
            assert link.state.startswith("reconnecting")
            assert session.busy and "Done" not in said(session)
            remote.hold.unlink()
            await asyncio.wait_for(session.wait_idle(), LIMIT)
            assert link.pid != first and client.reattached == 1
        finally:
            session.keep_running = True  # the view goes; the session stays there
            await session.aclose()
            await link.aclose()
        # A second view, attached afterwards, gets the whole turn too.
        later_link = remote.link()
        await later_link.open()
        later = LinkClient(later_link)
        try:
            listed = await later.call("session/list")
            [again] = await RemoteSession.reattach(later, listed)
        finally:
            await later_link.aclose()
    assert [r.authorization for r in relay.requests] == [f"Bearer {KEY}"] * 3
    assert (remote.folder / "counter").read_text() == "x\n"  # it ran once
    for view in (session, again):
        assert said(view) == "Reading. Done; it said «redacted»."
        [note] = [e for e in view.thread.entries if isinstance(e, NoteEntry)]
        assert "with the model key your melgui sent" in note.text and note.level == "warning"
        assert [(c.call_id, c.phase) for c in view.thread.calls()] == [("r", "ok"), ("c", "ok")]
        assert [m.role for m in view.conversation.messages] == [
            "user", "assistant", "tool", "assistant", "tool", "assistant",
        ]  # fmt: skip
        tools = [m for m in view.conversation.messages if m.role == "tool"]
        assert "«redacted»" in tools[0].content and KEY not in tools[0].content
        assert "ran" in tools[1].content
    assert client.gaps == [] and later.gaps == []
    assert sum(isinstance(e, ApprovalNeeded) for e in events) == 1  # run_command, once
    assert remote.files_holding(KEY) == [str(remote.folder / "settings.env")]


async def test_a_host_there_that_restarted_gets_the_key_again_from_the_view(
    tmp_path: Path,
) -> None:
    """The host there killed: the link reaches a new one, which reopens the session from
    its journal without the key (on no disk there); the view that sent it sends it
    again, and the next turn reaches the model with it."""
    remote = Remote(tmp_path)
    relay = ScriptedRelay(api_key=KEY)
    relay.script([text("One."), done()], [text("Two."), done()])
    with relay, box_host(remote.runtime):
        settings = {"connection": "relay", "relay_url": relay.base_url}
        link = remote.link()
        await link.open()
        client = LinkClient(link)
        session = RemoteSession.start(client, folder=str(remote.folder), settings=settings,
                                      api_key=KEY)  # fmt: skip
        try:
            session.submit("one")
            await asyncio.wait_for(session.wait_idle(), LIMIT)
            first = host_pid(remote.runtime)
            assert first is not None
            os.kill(first, signal.SIGKILL)
            await until(lambda: client.reattached == 1, "the view reattached to a new host")
            assert host_pid(remote.runtime) != first
            session.submit("two")
            await asyncio.wait_for(session.wait_idle(), LIMIT)
        finally:
            session.keep_running = True
            await session.aclose()
            await link.aclose()
    assert [r.authorization for r in relay.requests] == [f"Bearer {KEY}"] * 2
    assert said(session) == "One.Two."
    notes = [e.text for e in session.thread.entries if isinstance(e, NoteEntry)]
    assert "host that stopped" in notes[-1]  # the new host's copy: the key was lost
    assert remote.files_holding(KEY) == []


async def test_a_session_there_whose_link_is_lost_or_forgotten_says_so(tmp_path: Path) -> None:
    """The loop there, and the view cut off: a link lost for good (the remote not
    reachable again) ends the turn here as failed, saying why, not running on in the
    pane; so does a host there that lost its journal and no longer has the session."""
    remote = Remote(tmp_path)
    relay = ScriptedRelay(api_key=KEY)
    relay.script([text("One."), done()], [text("One."), done()])
    failures: dict[str, list[str]] = {"lost": [], "forgotten": []}
    with relay, box_host(remote.runtime):
        settings = {"connection": "relay", "relay_url": relay.base_url}
        for case in ("forgotten", "lost"):
            link = Link(remote.target(), BRIDGE, heartbeat=0.2, dead_after=2.0,
                        backoff=(0.1,), give_up=1.0 if case == "lost" else LIMIT)  # fmt: skip
            await link.open()
            session = RemoteSession.start(LinkClient(link), folder=str(remote.folder),
                                          settings=settings, api_key=KEY)  # fmt: skip
            heard = failures[case]
            session.subscribe(failed_into(heard))
            try:
                session.submit("one")
                await asyncio.wait_for(session.wait_idle(), LIMIT)
                pid = host_pid(remote.runtime)
                assert pid is not None
                if case == "lost":
                    remote.hold.touch()
                    os.kill(link.pid or 0, signal.SIGKILL)
                else:  # the host there and its journal gone: a new host has no sessions
                    os.kill(pid, signal.SIGKILL)
                    shutil.rmtree(remote.home / ".local/share/melgui")
                    os.kill(link.pid or 0, signal.SIGKILL)
                await until(lambda: bool(heard), f"the {case} session said so")  # noqa: B023
            finally:
                session.keep_running = True
                await session.aclose()
                await link.aclose()
    assert failures["lost"] == ["the connection to " + remote.target().label + " was lost"]
    [forgotten] = failures["forgotten"]
    assert "no longer has this session" in forgotten
