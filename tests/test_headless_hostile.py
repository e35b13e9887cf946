"""`melgui exec` against hostile server replies: deep JSON, terminal escapes, echoed keys.

Each case is a real `melgui exec` child against the scripted relay or OpenAI server; the
run must end with a plain message, every call answered once, and nothing raw or secret
in what reaches the person's terminal or the history.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from melgui.core.store import open_store
from melgui.core.store.export import export_json_text, export_markdown
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, http_error, text, tool_call, tool_calls
from tests.fakes.exec import json_lines, melgui_exec

KEY = "sk-proj-Secret0123456789abcdefXYZ"
ESCAPES = (
    "\x1b]52;c;aGVsbG8=\x07"  # OSC 52: write the clipboard
    "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\"  # OSC 8: a hyperlink
    "\x1b[2J"  # CSI 2J: clear the screen
    "\x9b31m\x9d0;title\x9c"  # the 8-bit CSI and OSC
    "\x07\x08\x7f"
)


def _controls(text: str) -> list[str]:
    """Control characters other than newline and tab (C0, DEL and C1)."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def test_arguments_nested_past_the_cap_get_an_error_result_and_the_turn_goes_on(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    scripted_relay.script(
        [tool_calls(tool_call("read_file", '{"path": ' + deep + "}", id="deep"))],
        [text("Sorry."), done()],
    )
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", str(tmp_path), "--json", "go"
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Internal error" not in result.stderr and "Traceback" not in result.stderr
    events = json_lines(result.stdout)
    [answer] = [e for e in events if e["kind"] == "tool_result"]
    assert answer["id"] == "deep" and answer["status"] == "error"
    assert "nested deeper than" in answer["content"]
    second = scripted_relay.legs_received[1].messages[-1]
    assert second["role"] == "tool" and second["tool_call_id"] == "deep"


def test_openai_arguments_nested_past_the_cap_stream_in_pieces(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    deep = "[" * 50_000 + "]" * 50_000
    scripted_openai.script(
        [tool_calls(tool_call("read_file", '{"path": ' + deep + "}", id="deep"))],
        [text("Sorry."), done()],
    )
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--json", "go",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [answer] = [e for e in json_lines(result.stdout) if e["kind"] == "tool_result"]
    assert answer["status"] == "error" and "nested deeper than" in answer["content"]


def test_plain_output_strips_control_sequences(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([text(f"before{ESCAPES}after\n\tindented"), done()])
    result = melgui_exec("--url", scripted_relay.base_url, "--folder", str(tmp_path), "go")
    assert result.returncode == 0, result.stderr
    assert _controls(result.stdout) == []
    assert "before" in result.stdout and "after\n\tindented" in result.stdout
    assert "evil.example" not in result.stdout  # the link's target went with its sequence


def test_json_output_escapes_the_c1_range(scripted_relay: ScriptedRelay, tmp_path: Path) -> None:
    scripted_relay.script([text(f"x{ESCAPES}y"), done()])
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", str(tmp_path), "--json", "go"
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert _controls(result.stdout.replace("\n", "")) == []
    [event] = [e for e in json_lines(result.stdout) if e["kind"] == "text"]
    assert event["text"] == f"x{ESCAPES}y"  # escaped on the wire, not lost


def test_an_error_body_reaches_stderr_cleaned(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([http_error(400, {"error": {"message": f"bad{ESCAPES}request"}})])
    result = melgui_exec("--url", scripted_relay.base_url, "--folder", str(tmp_path), "go")
    assert result.returncode == 1
    assert "HTTP 400" in result.stderr and "bad" in result.stderr
    assert _controls(result.stderr.replace("\n", "")) == []


def test_the_key_a_server_echoes_is_redacted_everywhere(
    scripted_openai: ScriptedOpenAI, tmp_path: Path, own_folders: Path
) -> None:
    escaped = json.dumps(KEY)[1:-1].replace("-", "\\u002d")
    quoted = KEY.replace("-", "%2D")
    body = f"Incorrect API key provided: {KEY}. Escaped: {escaped}. Quoted: {quoted}."
    scripted_openai.script([http_error(401, {"error": {"message": body}})])
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "go", env={"OPENAI_API_KEY": KEY},
    )  # fmt: skip
    assert result.returncode == 1 and "HTTP 401" in result.stderr
    secret_forms = (KEY, escaped, quoted)
    for form in secret_forms:
        assert form not in result.stdout + result.stderr
    exported, dump = _stored(tmp_path)
    assert "Incorrect API key" in dump
    for form in secret_forms:
        assert form not in exported
        assert form not in dump


def _stored(folder: Path) -> tuple[str, str]:
    """The folder's conversations exported (Markdown and JSON), and the database dumped."""
    store = open_store()
    try:
        exported = "\n".join(
            export_markdown(store, item.id) + export_json_text(store, item.id)
            for item in store.conversations(str(folder))
        )
        assert exported
        assert store.path is not None
        with sqlite3.connect(store.path) as db:
            dump = "\n".join(db.iterdump())
    finally:
        store.close()
    return exported, dump
