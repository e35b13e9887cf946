"""What answering a waiting call offers, wherever it is shown: the keys of Allow and Deny,
and the "Always allow" choices its judgement proposes.

"Always allow" adds, for this conversation, this project or everywhere, the rules the
asking policy proposes: for a command, one rule per asked part (never one for the whole
line); when a part cannot be covered by a rule there are no choices, and `why_not` says
why. Read from the call's one judgement (the thread keeps it): never judged again here.

Keyboard: APPROVE_KEYS allows and DENY_KEYS denies (with the reason typed, if any); the
window installs those shortcuts once, so a card's labels only show them.
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from melgui.core.protocol.approval import Remember
from melgui.core.protocol.judgement import Judgement

APPROVE_KEYS = QKeySequence("Ctrl+Return")
DENY_KEYS = QKeySequence("Ctrl+Shift+Backspace")
ALWAYS: tuple[Remember, ...] = ("session", "project", "saved")


def keys_text(sequence: QKeySequence) -> str:
    return sequence.toString(QKeySequence.SequenceFormat.NativeText)


def always_choices(tool: str, judgement: Judgement) -> list[tuple[Remember, str]]:
    """(remember, words) of each "Always allow" choice; none when no rule covers the call."""
    rules = judgement.always.get("conversation", ())
    if not rules:
        return []
    if tool == "run_command":
        what = "commands " + " and ".join(f"“{r.pattern}”" for r in rules)
    else:
        what = f"{tool} calls"
    return [
        ("session", f"Allow {what} for this conversation"),
        ("project", f"Allow {what} in this project (saved)"),
        ("saved", f"Allow {what} everywhere (saved)"),
    ]


def why_not(judgement: Judgement) -> str:
    """Why "Always allow" offers nothing for this call."""
    if judgement.learns:
        return (
            "No rule can cover this call: a part is outside the project, computed when it "
            "runs, or not readable. Allow it once, or deny it."
        )
    return "The policy that asks keeps no rules."
