"""Assembling streamed OpenAI-style tool-call fragments into whole calls.

Servers differ (docs/wire-protocol.md §3): fragments normally carry an `index` and the
first one an `id` and a `name`, then the `arguments` arrive in pieces. Some servers
omit `index`, send each call whole in one chunk, reuse index 0 for every call, repeat
the name in every fragment, or send arguments as an object. The rules, in order:

- a fragment whose `id` differs from its slot's id starts a new call;
- with an `index`, the fragment continues the call at that index;
- without an `index`, a known `id` continues that call, a new `id` starts a call, and
  no `id` continues the last call;
- a fragment that brings both a name and arguments to a call whose arguments are
  already complete JSON starts a new call (whole calls sent one after the other
  without ids or distinct indexes).

A call that never got an id gets a unique `call_<hex>` id, stable across `calls()`.
The arguments of all calls together are capped (`max_arguments` characters): a server
that streams them without end gets a MalformedFragment that names the cap.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from melgui.core.protocol import bounded_json
from melgui.core.protocol.events import ToolCall
from melgui.core.transports.http.leg_bounds import MAX_LEG_ARGUMENTS, too_much


class MalformedFragment(ValueError):
    """A tool-call fragment that is not an object of the expected shape."""


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex}"


@dataclass(slots=True)
class _Slot:
    index: int | None
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def arguments_text(self) -> str:
        if len(self.arguments) > 1:
            self.arguments[:] = ["".join(self.arguments)]
        return self.arguments[0] if self.arguments else ""

    def arguments_complete(self) -> bool:
        text = self.arguments_text()
        if not text.strip():
            return True
        try:
            bounded_json.loads(text)
        except bounded_json.JSONTooDeep:
            return True  # whole, only too deep: the call's decode says so to the model
        except ValueError:
            return False
        return True

    def is_empty(self) -> bool:
        return not (self.id or self.name or self.arguments_text())


class ToolCallAssembler:
    """Feed every fragment of a leg with `add`; read the calls with `calls()`."""

    def __init__(
        self, make_id: Callable[[], str] = new_call_id, max_arguments: int = MAX_LEG_ARGUMENTS
    ) -> None:
        self._make_id = make_id
        self._max_arguments = max_arguments
        self._arguments_size = 0
        self._slots: list[_Slot] = []
        self._by_index: dict[int, _Slot] = {}
        self._by_id: dict[str, _Slot] = {}

    @property
    def has_calls(self) -> bool:
        return any(not slot.is_empty() for slot in self._slots)

    def add(self, fragment: object) -> None:
        if not isinstance(fragment, Mapping):
            raise MalformedFragment(f"a tool call fragment is not an object: {fragment!r:.80}")
        index = fragment.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = None
        call_id = fragment.get("id")
        call_id = call_id if isinstance(call_id, str) and call_id else None
        function = fragment.get("function")
        if function is None:
            function = {}
        if not isinstance(function, Mapping):
            raise MalformedFragment(f"a tool call's function is not an object: {function!r:.80}")
        name = function.get("name")
        name = name if isinstance(name, str) and name else None
        arguments = _arguments_piece(function.get("arguments"))

        slot = self._slot_for(index, call_id, name, arguments)
        if call_id and not slot.id:
            slot.id = call_id
            self._by_id[call_id] = slot
        if name:
            slot.name = _merge_name(slot.name, name)
        if isinstance(arguments, str):
            if arguments:
                self._grow(len(arguments))
                slot.arguments.append(arguments)
        elif arguments is not None:
            whole = json.dumps(arguments, ensure_ascii=False)
            self._grow(len(whole))
            slot.arguments[:] = [whole]

    def _grow(self, size: int) -> None:
        self._arguments_size += size
        if self._arguments_size > self._max_arguments:
            raise MalformedFragment(str(too_much("tool-call arguments", self._max_arguments)))

    def _slot_for(
        self, index: int | None, call_id: str | None, name: str | None, arguments: Any
    ) -> _Slot:
        if index is not None:
            slot = self._by_index.get(index)
        elif call_id is not None:
            slot = self._by_id.get(call_id)
            if slot is None:
                return self._new_slot(index)
        else:
            slot = self._slots[-1] if self._slots else None
        if slot is None or self._starts_new_call(slot, call_id, name, arguments):
            return self._new_slot(index)
        return slot

    @staticmethod
    def _starts_new_call(
        slot: _Slot, call_id: str | None, name: str | None, arguments: Any
    ) -> bool:
        if call_id is not None and slot.id and call_id != slot.id:
            return True
        if call_id is None and name and arguments and slot.name and slot.arguments_text():
            return slot.arguments_complete()
        return False

    def _new_slot(self, index: int | None) -> _Slot:
        slot = _Slot(index)
        self._slots.append(slot)
        if index is not None:
            self._by_index[index] = slot
        return slot

    def incomplete(self) -> bool:
        """True when some call's arguments are not (yet) complete JSON."""
        return any(not slot.arguments_complete() for slot in self._slots if not slot.is_empty())

    def calls(self) -> tuple[ToolCall, ...]:
        slots = [slot for slot in self._slots if not slot.is_empty()]
        if all(slot.index is not None for slot in slots):
            slots.sort(key=lambda slot: slot.index or 0)
        result = []
        for slot in slots:
            if not slot.id:
                slot.id = self._make_id()
            arguments = slot.arguments_text()
            result.append(ToolCall(slot.id, slot.name, arguments if arguments.strip() else "{}"))
        return tuple(result)


def _arguments_piece(value: object) -> object:
    """A string piece, a whole object some servers send instead, or None."""
    if value is None or isinstance(value, str | dict | list):
        return value
    return json.dumps(value)


def _merge_name(current: str, piece: str) -> str:
    if not current or piece == current or piece.startswith(current):
        return piece  # first piece, a repeated name, or a cumulative one
    return current + piece
