"""Assembling streamed tool-call fragments, for every server variant we know of."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from melgui.core.protocol.events import ToolCall
from melgui.core.transports.http.tool_call_assembler import MalformedFragment, ToolCallAssembler


def assembler() -> ToolCallAssembler:
    numbers = itertools.count(1)
    return ToolCallAssembler(make_id=lambda: f"gen_{next(numbers)}")


def frag(
    index: int | None = None,
    id: str | None = None,
    name: str | None = None,
    arguments: Any = None,
) -> dict[str, Any]:
    item: dict[str, Any] = {}
    if index is not None:
        item["index"] = index
    if id is not None:
        item["id"] = id
        item["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        item["function"] = function
    return item


def feed(fragments: list[dict[str, Any]]) -> tuple[ToolCall, ...]:
    calls = assembler()
    for fragment in fragments:
        calls.add(fragment)
    return calls.calls()


READ = ToolCall("a", "read_file", '{"path": "x.py"}')
GREP = ToolCall("b", "grep", '{"pattern": "def"}')


def test_standard_fragments_by_index() -> None:
    assert feed(
        [
            frag(0, "a", "read_file", ""),
            frag(0, arguments='{"path'),
            frag(0, arguments='": "x.py"}'),
            frag(1, "b", "grep", ""),
            frag(1, arguments='{"pattern": "def"}'),
        ]
    ) == (READ, GREP)


def test_interleaved_indexes() -> None:
    assert feed(
        [
            frag(0, "a", "read_file", '{"pa'),
            frag(1, "b", "grep", '{"pattern"'),
            frag(0, arguments='th": "x.py"}'),
            frag(1, arguments=': "def"}'),
        ]
    ) == (READ, GREP)


def test_indexes_out_of_order_are_sorted() -> None:
    assert feed(
        [frag(1, "b", "grep", '{"pattern": "def"}'), frag(0, "a", "read_file", '{"path": "x.py"}')]
    ) == (READ, GREP)


def test_missing_index_new_id_starts_a_call_and_no_id_continues() -> None:
    assert feed(
        [
            frag(None, "a", "read_file", '{"path'),
            frag(None, arguments='": "x.py"}'),
            frag(None, "b", "grep", ""),
            frag(None, arguments='{"pattern": "def"}'),
        ]
    ) == (READ, GREP)


def test_missing_index_with_repeated_id_continues_that_call() -> None:
    assert feed(
        [
            frag(None, "a", "read_file", '{"path": '),
            frag(None, "a", None, '"x.py"}'),
        ]
    ) == (READ,)


def test_whole_calls_in_one_chunk() -> None:
    assert feed(
        [frag(0, "a", "read_file", '{"path": "x.py"}'), frag(1, "b", "grep", '{"pattern": "def"}')]
    ) == (READ, GREP)


def test_every_call_at_index_zero_with_distinct_ids() -> None:
    assert feed(
        [
            frag(0, "a", "read_file", ""),
            frag(0, arguments='{"path": "x.py"}'),
            frag(0, "b", "grep", ""),
            frag(0, arguments='{"pattern": "def"}'),
        ]
    ) == (READ, GREP)


def test_whole_calls_without_id_or_index_are_separate_calls() -> None:
    calls = feed(
        [frag(None, None, "read_file", '{"path": "x.py"}'), frag(None, None, "grep", '{"q": 1}')]
    )
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("gen_1", "read_file", '{"path": "x.py"}'),
        ("gen_2", "grep", '{"q": 1}'),
    ]


def test_name_repeated_in_every_fragment() -> None:
    assert feed(
        [
            frag(0, "a", "read_file", '{"path'),
            frag(0, None, "read_file", '": "x'),
            frag(0, None, "read_file", '.py"}'),
        ]
    ) == (READ,)


def test_name_split_across_fragments() -> None:
    assert feed([frag(0, "a", "read", ""), frag(0, None, "_file", '{"path": "x.py"}')]) == (READ,)


def test_arguments_as_an_object() -> None:
    (call,) = feed([frag(0, "a", "read_file", {"path": "x.py"})])
    assert json.loads(call.arguments) == {"path": "x.py"}


def test_missing_ids_are_unique_and_stable() -> None:
    calls = ToolCallAssembler()
    calls.add(frag(0, None, "list_panes", ""))
    calls.add(frag(1, None, "list_panes", ""))
    first = calls.calls()
    assert first == calls.calls()
    assert first[0].id != first[1].id
    assert all(call.id.startswith("call_") and len(call.id) > 20 for call in first)


def test_empty_arguments_become_an_empty_object() -> None:
    assert feed([frag(0, "a", "recall", "")]) == (ToolCall("a", "recall", "{}"),)


def test_incomplete_arguments_are_reported() -> None:
    calls = assembler()
    calls.add(frag(0, "a", "read_file", '{"path": "x'))
    assert calls.incomplete()
    calls.add(frag(0, arguments='.py"}'))
    assert not calls.incomplete()


def test_fragments_with_nothing_make_no_call() -> None:
    calls = assembler()
    calls.add({"index": 0, "type": "function"})
    assert not calls.has_calls
    assert calls.calls() == ()


@pytest.mark.parametrize("bad", ["text", 3, None, {"index": 0, "function": "read_file"}])
def test_malformed_fragments_raise(bad: Any) -> None:
    with pytest.raises(MalformedFragment):
        assembler().add(bad)
