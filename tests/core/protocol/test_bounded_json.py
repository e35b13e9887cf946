"""Decoded JSON from a model or a server has a nesting cap; past it, a ValueError."""

from __future__ import annotations

import pytest

from melgui.core.protocol.bounded_json import MAX_JSON_DEPTH, JSONTooDeep, depth_of, loads
from melgui.core.protocol.events import ToolCall
from melgui.core.transports.http.tool_call_assembler import ToolCallAssembler


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_values_up_to_the_cap_decode() -> None:
    assert depth_of(loads(nested(MAX_JSON_DEPTH))) == MAX_JSON_DEPTH
    assert loads('{"a": [1, {"b": "[[[[[[["}]}') == {"a": [1, {"b": "[[[[[[["}]}


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 5_000, 100_000])
def test_deeper_values_raise_a_value_error(levels: int) -> None:
    with pytest.raises(JSONTooDeep, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        loads(nested(levels))
    with pytest.raises(ValueError):
        loads(nested(levels).encode())


def test_many_brackets_in_a_flat_value_are_not_depth() -> None:
    flat = "[" + ",".join(["[]"] * 10_000) + "]"
    assert depth_of(loads(flat)) == 2


def test_a_call_with_deep_arguments_decodes_to_an_error_for_the_model() -> None:
    call = ToolCall("c1", "read_file", '{"path": ' + nested(100_000) + "}")
    arguments, problem = call.decode()
    assert arguments is None and problem is not None
    assert "read_file" in problem and "nested deeper than" in problem


def test_the_assembler_takes_deep_arguments_as_whole() -> None:
    assembler = ToolCallAssembler()
    assembler.add({"index": 0, "id": "a", "function": {"name": "x", "arguments": nested(10_000)}})
    assert not assembler.incomplete()
    [call] = assembler.calls()
    assert call.decode()[0] is None
