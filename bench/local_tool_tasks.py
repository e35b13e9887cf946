"""Twenty small tool-use tasks, for scoring local models: ten on a seven-file sample
project, ten on a larger one (about forty files in nested folders).

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


def _larger_project() -> dict[str, str]:
    files = dict(SAMPLE_PROJECT)
    for n in range(12):
        files[f"src/shop/module_{n}.py"] = f"def handler_{n}() -> int:\n    return {n}\n"
    for n in range(8):
        files[f"tests/test_module_{n}.py"] = f"def test_{n}() -> None:\n    assert {n} == {n}\n"
    for n in range(6):
        files[f"docs/chapters/ch{n}.md"] = f"# Chapter {n}\n\nNothing here yet.\n"
    files.update(
        {
            "CHANGELOG.md": "# Changelog\n\n## 2.4.0\n\nAdded the refund flow.\n",
            "src/shop/pricing.py": "VAT_RATE = 0.19\n\ndef total(net: float) -> float:\n"
            "    return net * (1 + VAT_RATE)\n",
            "src/shop/db.py": 'DATABASE_URL = "postgres://shop@db.internal/orders"\n',
            "deploy/k8s.yaml": "replicas: 7\nimage: shop:2.4.0\n",
            "docs/chapters/security.md": "# Security\n\nReport issues to sec@shop.example.\n",
            "LICENSE": "Apache License 2.0\n",
        }
    )
    return files


LARGER_PROJECT: dict[str, str] = _larger_project()

LARGER_TASKS: tuple[Task, ...] = (
    Task("Read CHANGELOG.md and tell me the latest version.", "read_file",
         _path_is("CHANGELOG.md"), "2.4.0"),
    Task("What VAT rate does src/shop/pricing.py use?", "read_file",
         _path_is("src/shop/pricing.py"), "0.19"),
    Task("Read src/shop/db.py and tell me the database host.", "read_file",
         _path_is("src/shop/db.py"), "db.internal"),
    Task("How many replicas does deploy/k8s.yaml ask for?", "read_file",
         _path_is("deploy/k8s.yaml"), "7"),
    Task("Where should security issues be reported? Read docs/chapters/security.md.",
         "read_file", _path_is("docs/chapters/security.md"), "sec@shop.example"),
    Task("List the files in the deploy folder.", "list_dir", _path_is("deploy"), "k8s.yaml"),
    Task("Search the project for VAT_RATE.", "grep", _pattern_has("vat_rate"), "pricing.py"),
    Task("Find the YAML files in this project.", "find_files", _pattern_has("yaml"),
         "k8s.yaml"),
    Task("Which license is in the LICENSE file?", "read_file", _path_is("LICENSE"), "apache"),
    Task("Search the project for the word refund.", "grep", _pattern_has("refund"),
         "changelog"),
)  # fmt: skip


def write_sample_project(root: Path, files: dict[str, str] = SAMPLE_PROJECT) -> None:
    for name, text in files.items():
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
