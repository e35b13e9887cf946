"""A tool's arguments decoded once by its definition's schema into its typed input."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from melgui.core.protocol.tooling import ToolError, ToolOutcome, ToolRegistry
from melgui.core.protocol.tools.definition import Tool, at_least, decode_input
from melgui.core.protocol.tools.files import EDIT_FILE, READ_FILE


@dataclass(frozen=True, slots=True)
class ReadInput:
    path: str
    offset: int | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        at_least("limit", self.limit, 1)


@dataclass(frozen=True, slots=True)
class EditInput:
    path: str
    old_string: str
    new_string: str
    replace_all: bool = False


def test_schema_values_become_the_typed_input() -> None:
    given = decode_input(READ_FILE, ReadInput, {"path": "a.py", "offset": 10.0, "extra": 1})
    assert given == ReadInput("a.py", 10, None)  # 10.0 is an integer; unknown keys dropped
    assert decode_input(READ_FILE, ReadInput, {"path": "a.py", "limit": None}).limit is None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Missing required argument 'path' (a string)."),
        ({"path": None}, "Missing required argument 'path' (a string)."),
        ({"path": 3}, "Argument 'path' must be a string, not integer."),
        ({"path": "a", "offset": "ten"}, "Argument 'offset' must be an integer, not string."),
        ({"path": "a", "offset": True}, "Argument 'offset' must be an integer, not boolean."),
        ({"path": "a", "limit": 0}, "Argument 'limit' must be at least 1, got 0."),
    ],
)
def test_each_mistake_is_one_line(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(ToolError) as caught:
        decode_input(READ_FILE, ReadInput, arguments)
    assert str(caught.value) == message


def test_a_boolean_is_true_or_false() -> None:
    arguments = {"path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}
    with pytest.raises(ToolError, match="'replace_all' must be true or false, not string"):
        decode_input(EDIT_FILE, EditInput, arguments)


async def test_a_registry_runs_a_tool_in_the_context_of_the_moment() -> None:
    async def handler(prefix: str, given: ReadInput) -> ToolOutcome:
        if given.path == "gone":
            raise FileNotFoundError(2, "No such file or directory")
        return ToolOutcome(prefix + given.path)

    contexts = ["one:"]
    registry = ToolRegistry()
    registry.add(Tool(READ_FILE, ReadInput, handler), lambda: contexts[-1])
    assert (await registry.run("read_file", {"path": "a"})).content == "one:a"
    contexts.append("two:")  # a settings change: the next call reads the new context
    assert (await registry.run("read_file", {"path": "a"})).content == "two:a"
    assert await registry.run("read_file", {}) == ToolOutcome.error(
        "Missing required argument 'path' (a string)."
    )
    assert await registry.run("read_file", {"path": "gone"}) == ToolOutcome.error(
        "read_file failed: No such file or directory."
    )
