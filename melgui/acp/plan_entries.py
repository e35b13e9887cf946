"""A write_plan markdown as ACP plan entries: one entry per list item, checkboxes kept."""

from __future__ import annotations

import re
from typing import Literal

from acp.schema import PlanEntry

Status = Literal["pending", "in_progress", "completed"]
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[(?P<mark>[ xX~-])\]\s*)?(?P<text>.+?)\s*$")


def plan_entries(title: str, markdown: str) -> list[PlanEntry]:
    """List items become entries (`[x]` completed, `[~]` or `[-]` in progress, else
    pending); a plan without list items is one entry, its title."""
    entries: list[PlanEntry] = []
    for line in markdown.splitlines():
        match = _ITEM.match(line)
        if match is None:
            continue
        mark = (match.group("mark") or " ").lower()
        status: Status = (
            "completed" if mark == "x" else "in_progress" if mark in "~-" else "pending"
        )
        entries.append(PlanEntry(content=match.group("text"), priority="medium", status=status))
    if not entries:
        entries.append(PlanEntry(content=title, priority="medium", status="pending"))
    return entries
