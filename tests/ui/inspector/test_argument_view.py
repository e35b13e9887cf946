"""What a call would do, as the inspector shows it: command and folder, diff, or JSON."""

from __future__ import annotations

import json

import pytest

from melgui.ui.inspector.argument_view import (
    MAX_DIFF_LINES,
    MAX_JSON_CHARS,
    arguments_html,
    diff_html,
    has_diff,
    pretty_arguments,
)
from melgui.ui.runtime.theme import DARK, LIGHT

PRE = '<pre style="font-family:monospace; background-color:#f5f6f8; margin:0">'


def test_arguments_are_indented_json_or_the_raw_text_when_not_an_object() -> None:
    assert (
        pretty_arguments('{"a":1}', {"a": 1, "é": [2]}) == '{\n  "a": 1,\n  "é": [\n    2\n  ]\n}'
    )
    assert pretty_arguments("not json", None) == "not json"


def test_huge_arguments_are_cut_with_a_count() -> None:
    arguments = {"content": "x" * (MAX_JSON_CHARS * 50), "path": "a.py"}
    raw = json.dumps(arguments)
    text = pretty_arguments(raw, arguments)
    assert text.startswith('{\n  "content": "xxx')
    assert text.endswith(
        f"\n… (cut at {MAX_JSON_CHARS:,} characters; {len(raw):,} characters as sent)"
    )
    assert len(text.partition("\n…")[0]) == MAX_JSON_CHARS


def test_many_small_arguments_are_cut_the_same_way() -> None:
    arguments = {"edits": [{"line": n, "text": "y"} for n in range(100_000)]}
    text = pretty_arguments(json.dumps(arguments), arguments)
    whole = json.dumps(arguments, indent=2, ensure_ascii=False)
    assert text.partition("\n…")[0] == whole[:MAX_JSON_CHARS]


def test_unparsed_arguments_are_cut_too() -> None:
    raw = "{" * (MAX_JSON_CHARS + 10)
    assert pretty_arguments(raw, None).partition("\n…")[0] == raw[:MAX_JSON_CHARS]


def test_a_huge_diff_shows_its_start_and_a_count() -> None:
    diff = "".join(f"+line {n}\n" for n in range(MAX_DIFF_LINES + 7))
    shown = diff_html(diff, LIGHT)
    assert f"line {MAX_DIFF_LINES - 1}<" in shown and f"line {MAX_DIFF_LINES}<" not in shown
    assert "… 7 more lines" in shown


def test_a_diff_is_coloured_line_by_line_and_escaped() -> None:
    diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old <\n+new\n same\n"
    assert diff_html(diff, LIGHT) == (
        PRE + "<b>--- a/x</b>\n<b>+++ b/x</b>\n"
        '<span style="color:#2858c8">@@ -1 +1 @@</span>\n'
        '<span style="color:#b42323">-old &lt;</span>\n'
        '<span style="color:#1a7437">+new</span>\n same</pre>'
    )
    assert '<span style="color:#5fcf76">+new</span>' in diff_html(diff, DARK)


def test_a_command_shows_what_runs_and_where() -> None:
    html = arguments_html(
        "run_command", "{}", {"command": "make <x>"}, LIGHT, cwd="/p&q", preview=None
    )
    assert html == (
        f"<p><b>Command</b></p>{PRE}make &lt;x&gt;</pre>"
        "<p><b>Folder</b> <code>/p&amp;q</code></p>"
        f"<p><b>Arguments</b></p>{PRE}"
        "{\n  &quot;command&quot;: &quot;make &lt;x&gt;&quot;\n}</pre>"
    )


def test_a_write_shows_its_diff_once_computed() -> None:
    arguments = {"path": "a", "content": "new\n"}
    waiting = arguments_html("write_file", "{}", arguments, LIGHT, cwd="/p", preview=None)
    assert waiting.startswith('<p style="color:#5e6069">Computing the diff…</p><p><b>Arguments')
    diff = "--- a/a\n+++ b/a\n+new"
    ready = arguments_html("write_file", "{}", arguments, LIGHT, cwd="/p", preview=diff)
    assert ready.startswith(f"<p><b>Changes</b></p>{diff_html(diff, LIGHT)}<p><b>Arguments")


def test_arguments_that_are_not_an_object_say_so() -> None:
    html = arguments_html("edit_file", "nope", None, LIGHT, cwd="/p", preview=None)
    assert html == (
        '<p style="color:#b42323">The arguments are not a JSON object; '
        f"the model gets an error back.</p><p><b>Arguments</b></p>{PRE}nope</pre>"
    )


@pytest.mark.parametrize(
    ("name", "previewed"),
    [("write_file", True), ("edit_file", True), ("read_file", False), ("no_such_tool", False)],
)
def test_only_tools_whose_definition_says_so_have_a_diff(name: str, previewed: bool) -> None:
    assert has_diff(name) is previewed
