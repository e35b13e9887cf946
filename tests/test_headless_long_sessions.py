"""`melgui exec` over many runs of one conversation: `--json` reports usage per leg and
a `compacted` event; a SIGKILL while the summary is being written leaves a history that
reopens valid, and the next run compacts it with the originals kept as a branch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.views.compacted import SUMMARY_HEAD
from melgui.core.store.store import open_store
from tests.fakes import ScriptedOpenAI, hold
from tests.fakes.long_session import (
    SUMMARY,
    LongModel,
    is_summary_request,
    write_notes,
)
from tests.fakes.scenario import done, text

ROOT = Path(__file__).resolve().parents[1]


def exec_command(server: ScriptedOpenAI, folder: Path, prompt: str) -> list[str]:
    return [
        sys.executable, "-m", "melgui", "exec", "--transport", "openai",
        "--url", server.base_url, "--model", "m", "--folder", str(folder),
        "--approve", "all", "--continue", "--json", prompt,
    ]  # fmt: skip


def environment(data: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "MELGUI_DATA_DIR": str(data)}


def run_exec(server: ScriptedOpenAI, folder: Path, data: Path, prompt: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        exec_command(server, folder, prompt),
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(data),
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def request_for(number: int) -> str:
    return f"Please read notes{2 * number}.txt and notes{2 * number + 1}.txt"


def stored(data: Path) -> tuple[str, list[dict[str, Any]], int]:
    store = open_store(data)
    try:
        (conversation,) = store.conversations(store_folder(store))
        messages = [m.message.to_json() for m in store.messages(conversation.id)]
        return conversation.id, messages, len(store.branches(conversation.id))
    finally:
        store.close()


def store_folder(store: Any) -> str:
    rows = store._conn.execute("SELECT DISTINCT folder FROM conversations").fetchall()
    (folder,) = rows
    return str(folder[0])


def test_usage_per_leg_compaction_and_a_kill_while_summarising(tmp_path: Path) -> None:
    folder, data = tmp_path / "project", tmp_path / "data"
    folder.mkdir()
    write_notes(folder, 16, 1500)
    gate = threading.Event()
    with ScriptedOpenAI(models=[{"id": "m", "context_length": 9000}]) as server:
        model = LongModel()
        server.on(is_summary_request, [hold(gate, 60), text(SUMMARY), done()], times=1)
        server.on(lambda request: True, model.leg)
        for number in range(4):
            events = run_exec(server, folder, data, request_for(number))
            usage = [e for e in events if e["kind"] == "usage"]
            assert [e["leg"] for e in usage] == [1, 2]
            assert all(e["usage"]["prompt_tokens"] > 0 for e in usage)
            assert not [e for e in events if e["kind"] == "compacted"]
        _, before, branches = stored(data)
        assert branches == 0 and len(before) == 4 * 5

        # The fifth run must compact first: kill it while the model writes the summary.
        proc = subprocess.Popen(
            exec_command(server, folder, request_for(4)),
            env=environment(data),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 30
            while not any(is_summary_request(r) for r in server.legs_received):
                assert time.monotonic() < deadline, "no summary request"
                time.sleep(0.05)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=10)
            gate.set()
        _, after_kill, branches = stored(data)
        assert branches == 0
        # Nothing lost, nothing half-replaced: the killed run's request and its first
        # leg's answered calls follow the earlier history, every call paired.
        assert after_kill[:20] == before
        assert after_kill[20] == {"role": "user", "content": request_for(4)}
        assert not Conversation([_message(m) for m in after_kill]).repair_pairing()

        events = run_exec(server, folder, data, "Go on and " + request_for(5))
        compacted = [e for e in events if e["kind"] == "compacted"]
        assert len(compacted) == 1 and "summarised" in compacted[0]["note"]
        summaries = [r for r in server.legs_received if is_summary_request(r)]
        assert len(summaries) == 2  # the one the kill cut, and the one that finished
        last = server.legs_received[-1].messages
        assert [m["content"] for m in last if m["role"] == "user"][-1] == "Go on and " + (
            request_for(5)
        )
    _, now, branches = stored(data)
    assert branches == 1
    assert now[0]["role"] == "user" and now[0]["content"].startswith(SUMMARY_HEAD)
    assert now[-1]["role"] == "assistant"
    assert not Conversation([*map(_message, now)]).repair_pairing()


def _message(data: dict[str, Any]) -> Any:
    from melgui.core.protocol.messages import Message

    return Message.from_json(data)
