"""The catalog is docs/tools.md's, verbatim, and each role sends exactly its set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from melgui.core.protocol.catalog import (
    ALL_TOOLS,
    BASE_TOOLS,
    ROLES,
    tools_for_role,
)
from melgui.core.protocol.tools.panes import normalize_layout

SEED = Path(__file__).resolve().parents[2] / "data" / "seed_tools.txt"


def seed_definitions() -> dict[str, dict[str, object]]:
    """Every `{"name": …}` object of docs/tools.md's tool sections, parsed as JSON."""
    text = SEED.read_text(encoding="utf-8")
    text = text[text.index("Base tools") :]
    found: dict[str, dict[str, object]] = {}
    start = text.find('{"name"')
    while start != -1:
        depth = 0
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        definition = json.loads(text[start : end + 1])
        found[definition["name"]] = definition
        start = text.find('{"name"', end)
    return found


SEED_TOOLS = seed_definitions()
BASE = ["read_file", "list_dir", "grep", "find_files", "write_file", "edit_file",
        "run_command", "web_search", "write_plan", "create_pdf"]  # fmt: skip
MEMORY = ["remember", "recall"]
ORCHESTRATION = ["open_pane", "spawn_agent", "send_keys", "send_agent", "read_pane",
                 "read_agent", "list_panes"]  # fmt: skip


def test_seed_has_every_tool_once() -> None:
    assert sorted(SEED_TOOLS) == sorted(BASE + MEMORY + ORCHESTRATION)


@pytest.mark.parametrize("name", sorted(SEED_TOOLS))
def test_parameters_are_the_seeds_verbatim(name: str) -> None:
    assert ALL_TOOLS[name].parameters == SEED_TOOLS[name]["parameters"]
    # Key order too: the definition is sent as docs/tools.md writes it.
    ours = json.dumps(ALL_TOOLS[name].parameters)
    theirs = json.dumps(SEED_TOOLS[name]["parameters"])
    assert ours == theirs


def test_read_file_description_is_the_seeds() -> None:
    assert ALL_TOOLS["read_file"].description.startswith("Read a file from the workspace")


@pytest.mark.parametrize(
    ("role", "names"),
    [
        ("assistant", BASE),
        ("worker", BASE + MEMORY),
        ("orchestrator", BASE + MEMORY + ORCHESTRATION),
    ],
)
def test_role_gating(role: str, names: list[str]) -> None:
    assert role in ROLES
    assert [tool.name for tool in tools_for_role(role)] == names  # type: ignore[arg-type]


def test_unknown_role_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        tools_for_role("admin")  # type: ignore[arg-type]


def test_layout_enum_and_safety_net() -> None:
    for name in ("open_pane", "spawn_agent"):
        assert ALL_TOOLS[name].parameters["properties"]["layout"]["enum"] == [
            "right",
            "down",
            "tab",
        ]
    assert [normalize_layout(v) for v in ("right", "down", "tab", "left", None, 3)] == [
        "right", "down", "tab", "tab", "tab", "tab",
    ]  # fmt: skip


def test_wire_shapes() -> None:
    tool = BASE_TOOLS[0]
    assert tool.to_relay()["name"] == "read_file"
    assert tool.to_openai() == {"type": "function", "function": tool.to_relay()}
    tool.to_relay()["parameters"]["properties"].clear()
    assert tool.parameters["properties"]  # callers get copies
