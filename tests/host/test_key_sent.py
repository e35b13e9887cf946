"""A session opened with the view's key (`session/open`'s `api_key`: the loop runs in the
host, on another machine): the host reaches the model with that key, never with its own,
holds it in memory only, and after a restart (no key on any disk) says so, refuses to
fall back to its own key, and goes on once a view sends the key again (`session/key`)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path

from melgui.core.protocol.content import FilePart, ImagePart
from melgui.host.client import HostClient
from melgui.host.remote_session import RemoteSession
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import KEY as HOSTS_OWN
from tests.fakes.host_process import HostProcess
from tests.host.conftest import wait_for

KEY = "sk-from-the-view-0123456789"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def files_holding(secret: str, *tops: Path) -> list[str]:
    return [
        str(path)
        for top in tops
        for path in top.rglob("*")
        if path.is_file() and secret.encode() in path.read_bytes()
    ]


async def turn(client: HostClient, session: str, prompt: str) -> None:
    before = (await wait_for(client, session, lambda s: True))["seq"]
    await client.call("turn/prompt", session=session, text=prompt)
    await wait_for(client, session, lambda s: not s["busy"] and s["seq"] > before + 1)


async def test_the_key_sent_is_used_kept_in_memory_and_sent_again_after_a_restart(
    host: HostProcess, tmp_path: Path
) -> None:
    relay = ScriptedRelay(api_key=KEY)
    relay.script([text("One."), done()], [text("Three."), done()])
    data = Path(os.environ["MELGUI_DATA_DIR"])
    with relay:
        settings = {"connection": "relay", "relay_url": relay.base_url}
        client = await host.client()
        opened = await client.call("session/open", folder=str(tmp_path), model="m1",
                                   settings=settings, api_key=KEY)  # fmt: skip
        session = opened["id"]
        await turn(client, session, "one")
        await client.aclose()
        host.kill()  # the key was in its memory only
        assert files_holding(KEY, data, host.runtime, tmp_path) == []
        host.start()
        client = await host.client()
        try:
            answer = await client.attach({session: None})
            tail = answer[session]["snapshot"]["tail"]
            assert [r["type"] for r in tail].count("key_needed") == 1
            notes = answer[session]["snapshot"]["thread"]["entries"]
            said = [e["text"] for e in notes if e["kind"] == "note"]
            assert "memory of the melgui host that stopped" in said[-1]
            await turn(client, session, "two")  # no key: refused, never the host's own
            own = await client.call("session/open", folder=str(tmp_path), model="m1",
                                    settings=settings)  # fmt: skip
            refused = await asyncio.gather(
                client.call("session/key", session=own["id"], api_key=KEY),
                return_exceptions=True,
            )
            await client.call("session/key", session=session, api_key=KEY)
            await turn(client, session, "three")
        finally:
            await client.aclose()
    # Turn two, with no key after the restart: none sent, not the host's own either.
    auths = [r.authorization for r in relay.requests]
    assert auths == [f"Bearer {KEY}", None, f"Bearer {KEY}"]
    assert HOSTS_OWN in host.env.values()  # the host had a key of its own all along
    assert "own key" in str(refused[0])
    assert files_holding(KEY, data, host.runtime, tmp_path) == []


async def test_a_prompt_s_attachments_reach_the_model_through_the_host(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """A worker pane's images and files go with its prompt (`turn/prompt`'s `parts`),
    not dropped on the way to a loop that runs in the host."""
    scripted_relay.script([text("A chart."), done()])
    image = ImagePart("image/png", PNG, "shot.png")
    client = await host.client()
    try:
        settings = {"connection": "relay", "relay_url": scripted_relay.base_url}
        session = RemoteSession.start(client, folder=str(tmp_path), settings=settings)
        session.submit("What is on this?", (image, FilePart("src/a.py", "print(1)\n")))
        await asyncio.wait_for(session.wait_idle(), 60)
        bad = await asyncio.gather(
            client.call("turn/prompt", session=session.session_id, text="x",
                        parts=[{"type": "image", "mime": "image/png", "data": 5}]),
            return_exceptions=True,
        )  # fmt: skip
        await session.aclose()
    finally:
        await client.aclose()
    [asked] = scripted_relay.legs_received
    sent = json.dumps(asked.last_message)
    assert base64.b64encode(PNG).decode() in sent and "print(1)" in sent
    [user] = [m for m in session.conversation.messages if m.role == "user"]
    assert user.parts == (image, FilePart("src/a.py", "print(1)\n"))
    assert "a part cannot be read" in str(bad[0])
