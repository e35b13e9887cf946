"""What a leg of the local model may answer, and the grammars for its tool arguments.

Pure decisions, no llama.cpp state: which tools may be called (tool_choice, and a
limit on rounds of calls for small models), and the grammar of each tool's arguments
(GBNF for small models, see gbnf.py; else the engine's JSON-schema converter, imported
lazily).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any

from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.local.gbnf import arguments_gbnf


@dataclass(frozen=True, slots=True)
class CallPlan:
    """What the leg may answer: the tools shown, which may be called, and whether text."""

    tools: tuple[ToolDef, ...]
    callable: tuple[ToolDef, ...]
    allow_message: bool


def tool_rounds(messages: list[dict[str, Any]]) -> int:
    """How many times the model has called tools since the last user message."""
    rounds = 0
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "assistant" and message.get("tool_calls"):
            rounds += 1
    return rounds


def plan_leg(request: LegRequest, max_tool_rounds: int) -> CallPlan | str:
    """The leg's answer options, or a message saying why the request is unusable.

    Under tool_choice auto, after `max_tool_rounds` rounds of calls the model must
    answer in words: small models otherwise call tools again and again.
    """
    choice = request.tool_choice
    tools = request.tools
    if choice == "auto" and tool_rounds(request.messages) >= max_tool_rounds:
        choice = "none"
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        forced = tuple(tool for tool in tools if tool.name == name)
        if not forced:
            return f"tool_choice names a tool that was not sent: {name!r}"
        return CallPlan(tools, forced, allow_message=False)
    if not tools or choice == "none":
        return CallPlan(tools, (), allow_message=True)
    return CallPlan(tools, tools, allow_message=choice != "required")


# The words by which a request names a read-only tool. A 135M model given ten tools
# chose the right one for 2 of 10 sample tasks; its choice is nudged (a logit bias, not
# a rule) toward a tool the request names in words or by naming one of its files.
TOOL_CUES: dict[str, tuple[str, ...]] = {
    "read_file": ("read", "what is in", "what does", "which", "what is the"),
    "list_dir": ("list",),
    "grep": ("search", "mentions"),
    "find_files": ("find",),
}
CUE_BIAS = 3.0


def cued_tools(
    request: LegRequest, callable: tuple[ToolDef, ...], files: list[str] | None
) -> list[str]:
    """The callable tools the last user message names in words (see TOOL_CUES); a
    project file it names cues read_file when no other tool is named."""
    users = [m for m in request.messages if m.get("role") == "user"]
    text = str(users[-1].get("content") or "").lower() if users else ""
    names = {tool.name for tool in callable}
    cued = [
        name
        for name, cues in TOOL_CUES.items()
        if name != "read_file" and name in names and any(cue in text for cue in cues)
    ]
    if cued or "read_file" not in names:
        return cued
    names_a_file = any(path.lower() in text for path in files or [])
    if names_a_file or any(cue in text for cue in TOOL_CUES["read_file"]):
        return ["read_file"]
    return []


_grammars: dict[str, str] = {}

# A call's strings are bounded, so a model that loops inside one stops; the text a tool
# writes (a file's content, an edit) gets more room than a name or a pattern.
STRING_CHARS = 200
TEXT_CHARS = 4000
TEXT_ARGUMENTS = frozenset({"content", "old_string", "new_string", "command"})
ARRAY_ITEMS = 16


def exact_schema(schema: dict[str, Any], name: str = "") -> dict[str, Any]:
    """`schema` as tightly as a grammar can hold it: an object has only its properties,
    the required ones first, and no others; strings are bounded; enums, integers and
    booleans stay what they are. A schema without a type is left as it is."""
    kind = schema.get("type")
    if "enum" in schema:
        return {key: schema[key] for key in ("type", "enum") if key in schema}
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return {"type": "object", "properties": {}, "additionalProperties": False}
        required = [key for key in schema.get("required", []) if key in properties]
        order = required + [key for key in properties if key not in required]
        return {
            "type": "object",
            "properties": {key: exact_schema(properties[key], key) for key in order},
            "required": required,
            "additionalProperties": False,
        }
    if kind == "string":
        bounded = {k: v for k, v in schema.items() if k in ("type", "pattern", "minLength")}
        limit = TEXT_CHARS if name in TEXT_ARGUMENTS else STRING_CHARS
        bounded["maxLength"] = min(int(schema.get("maxLength", limit)), limit)
        return bounded
    if kind == "array":
        items = schema.get("items")
        exact: dict[str, Any] = {"type": "array", "maxItems": ARRAY_ITEMS}
        if isinstance(items, dict):
            exact["items"] = exact_schema(items)
        return exact
    if "anyOf" in schema:
        return {"anyOf": [exact_schema(option, name) for option in schema["anyOf"]]}
    return dict(schema)


def _required_only(parameters: dict[str, Any]) -> dict[str, Any]:
    """The schema without its optional properties (unchanged when nothing is required)."""
    required = parameters.get("required")
    properties = parameters.get("properties")
    if not required or not isinstance(properties, dict):
        return parameters
    kept = {name: spec for name, spec in properties.items() if name in required}
    return {**parameters, "properties": kept}


def only_arguments(tool: ToolDef, *, required_only: bool = False) -> str | None:
    """The arguments as JSON when the call's grammar admits one value and nothing else
    (a small model reading the one file the person named): then there is nothing to
    sample, and each of its tokens would cost a step of the model. None otherwise."""
    parameters = _required_only(tool.parameters) if required_only else tool.parameters
    value = _only_value(exact_schema(parameters))
    return None if value is None else json.dumps(value[0])


def _only_value(schema: dict[str, Any]) -> tuple[Any] | None:
    """(the value,) when `schema` (an exact schema) allows exactly one; else None."""
    if "enum" in schema:
        return (schema["enum"][0],) if len(schema["enum"]) == 1 else None
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return None
    if set(schema.get("required", [])) != set(properties):
        return None  # an optional property may be written or not
    values = {name: _only_value(spec) for name, spec in properties.items()}
    if any(value is None for value in values.values()):
        return None
    return ({name: value[0] for name, value in values.items() if value is not None},)


def arguments_grammar(tool: ToolDef, *, required_only: bool = False) -> str:
    """A grammar that admits only JSON matching the tool's parameters exactly (see
    `exact_schema`); a schema the converter cannot express gets an empty object.

    For a small model (`required_only`) it is GBNF where `arguments_gbnf` can write it,
    which spares llguidance's vocabulary index (about 23 MB); llguidance otherwise."""
    parameters = _required_only(tool.parameters) if required_only else tool.parameters
    exact = exact_schema(parameters)
    schema = json.dumps(exact, sort_keys=False)
    key = f"gbnf {schema}" if required_only else schema
    if key in _grammars:
        return _grammars[key]
    if len(_grammars) >= 64:  # schemas with a project's file list change over time
        _grammars.clear()
    grammar = arguments_gbnf(exact) if required_only else None
    if grammar is None:
        engine = importlib.import_module("xllamacpp")
        try:
            grammar = str(engine.json_schema_to_grammar(schema))
        except Exception:  # no call beats a call with invented arguments
            grammar = str(
                engine.json_schema_to_grammar(
                    '{"type": "object", "properties": {}, "additionalProperties": false}'
                )
            )
    _grammars[key] = grammar
    return grammar
