"""Export: Markdown to read (calls folded with <details>), JSON that imports back whole."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from melgui.core.protocol.events import ToolCall, WireEntry
from melgui.core.protocol.messages import Message
from melgui.core.store import Store, open_store
from melgui.core.store.export import (
    ConversationImportError,
    export_json,
    export_json_text,
    export_markdown,
    import_json,
)

FENCED_RESULT = "line one\n```python\nprint('inner fence')\n```\n"


def every_kind(store: Store, folder: Path) -> str:
    """A conversation with every kind of thing the journal records."""
    cid = store.create_conversation(str(folder), model="m-1", role="worker")
    calls = (
        ToolCall("ok1", "read_file", '{"path": "notes.txt"}'),
        ToolCall("den1", "write_file", '{"path": "a.txt", "content": "<b>"}'),
        ToolCall("err1", "run_command", '{"command": "false"}'),
        ToolCall("plan1", "write_plan", '{"title": "Roadmap", "markdown": "1. one\\n2. two"}'),
        ToolCall("can1", "run_command", '{"command": "sleep 9"}'),
        ToolCall("int1", "grep", "not json {"),
    )
    results = [
        Message.tool_result("ok1", FENCED_RESULT),
        Message.tool_result("den1", "The user denied this write_file call. Reason: no", "denied"),
        Message.tool_result("err1", "exit_code=1\n", "error"),
        Message.tool_result("plan1", "Plan saved."),
        Message.tool_result("can1", "The user stopped this call.", "cancelled"),
        Message.tool_result("int1", "The call was interrupted.", "interrupted"),
    ]
    messages = [
        Message.system("You are a careful worker."),
        Message.user("Survey the project & plan <next> steps"),
        Message.assistant("I'll look around.", calls),
        *results,
        Message.assistant("Here is what I found."),
        Message.user("And then?"),
    ]
    for seq, message in enumerate(messages):
        store.put_message(cid, seq, message)
    store.put_message(cid, len(messages), Message.assistant("Then we ship it to"), partial=True)
    decisions = {"ok1": "auto", "den1": "denied", "err1": "approved", "plan1": "auto",
                 "can1": "approved:session", "int1": "auto"}  # fmt: skip
    for call, result in zip(calls, results, strict=True):
        store.calls.requested(store_id := cid, call)
        store.calls.decided(store_id, call.id, decisions[call.id])
        store.calls.finished(cid, call.id, result.status or "ok", result.content, 0.5)
    store.add_plan(cid, "Roadmap", "1. one\n2. two", call_id="plan1")
    store.add_plan(cid, "Loose plan", "- later")
    store.add_note(cid, "repair", "History repaired: added an 'interrupted' result for 1 call(s).")
    store.add_note(cid, "error", "The relay said: quota exceeded")
    store.wire.add(cid, [(1, WireEntry("request", '{"model": "m-1"}', 1.5)),
                         (1, WireEntry("event", "delta", 1.6))])  # fmt: skip
    return cid


def test_json_round_trip_gives_the_same_conversation(store: Store, tmp_path: Path) -> None:
    cid = every_kind(store, tmp_path)
    exported = export_json(store, cid)
    with open_store(tmp_path / "other") as other:
        assert import_json(other, export_json_text(store, cid)) == cid
        assert export_json(other, cid) == exported
    # Into the same store the id is taken: a new one, otherwise identical.
    new_id = import_json(store, exported)
    assert new_id != cid
    again = export_json(store, new_id)
    assert {**again, "id": cid} == exported


def test_json_is_complete(store: Store, tmp_path: Path) -> None:
    cid = every_kind(store, tmp_path)
    data = export_json(store, cid)
    assert data["format"] == "melgui-conversation" and data["version"] == 1
    assert (data["model"], data["role"]) == ("m-1", "worker")
    assert len(data["messages"]) == 12 and data["messages"][-1]["partial"] is True
    assert {r["call_id"]: r["decision"] for r in data["tool_calls"]}["can1"] == "approved:session"
    assert [p["title"] for p in data["plans"]] == ["Roadmap", "Loose plan"]
    assert [n["kind"] for n in data["notes"]] == ["repair", "error"]
    assert [w["direction"] for w in data["wire_log"]] == ["request", "event"]
    json.dumps(data)  # plain JSON all the way down


def test_import_into_another_folder(store: Store, tmp_path: Path) -> None:
    cid = every_kind(store, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    new_id = import_json(store, export_json(store, cid), folder=str(elsewhere))
    assert [s.id for s in store.conversations(str(elsewhere))] == [new_id]


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ("{not json", "not JSON"),
        ('{"format": "something-else"}', "not a melgui conversation"),
        ('{"format": "melgui-conversation", "version": 99}', "newer"),
        (
            '{"format": "melgui-conversation", "version": 1, "id": "x", "folder": "/",'
            ' "created_at": 1, "updated_at": 1, "messages": [{"role": "wizard"}]}',
            "malformed",
        ),
        ('{"format": "melgui-conversation", "version": 1}', "malformed"),
    ],
)
def test_bad_imports_say_why_and_store_nothing(
    store: Store, tmp_path: Path, payload: str, reason: str
) -> None:
    with pytest.raises(ConversationImportError, match=reason):
        import_json(store, payload)
    assert store.conversations("/") == []


def sections(markdown: str) -> list[str]:
    return re.findall(r"^## (.+)$", markdown, flags=re.M)


def details(markdown: str) -> list[dict[str, Any]]:
    """Each <details> block: its summary and body."""
    blocks = re.findall(r"<details>\n<summary>(.*?)</summary>\n(.*?)</details>", markdown, re.S)
    return [{"summary": s, "body": b} for s, b in blocks]


def test_markdown_shows_every_kind_of_event(store: Store, tmp_path: Path) -> None:
    cid = every_kind(store, tmp_path)
    markdown = export_markdown(store, cid)
    assert markdown.startswith("# Survey the project & plan <next> steps\n")
    assert f"- Folder: `{tmp_path.resolve()}`" in markdown
    assert "- Model: m-1 · Role: worker" in markdown
    assert sections(markdown) == ["User", "Assistant", "Assistant", "User", "Assistant", "Notes"]
    blocks = details(markdown)
    summaries = [b["summary"] for b in blocks]
    assert summaries == [
        "System prompt",
        "Tool call: read_file — ok (0.50 s) · auto",
        "Tool call: write_file — denied (0.50 s) · denied",
        "Tool call: run_command — error (0.50 s) · approved",
        "Tool call: write_plan — ok (0.50 s) · auto",
        "Tool call: run_command — cancelled (0.50 s) · approved:session",
        "Tool call: grep — interrupted (0.50 s) · auto",
    ]
    assert "You are a careful worker." in blocks[0]["body"]
    read = blocks[1]["body"]
    assert '```json\n{\n  "path": "notes.txt"\n}\n```' in read  # pretty arguments
    assert "````text\n" + FENCED_RESULT.rstrip("\n") + "\n````" in read  # fence outgrows content
    assert '"content": "<b>"' in blocks[2]["body"]  # inside a code fence, as written
    assert "Reason: no" in blocks[2]["body"]
    assert "exit_code=1" in blocks[3]["body"]
    assert "```json\nnot json {\n```" in blocks[6]["body"]  # unparsable arguments as sent
    # The plan follows its call, the loose plan comes after the messages.
    assert markdown.index("### Plan: Roadmap\n\n1. one\n2. two") > markdown.index("write_plan")
    assert markdown.index("### Plan: Loose plan") > markdown.index("Then we ship it to")
    assert "Then we ship it to\n\n*(cut off: the app stopped" in markdown
    assert "I'll look around." in markdown and "Here is what I found." in markdown
    assert "repair: History repaired" in markdown and "error: The relay said" in markdown
    # Everything the model and the person said is in the document.
    for stored in store.messages(cid):
        for line in stored.message.content.splitlines():
            assert line in markdown


def test_markdown_escapes_html_in_summaries(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("x"))
    store.put_message(cid, 1, Message.assistant("", (ToolCall("c", "<script>", "{}"),)))
    store.put_message(cid, 2, Message.tool_result("c", "r"))
    markdown = export_markdown(store, cid)
    assert "<summary>Tool call: &lt;script&gt; — ok</summary>" in markdown
