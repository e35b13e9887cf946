"""Tool-call grammars made from the tools' JSON Schemas, tried on the shipped model.

The model is primed with a call that breaks the schema (as SmolLM2-135M wrote it); under
the grammar it cannot write it again, whatever it samples.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from melgui.core.protocol.catalog import ALL_TOOLS, ToolDef
from melgui.core.transports.local.gbnf import arguments_gbnf
from melgui.core.transports.local.model import default_model_path, load_model_future
from melgui.core.transports.local.plan import (
    _required_only,
    arguments_grammar,
    exact_schema,
    only_arguments,
)
from melgui.core.transports.local.project import CONFINED_PATH, with_known_paths

pytestmark = pytest.mark.skipif(default_model_path() is None, reason="no shipped model")

SEEDS = (1, 2, 3)


def _primed_prompt(tool: str, bad: str) -> str:
    return (
        "<|im_start|>system\nAnswer with the arguments of a tool call as JSON.<|im_end|>\n"
        f"<|im_start|>user\nCall {tool}.<|im_end|>\n"
        f"<|im_start|>assistant\nfunctions.{tool}:\n{bad}<|im_end|>\n"
        f"<|im_start|>user\nAgain, exactly the same.<|im_end|>\n"
        f"<|im_start|>assistant\nfunctions.{tool}:\n"
    )


def _samples(tool: ToolDef, bad: str, small: bool) -> list[Any]:
    path = default_model_path()
    assert path is not None
    server = load_model_future(path, 2048, 1).result(timeout=120).server
    grammar = arguments_grammar(tool, required_only=small)
    assert grammar.startswith("%llguidance") is not small  # small models get GBNF
    found: list[Any] = []
    for seed in SEEDS:
        texts: list[str] = []

        def chunk(data: dict[str, Any], texts: list[str] = texts) -> bool:
            texts.append(((data.get("choices") or [{}])[0]).get("text") or "")
            return False

        body = {
            "prompt": _primed_prompt(tool.name, bad),
            "n_predict": 200,
            "grammar": grammar,
            "temperature": 1.0 if seed > 1 else 0.0,
            "seed": seed,
            "stream": True,
        }
        server.handle_completions(body, chunk)
        found.append(json.loads("".join(texts)))
    return found


@pytest.mark.parametrize("small", [False, True], ids=["llguidance", "gbnf"])
def test_a_call_cannot_have_a_property_the_schema_does_not_have(small: bool) -> None:
    bad = '{"project": {"name": "Project1", "version": 2}, "scripts": ["start.py"]}'
    for arguments in _samples(ALL_TOOLS["list_dir"], bad, small):
        assert isinstance(arguments, dict)
        assert set(arguments) <= {"path"}, arguments


@pytest.mark.parametrize("small", [False, True], ids=["llguidance", "gbnf"])
def test_read_file_cannot_name_a_path_that_does_not_exist(small: bool) -> None:
    files = ["README.md", "src/app.py", "docs/guide.md"]
    tool = with_known_paths(ALL_TOOLS["read_file"], files)
    for arguments in _samples(tool, '{"path": "./project_root/main.py", "limit": 10}', small):
        assert arguments["path"] in files, arguments
        assert set(arguments) <= {"path", "offset", "limit"}
        assert all(isinstance(arguments[k], int) for k in ("offset", "limit") if k in arguments)


def test_a_new_files_path_stays_inside_the_project_under_gbnf() -> None:
    tool = with_known_paths(ALL_TOOLS["write_file"], ["README.md"])
    bad = '{"path": "../../etc/passwd", "content": "x"}'
    for arguments in _samples(tool, bad, small=True):
        assert re.fullmatch(CONFINED_PATH, arguments["path"]), arguments
        assert set(arguments) == {"path", "content"}


def test_every_tools_arguments_have_a_gbnf_grammar() -> None:
    for tool in ALL_TOOLS.values():
        for parameters in (tool.parameters, _required_only(tool.parameters)):
            assert arguments_gbnf(exact_schema(parameters)) is not None, tool.name


def test_a_call_whose_grammar_admits_one_value_is_given_and_others_are_not() -> None:
    one = with_known_paths(ALL_TOOLS["read_file"], ["README.md"])
    assert only_arguments(one, required_only=True) == '{"path": "README.md"}'
    # With its optional arguments the model may still write offset or limit.
    assert only_arguments(one, required_only=False) is None
    two = with_known_paths(ALL_TOOLS["read_file"], ["README.md", "app.py"])
    assert only_arguments(two, required_only=True) is None
    assert only_arguments(ALL_TOOLS["grep"], required_only=True) is None  # a free pattern
    empty = ToolDef("ping", "Answer.", {"type": "object", "properties": {}})
    assert only_arguments(empty) == "{}"
