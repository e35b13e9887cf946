"""What the Settings dialog is given: past run_command commands for the rule editor."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from typing import Any


def past_commands(records: Iterable[Any], store: Any, report: Callable[[str], None]) -> list[str]:
    """Past run_command commands, newest first, once each: this conversation's (from the
    inspector's call records), then the stored ones of every kept conversation."""
    current = [
        str(record.arguments.get("command"))
        for record in records
        if record.call.name == "run_command" and record.arguments
    ]
    stored: list[str] = []
    if store is not None:
        try:
            stored = store.recent_commands()
        except sqlite3.Error as exc:
            report(f"History: cannot read past commands: {exc}")
    return list(dict.fromkeys([*reversed(current), *stored]))
