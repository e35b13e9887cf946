"""GBNF for a tool's exact arguments schema (see `plan.exact_schema`), for small models.

The engine's own converter gives an llguidance grammar, whose first use builds a token
index of the whole vocabulary: about 23 MB that stays for the life of the process, a
twelfth of what SmolLM2-135M's turn needs. llama.cpp's GBNF sampler needs no index.
This covers what `exact_schema` makes of melgui's tools: objects (required properties
first, the optional ones in order), bounded strings and the confined-path pattern,
enums, integers, numbers, booleans, bounded arrays and anyOf. Anything else gives None,
and the caller keeps the llguidance grammar.
"""

from __future__ import annotations

import json
from typing import Any

from melgui.core.transports.local.project import CONFINED_PATH

# One path segment and at most this many below one another, as CONFINED_PATH allows.
PATH_RULES = r"""path ::= segment ("/" segment){0,15}
segment ::= "."? [A-Za-z0-9_-] [A-Za-z0-9_.-]{0,63}
"""
BASE_RULES = r"""ws ::= [ ]?
char ::= [^"\\\x00-\x1f] | "\\" ["\\/bfnrt]
integer ::= "-"? [0-9]{1,15}
number ::= "-"? [0-9]{1,15} ("." [0-9]{1,10})?
boolean ::= "true" | "false"
"""


class _Unsupported(Exception):
    pass


def _literal(text: str) -> str:
    """A GBNF string literal matching `text` exactly."""
    escaped = "".join(
        "\\\\" if c == "\\" else '\\"' if c == '"' else c if " " <= c <= "~" else f"\\x{ord(c):02x}"
        for c in text
    )
    if any(ord(c) > 0xFF for c in text):
        raise _Unsupported("a character beyond \\xff")
    return f'"{escaped}"'


class _Rules:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self.path = False

    def add(self, body: str) -> str:
        name = f"r{len(self.rules)}"
        self.rules[name] = body
        return name

    def value(self, schema: dict[str, Any]) -> str:
        if "enum" in schema:
            values = schema["enum"]
            if not values:
                raise _Unsupported("an empty enum")
            return self.add(" | ".join(_literal(json.dumps(v)) for v in values))
        if "anyOf" in schema:
            return self.add(" | ".join(self.value(option) for option in schema["anyOf"]))
        kind = schema.get("type")
        if kind == "object":
            return self.object(schema)
        if kind == "string":
            return self.string(schema)
        if kind == "array":
            items = schema.get("items")
            if not isinstance(items, dict):
                raise _Unsupported("an array without an item schema")
            item = self.value(items)
            more = max(int(schema.get("maxItems", 16)) - 1, 0)
            return self.add(f'"[" ws ({item} ("," ws {item}){{0,{more}}})? ws "]"')
        if kind in ("integer", "number", "boolean"):
            return str(kind)
        raise _Unsupported(f"type {kind!r}")

    def string(self, schema: dict[str, Any]) -> str:
        pattern = schema.get("pattern")
        if pattern == CONFINED_PATH:
            self.path = True
            return self.add(r'"\"" path "\""')
        if pattern is not None:
            raise _Unsupported("a pattern")
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", 200))
        return self.add(f'"\\"" char{{{low},{high}}} "\\""')

    def object(self, schema: dict[str, Any]) -> str:
        properties: dict[str, Any] = schema.get("properties") or {}
        required = [key for key in schema.get("required", []) if key in properties]
        optional = [key for key in properties if key not in required]
        pair = {
            key: f'{_literal(json.dumps(key))} ws ":" ws {self.value(properties[key])}'
            for key in properties
        }
        later = [f' ("," ws {pair[key]})?' for key in optional]
        if required:
            body = ' "," ws '.join(pair[key] for key in required) + "".join(later)
        else:  # any of the optional ones first, then any later ones, in order
            firsts = [pair[key] + "".join(later[i + 1 :]) for i, key in enumerate(optional)]
            body = f"({' | '.join(firsts)})?" if firsts else ""
        return self.add(f'"{{" ws {body} ws "}}"' if body else '"{" ws "}"')


def arguments_gbnf(schema: dict[str, Any]) -> str | None:
    """GBNF admitting exactly the JSON that `schema` (an exact schema) allows, or None."""
    rules = _Rules()
    try:
        top = rules.value(schema)
    except (_Unsupported, TypeError, ValueError):
        return None
    lines = [f"root ::= {top}"] + [f"{name} ::= {body}" for name, body in rules.rules.items()]
    return "\n".join(lines) + "\n" + BASE_RULES + (PATH_RULES if rules.path else "")
