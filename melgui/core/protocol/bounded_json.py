"""JSON decoding with a nesting cap, for everything a model or a server sends.

`json.loads` recurses once per level: arguments nested 100,000 deep raise RecursionError,
which no caller expects, and a value a few thousand levels deep makes every later walk
over it (the policy, the store, an export) recurse as well. `loads` turns both into
JSONTooDeep, a ValueError, so a caller that handles malformed JSON handles this too.

A lone UTF-16 surrogate (`"\\ud800"` with no partner) is valid JSON but no text: the
first write of it (a terminal, the history database, a file) raises UnicodeEncodeError.
`loads` makes each one U+FFFD, in keys and values; a proper pair stays the character.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_JSON_DEPTH = 256
_SURROGATE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")  # a surrogate, escaped, in the JSON
_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE = re.compile("[\ud800-\udfff]")  # what is left of one after decoding is alone


class JSONTooDeep(ValueError):
    """Decoded JSON nested deeper than the cap."""

    def __init__(self, limit: int = MAX_JSON_DEPTH) -> None:
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


def loads(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads`, raising JSONTooDeep past `max_depth` levels of arrays and objects."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    if isinstance(text, str):
        # A text shorter than the cap cannot open more levels than it: most need no count.
        deep = len(text) > max_depth and text.count("[") + text.count("{") > max_depth
        escaped = "\\u" in text and _SURROGATE_TEXT.search(text) is not None
    else:
        deep = len(text) > max_depth and text.count(b"[") + text.count(b"{") > max_depth
        escaped = b"\\u" in text and _SURROGATE_BYTES.search(text) is not None
    if deep and depth_of(value, max_depth) > max_depth:
        raise JSONTooDeep(max_depth)
    return _whole_text(value) if escaped else value


def needs_a_closer_look(text: str, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """Whether `loads` would do more with `text` than `json.loads` does: count its
    nesting, or look for a lone surrogate. Most texts need neither."""
    deep = len(text) > max_depth and text.count("[") + text.count("{") > max_depth
    return deep or ("\\u" in text and _SURROGATE_TEXT.search(text) is not None)


def _whole_text(value: Any) -> Any:
    """`value` with every lone surrogate in its strings made U+FFFD (depth is capped)."""
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole_text(item) for item in value]
    if isinstance(value, dict):
        return {_whole_text(key): _whole_text(item) for key, item in value.items()}
    return value


def depth_of(value: Any, stop: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of a decoded value (a scalar is 0), counted no further than stop + 1."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        if level > deepest:
            deepest = level
            if deepest > stop:
                return deepest
        pending.extend((child, level) for child in children if isinstance(child, dict | list))
    return deepest
