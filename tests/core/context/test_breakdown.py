"""The next request, slice by slice: what each part costs, named so a person knows it, and
adding up to the context meter's estimate."""

from __future__ import annotations

from melgui.core.agent.context import ContextTracker, image_tokens
from melgui.core.context.breakdown import breakdown
from melgui.core.protocol.catalog import ToolDef, tools_for_role
from melgui.core.protocol.content import FilePart, ImagePart
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message
from tests.core.context.images import png_of

SERVER_TOOL = ToolDef(
    "create_issue",
    "Create an issue in a repository.",
    {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}},
    origin="mcp:github",
)


def conversation() -> list[Message]:
    read = ToolCall("r1", "read_file", '{"path": "src/app.py"}')
    run = ToolCall("c1", "run_command", '{"command": "pytest -q"}')
    return [
        Message.user(
            "Why does the test fail?",
            (FilePart("notes.md", "the notes " * 40), ImagePart("image/png", png_of(1500, 900))),
        ),
        Message.assistant("", (read, run)),
        Message.tool_result("r1", "def main():\n    pass\n" * 200),
        Message.tool_result("c1", "exit_code=1\nFAILED tests/test_app.py::test_main\n"),
        Message.assistant("The test calls main() before the config is read."),
    ]


def test_the_slices_add_up_to_the_estimate_and_name_what_they_are() -> None:
    messages = conversation()
    tools = (*tools_for_role("assistant"), SERVER_TOOL)
    system = "You are melgui's assistant.\n" * 20
    tracker = ContextTracker()
    estimate = tracker.fit(messages, tools, system).estimate
    found = breakdown(messages, tools, system, tracker.chars_per_token)
    assert abs(found.total - estimate) <= len(found.slices)  # each slice rounds once
    assert not found.exact
    assert [s.tokens for s in found.slices] == sorted(
        (s.tokens for s in found.slices), reverse=True
    )
    by_label = {s.label: s for s in found.slices}
    read = by_label["Result: read_file src/app.py"]
    assert (read.kind, read.message, read.call_id) == ("result", 2, "r1")
    assert found.slices[0] is read  # the file read is what costs most here
    assert by_label["Result: run_command pytest -q"].message == 3
    assert by_label["Tool: create_issue (github, MCP)"].kind == "tool"
    assert by_label["Tool: read_file"].kind == "tool"
    assert by_label["System message and instructions"].kind == "system"
    image = by_label["Image: pasted image (1500×900)"]
    assert image.tokens == 1105 == image_tokens(ImagePart("image/png", png_of(1500, 900)))
    assert by_label["Attached: notes.md"].message == 0
    assert by_label["You: Why does the test fail?"].message == 0
    assert by_label["Model calls read_file src/app.py, run_command pytest -q"].message == 1
    totals = found.by_kind()
    assert totals["image"] == 1105 and totals["tool"] > 0 and sum(totals.values()) == found.total


def test_a_tokenizer_makes_the_slices_exact() -> None:
    messages = [Message.user("one two three"), Message.assistant("four five")]
    found = breakdown(messages, (), "sys tem", 3.6, count=lambda text: len(text.split()))
    assert found.exact
    assert {s.label: s.tokens for s in found.slices} == {
        "You: one two three": 3,
        "Model: four five": 2,
        "System message and instructions": 2,
    }
