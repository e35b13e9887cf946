"""Reasoning and attachments in the history store and in exports.

Images are stored once by content hash; one over the size cap is not stored and reads
back as a note in its place.
"""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.protocol.content import FilePart, ImagePart
from melgui.core.protocol.messages import Message
from melgui.core.store import Store
from melgui.core.store.blobs import MAX_BLOB_BYTES
from melgui.core.store.export import export_json, export_markdown, import_json

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


def conversation(store: Store, folder: Path) -> tuple[str, list[Message]]:
    cid = store.create_conversation(str(folder))
    image = ImagePart("image/png", PNG, "shot.png")
    messages = [
        Message.user("What is on this?", (image, FilePart("src/a.py", "print(1)\n"))),
        Message.assistant("A chart.", reasoning="Looking at the pixels…"),
        Message.user("And this one again?", (image,)),
        Message.assistant("Same chart."),
    ]
    for seq, message in enumerate(messages):
        store.put_message(cid, seq, message)
    return cid, messages


def test_reasoning_and_parts_read_back_whole(store: Store, tmp_path: Path) -> None:
    cid, messages = conversation(store, tmp_path)
    assert [s.message for s in store.messages(cid)] == messages


def test_an_image_sent_twice_is_stored_once(store: Store, tmp_path: Path) -> None:
    conversation(store, tmp_path)
    with store.transaction() as conn:
        assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 1
        row = conn.execute("SELECT parts FROM messages WHERE seq = 0").fetchone()
    assert "data" not in json.loads(row[0])[0]  # bytes live in blobs only


def test_branches_keep_reasoning_and_parts(store: Store, tmp_path: Path) -> None:
    cid, messages = conversation(store, tmp_path)
    branch = store.branch(cid, messages[:1], "rewind")
    assert [s.message for s in store.branch_messages(branch)] == messages


def test_an_image_over_the_cap_reads_back_as_a_note(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    huge = ImagePart("image/png", b"\0" * (MAX_BLOB_BYTES + 1), "huge.png")
    store.put_message(cid, 0, Message.user("look", (huge,)))
    (stored,) = store.messages(cid)
    (part,) = stored.message.parts
    assert isinstance(part, FilePart) and "size cap" in part.text


def test_exports_carry_reasoning_and_images(store: Store, tmp_path: Path) -> None:
    cid, messages = conversation(store, tmp_path)
    markdown = export_markdown(store, cid)
    assert "<summary>Thinking</summary>" in markdown and "Looking at the pixels…" in markdown
    assert "![shot.png](data:image/png;base64," in markdown
    assert "Attached file: src/a.py" in markdown
    assert markdown.index("Looking at the pixels") < markdown.index("A chart.")
    doc = export_json(store, cid)
    copy = import_json(store, json.loads(json.dumps(doc)))
    assert [s.message for s in store.messages(copy)] == messages


def test_wire_form_sends_parts_as_typed_content() -> None:
    image = ImagePart("image/jpeg", b"\xff\xd8jpeg", "p.jpg")
    wire = Message.user("see", (FilePart("a.txt", "hi", "cut at 1 KB"), image)).to_wire()
    assert wire["content"][0] == {"type": "text", "text": "see"}
    assert wire["content"][1]["type"] == "text" and 'path="a.txt"' in wire["content"][1]["text"]
    assert "cut at 1 KB" in wire["content"][1]["text"]
    url = wire["content"][2]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    assert Message.user("plain").to_wire()["content"] == "plain"
