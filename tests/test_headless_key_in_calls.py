"""melgui's own key, when the model writes it into a call's arguments, a file a tool reads
holds it, or the model streams it split across two deltas: the tools work with what
they were given, but exec's output (text, calls, results), the history database (every
table), the exports and the wire log show it nowhere, raw, JSON-escaped or URL-encoded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from melgui.core.store import open_store
from melgui.core.store.export import export_json_text, export_markdown
from tests.fakes import ScriptedOpenAI, done, text, tool_call, tool_calls
from tests.fakes.exec import json_lines, melgui_exec

KEY = "sk-proj-Secret0123456789abcdefXYZ"
ESCAPED = json.dumps(KEY)[1:-1].replace("-", "\\u002d")
QUOTED = KEY.replace("-", "%2D")
FORMS = (KEY, ESCAPED, QUOTED)


def _stored(folder: Path) -> tuple[str, str]:
    store = open_store()
    try:
        exported = "\n".join(
            export_markdown(store, item.id) + export_json_text(store, item.id)
            for item in store.conversations(str(folder))
        )
        assert store.path is not None
        with sqlite3.connect(store.path) as db:
            dump = "\n".join(db.iterdump())
    finally:
        store.close()
    return exported, dump


def test_the_key_in_arguments_results_and_split_deltas_is_stored_nowhere(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "settings.env").write_text(f"OPENAI_API_KEY={KEY}\n")
    half = len(KEY) // 2
    scripted_openai.script(
        [
            text(f"The key is {KEY[:half]}"),
            text(f"{KEY[half:]} and that is all."),
            tool_calls(
                tool_call("read_file", {"path": "settings.env"}, id="read"),
                tool_call("grep", '{"pattern": "' + ESCAPED + '"}', id="grep"),
                tool_call("find_files", {"pattern": f"*{QUOTED}*"}, id="find"),
            ),
        ],
        [text("Done."), done()],
    )
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url, "--folder", str(tmp_path),
        "--json", "go", env={"OPENAI_API_KEY": KEY},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    live = "".join(e["text"] for e in events if e["kind"] == "text")
    assert "The key is «redacted» and that is all." in live
    results = {e["id"]: e for e in events if e["kind"] == "tool_result"}
    assert results["grep"]["status"] == "ok" and "settings.env" in results["grep"]["content"]
    exported, dump = _stored(tmp_path)
    assert "settings.env" in dump and "and that is all" in dump
    for form in FORMS:
        assert form not in result.stdout + result.stderr, form  # what reaches a terminal or CI log
        assert form not in exported, form
        assert form not in dump, form
