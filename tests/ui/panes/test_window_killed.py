"""kill -9 of the real window (a view of the melgui host it started) mid-turn: the turn
goes on in the host, and the next view gets the whole turn, what streamed while no
window was attached included, numbered with no gap and no duplicate."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from melgui.core.config.settings import Settings, save_settings
from melgui.host.client import HostClient
from melgui.host.place import HostPlace
from melgui.host.records import streamed_text
from tests.fakes import ScriptedRelay, done, hold, text
from tests.fakes.host_process import ROOT, host_env, runtime_dir


def test_a_window_killed_mid_turn_leaves_the_turn_to_the_host(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [text("Seen by the window. "), hold(gate), text("Streamed with no window."), done()]
    )
    project = tmp_path / "project"
    project.mkdir()
    config = Path(os.environ["MELGUI_CONFIG_DIR"])
    save_settings(
        Settings(connection="relay", relay_url=scripted_relay.base_url, model="m1"),
        config / "settings.json",
    )
    with runtime_dir() as runtime:
        env = {**host_env(runtime), "QT_QPA_PLATFORM": "offscreen"}
        window = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.host_window_driver", str(project), "work"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        place = HostPlace(runtime / "melgui")
        try:
            assert window.stdout is not None
            lines: list[dict[str, Any]] = []
            while not any(line.get("text") for line in lines):
                line = window.stdout.readline()
                assert line, "the window ended before the worker streamed"
                lines.append(json.loads(line))
            session = next(line["session"] for line in lines if "session" in line)
            assert "".join(line.get("text", "") for line in lines) == "Seen by the window. "
            last = max(line["seq"] for line in lines if "seq" in line)
            window.send_signal(signal.SIGKILL)
            window.wait(timeout=30)
            window.stdout.close()
            gate.set()
            missed, snapshot = asyncio.run(_next_view(place, session, last))
        finally:
            if window.poll() is None:
                window.kill()
            _stop_host(place)
    seqs = [r["seq"] for r in missed]
    assert seqs == list(range(last + 1, last + 1 + len(seqs)))
    assert streamed_text(missed) == "Streamed with no window."
    said = [m["content"] for m in snapshot["messages"] if m["role"] == "assistant"]
    assert said == ["Seen by the window. Streamed with no window."]


async def _next_view(
    place: HostPlace, session: str, last: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    client = await HostClient.connect(place, client="next view")
    try:
        while any(s["busy"] for s in await client.call("session/list")):
            await asyncio.sleep(0.05)
        missed = (await client.attach({session: last}))[session]["changes"]
        snapshot = (await client.attach({session: None}))[session]["snapshot"]
        assert client.gaps == []
        return missed, snapshot
    finally:
        await client.aclose()


def _stop_host(place: HostPlace) -> None:
    """The window started the host detached: end it by its pid."""
    pid = place.read_info().get("pid")
    if isinstance(pid, int):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        for _ in range(600):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            threading.Event().wait(0.05)
        os.kill(pid, signal.SIGKILL)
