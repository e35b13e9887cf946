"""`melgui exec` against a server that sends lone UTF-16 surrogates (`"\\ud800"` in its
JSON): they are valid JSON but no text, so they become U+FFFD where they are decoded.
Before, the first write of such text (the terminal, the history database) raised
UnicodeEncodeError and exec ended with a traceback.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from melgui.core.protocol import bounded_json
from melgui.core.store import open_store
from tests.fakes import ScriptedRelay, done
from tests.fakes.exec import json_lines, melgui_exec
from tests.fakes.scenario import sse

LONE = '{"text": "a\\ud800b \\udfff \\ud83d\\ude00\\n"}'  # two lone halves and one pair


def test_lone_surrogates_from_the_server_become_replacement_characters(
    scripted_relay: ScriptedRelay, tmp_path: Path, own_folders: Path
) -> None:
    scripted_relay.script([sse(LONE, "delta"), done()])
    plain = melgui_exec("--url", scripted_relay.base_url, "--folder", str(tmp_path), "go")
    assert plain.returncode == 0, plain.stderr
    assert "Traceback" not in plain.stderr
    assert plain.stdout == "a\ufffdb \ufffd \U0001f600\n"
    scripted_relay.script([sse(LONE, "delta"), done()])
    result = melgui_exec(
        "--url", scripted_relay.base_url, "--folder", str(tmp_path), "--json", "go"
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    [event] = [e for e in json_lines(result.stdout) if e["kind"] == "text"]
    assert event["text"] == "a\ufffdb \ufffd \U0001f600\n"
    store = open_store()
    try:
        assert store.path is not None
        with sqlite3.connect(store.path) as db:
            dump = "\n".join(db.iterdump())
    finally:
        store.close()
    assert "a\ufffdb" in dump


def test_the_decoder_replaces_lone_halves_in_keys_and_values_and_keeps_pairs() -> None:
    value = bounded_json.loads('{"k\\udc00": ["\\ud800", {"x": "\\ud83d\\ude00"}]}')
    assert value == {"k\ufffd": ["\ufffd", {"x": "\U0001f600"}]}
    assert bounded_json.loads(b'["\\uD800"]') == ["\ufffd"]
