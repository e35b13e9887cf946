"""Where an approval rule lives, and what the window calls each place (the rules
themselves are melgui.core.rules.rule_scopes')."""

from __future__ import annotations

from typing import Literal, get_args

Scope = Literal["conversation", "project", "everywhere"]
SCOPES: tuple[Scope, ...] = get_args(Scope)

SCOPE_LABEL: dict[Scope, str] = {
    "conversation": "this conversation",
    "project": "this project",
    "everywhere": "everywhere",
}
