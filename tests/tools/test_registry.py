"""The workspace tools: one object each, every base tool and remember/recall, wired to one
project."""

from __future__ import annotations

from pathlib import Path

from melgui.core.protocol.catalog import ALL_TOOLS, BASE_TOOLS, MEMORY_TOOLS, tools_for_role
from melgui.tools import LocalMemory, ToolSettings, Workspace, build_workspace_tools
from melgui.tools.toolbox import WORKSPACE_TOOLS


class PlanList:
    def __init__(self) -> None:
        self.plans: list[tuple[str, str]] = []

    def __call__(self, title: str, markdown: str) -> None:
        self.plans.append((title, markdown))


async def test_every_seed_tool_is_registered(workspace: Workspace, tmp_path: Path) -> None:
    registry = build_workspace_tools(
        workspace,
        settings=ToolSettings(),
        memory=LocalMemory(tmp_path / "m.db"),
        plans=PlanList(),
    )
    assert registry.names() == sorted(tool.name for tool in BASE_TOOLS + MEMORY_TOOLS)


def test_each_tool_object_carries_the_catalogs_definition() -> None:
    """A tool is one object: its definition is the one the catalog lists (no copy, no
    second table by name), and the workspace runs exactly what a worker is offered."""
    assert [tool.definition for tool in WORKSPACE_TOOLS] == list(tools_for_role("worker"))
    for tool in WORKSPACE_TOOLS:
        assert ALL_TOOLS[tool.name] is tool.definition


async def test_calls_go_through_the_registry(workspace: Workspace, tmp_path: Path) -> None:
    plans = PlanList()
    registry = build_workspace_tools(
        workspace, settings=ToolSettings(), memory=LocalMemory(tmp_path / "m.db"), plans=plans
    )
    written = await registry.run("write_file", {"path": "notes/a.md", "content": "hello\n"})
    assert written.status == "ok"
    read = await registry.run("read_file", {"path": "notes/a.md"})
    assert read.content.endswith("     1\thello")
    plan = await registry.run("write_plan", {"title": "Ship it", "markdown": "1. a\n2. b\n"})
    assert plan.content == "Plan 'Ship it' is shown to the person in the Plans panel (2 lines)."
    assert plans.plans == [("Ship it", "1. a\n2. b\n")]
    await registry.run("remember", {"note": "the project uses pytest"})
    recalled = await registry.run("recall", {})
    assert recalled.content.endswith("the project uses pytest")
    search = await registry.run("web_search", {"query": "x"})
    assert search.status == "error" and "not configured" in search.content


async def test_model_mistakes_become_error_results(workspace: Workspace, tmp_path: Path) -> None:
    registry = build_workspace_tools(
        workspace, settings=ToolSettings(), memory=LocalMemory(tmp_path / "m.db"), plans=PlanList()
    )
    cases = {
        "read_file": ({}, "Missing required argument 'path' (a string)."),
        "edit_file": ({"path": "x"}, "Missing required argument 'old_string' (a string)."),
        "grep": ({"pattern": ["a"]}, "Argument 'pattern' must be a string, not array."),
        "write_plan": ({"title": "t"}, "Missing required argument 'markdown' (a string)."),
        "list_dir": ({"path": None}, None),
    }
    for name, (arguments, message) in cases.items():
        outcome = await registry.run(name, arguments)
        if message is None:
            assert outcome.status == "ok"
        else:
            assert (outcome.status, outcome.content) == ("error", message)


async def test_async_plan_sink_is_awaited(workspace: Workspace, tmp_path: Path) -> None:
    seen: list[str] = []

    async def sink(title: str, markdown: str) -> None:
        seen.append(title)

    registry = build_workspace_tools(
        workspace, settings=ToolSettings(), memory=LocalMemory(tmp_path / "m.db"), plans=sink
    )
    await registry.run("write_plan", {"title": "Async", "markdown": ""})
    assert seen == ["Async"]


async def test_project_folder_removed_meanwhile(tmp_path: Path) -> None:
    root = tmp_path / "gone"
    root.mkdir()
    registry = build_workspace_tools(
        Workspace(root),
        settings=ToolSettings(),
        memory=LocalMemory(tmp_path / "m.db"),
        plans=PlanList(),
    )
    root.rmdir()
    for name, arguments in [
        ("run_command", {"command": "true"}),
        ("grep", {"pattern": "x"}),
        ("list_dir", {}),
        ("write_file", {"path": "a.txt", "content": "x"}),
    ]:
        outcome = await registry.run(name, arguments)
        assert outcome.status == "error", (name, outcome)
        assert "\n" not in outcome.content
