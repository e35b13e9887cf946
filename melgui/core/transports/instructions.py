"""The system message melgui sends to servers that know nothing of the project.

The Mel relay receives `cwd` and `tool_role` in every leg and builds its own prompt; an
OpenAI-compatible server gets only messages and tools, so the model is told here where
it works and how melgui runs its tools.
"""

from __future__ import annotations

from typing import Any

from melgui.core.config.project_instructions import project_instructions_text
from melgui.core.protocol.catalog import Role

_ROLE_TEXT: dict[str, str] = {
    "assistant": "You help the user with their project.",
    "worker": (
        "You are a worker agent: carry out the task you are given, then reply with a short "
        "report of what you did and found. Shared project memory (remember/recall) is there "
        "for what other agents should know."
    ),
    "orchestrator": (
        "You are the lead agent. Split large work into parts: open terminal panes "
        "(open_pane) for shells or CLI agents and start worker agents (spawn_agent), then "
        "follow them with read_pane/read_agent and list_panes, and report back to the user."
    ),
}


def agent_instructions(role: Role, cwd: str) -> str:
    """What the model needs to know to use melgui's tools well."""
    return (
        f"You are an agent in melgui, a desktop app, working on the project folder {cwd}. "
        f"{_ROLE_TEXT.get(role, _ROLE_TEXT['assistant'])}\n"
        "Tools run on the user's machine: file paths are relative to the project folder, "
        "grep and find_files search the whole project, run_command runs in the project "
        "folder. Calls that change things may need the user's approval; a denied call "
        "says why, so adjust instead of retrying it unchanged. Read before you edit, keep "
        "changes small, and answer in Markdown."
    )


def system_text(role: Role, cwd: str) -> str:
    """melgui's system message: the agent instructions, then the project's files."""
    project = project_instructions_text(cwd)
    base = agent_instructions(role, cwd)
    return f"{base}\n\n{project}" if project else base


def with_instructions(messages: list[dict[str, Any]], role: Role, cwd: str) -> list[dict[str, Any]]:
    """`messages` led by melgui's system message, unless they already have one."""
    if messages and messages[0].get("role") == "system":
        return messages
    return [{"role": "system", "content": system_text(role, cwd)}, *messages]


def with_project_instructions(messages: list[dict[str, Any]], cwd: str) -> list[dict[str, Any]]:
    """For the relay, which builds its own prompt from `cwd` and `tool_role` but cannot
    read the user's disk: the project's instruction files as a leading system message."""
    project = project_instructions_text(cwd)
    if not project or (messages and messages[0].get("content") == project):
        return messages
    return [{"role": "system", "content": project}, *messages]
