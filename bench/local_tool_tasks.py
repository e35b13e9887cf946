"""Ten small tool-use tasks on a sample project, for scoring local models.

Each task scores up to 3: the first call is the right tool, its argument is right, and
the final answer uses what the tool returned (it contains a fact only the file holds).
bench_local_model.py runs them through melgui's own AgentLoop and LocalTransport.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SAMPLE_PROJECT: dict[str, str] = {
    "README.md": (
        "# tidy\n\nA tool that tidies folders.\n\n## Install\n\n"
        "    pip install tidy-folders\n\nThen run `tidy .` in any folder.\n"
    ),
    "notes.txt": "Buy milk.\nCall Bob at 5pm about the lease.\n",
    "config.toml": '[server]\nhost = "0.0.0.0"\nport = 8042\n',
    "TODO.md": "- fix the login bug\n- write the changelog\n",
    "src/app.py": 'def greet() -> str:\n    return "good morning"\n',
    "docs/guide.md": "# Getting started\n\nOpen the dashboard at /admin.\n",
    "docs/faq.md": "# FAQ\n\nThe default password is swordfish.\n",
}


@dataclass(frozen=True)
class Task:
    prompt: str
    tool: str
    argument_ok: Callable[[dict[str, Any]], bool]
    fact: str  # the answer must contain this (case-insensitive)


def _path_is(expected: str) -> Callable[[dict[str, Any]], bool]:
    return lambda args: str(args.get("path", "")).strip("./") == expected


def _pattern_has(word: str) -> Callable[[dict[str, Any]], bool]:
    return lambda args: word.lower() in str(args.get("pattern", "")).lower()


TASKS: tuple[Task, ...] = (
    Task("Read README.md and tell me how to install it.", "read_file",
         _path_is("README.md"), "pip install tidy-folders"),
    Task("What is in notes.txt?", "read_file", _path_is("notes.txt"), "milk"),
    Task("Which port does config.toml set?", "read_file", _path_is("config.toml"), "8042"),
    Task("List the files in the docs folder.", "list_dir", _path_is("docs"), "faq.md"),
    Task("Search the project for the word greet.", "grep", _pattern_has("greet"), "app.py"),
    Task("Find the Python files in this project.", "find_files", _pattern_has("py"), "app.py"),
    Task("What does the function in src/app.py return?", "read_file",
         _path_is("src/app.py"), "good morning"),
    Task("What is the first item in TODO.md?", "read_file", _path_is("TODO.md"), "login"),
    Task("What does docs/faq.md say the default password is?", "read_file",
         _path_is("docs/faq.md"), "swordfish"),
    Task("Which file mentions Bob? Search for it.", "grep", _pattern_has("bob"), "notes.txt"),
)  # fmt: skip


def write_sample_project(root: Path) -> None:
    for name, text in SAMPLE_PROJECT.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@dataclass
class Score:
    tool: int = 0
    argument: int = 0
    answer: int = 0

    @property
    def total(self) -> int:
        return self.tool + self.argument + self.answer


def score_turn(task: Task, calls: list[tuple[str, str]], answer: str) -> Score:
    """Score one turn from its calls (name, JSON arguments) and its final answer."""
    score = Score()
    if calls and calls[0][0] == task.tool:
        score.tool = 1
        try:
            arguments = json.loads(calls[0][1])
        except ValueError:
            arguments = {}
        score.argument = int(isinstance(arguments, dict) and task.argument_ok(arguments))
    score.answer = int(task.fact.lower() in answer.lower())
    return score
