"""Checking a model's tool arguments: each mistake becomes a one-line ToolError."""

from __future__ import annotations

from typing import Any

from melgui.core.protocol.tooling import ToolError

_JSON_TYPE = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _type_name(value: object) -> str:
    return _JSON_TYPE.get(type(value), type(value).__name__)


def require_str(arguments: dict[str, Any], name: str) -> str:
    if name not in arguments or arguments[name] is None:
        raise ToolError(f"Missing required argument {name!r} (a string).")
    return _as_str(arguments[name], name)


def optional_str(arguments: dict[str, Any], name: str, default: str) -> str:
    value = arguments.get(name)
    if value is None:
        return default
    return _as_str(value, name)


def _as_str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise ToolError(f"Argument {name!r} must be a string, not {_type_name(value)}.")
    return value


def optional_int(
    arguments: dict[str, Any], name: str, default: int | None, *, minimum: int = 0
) -> int | None:
    value = arguments.get(name)
    if value is None:
        return default
    # JSON has one number type: 10.0 is an integer in disguise; true is not.
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"Argument {name!r} must be an integer, not {_type_name(value)}.")
    if value < minimum:
        raise ToolError(f"Argument {name!r} must be at least {minimum}, got {value}.")
    return value


def optional_bool(arguments: dict[str, Any], name: str, default: bool) -> bool:
    value = arguments.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ToolError(f"Argument {name!r} must be true or false, not {_type_name(value)}.")
    return value
