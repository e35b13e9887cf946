"""What the plan view sends when the person approves a plan or comments on it (plan mode
itself, the refusal of changing tools, is melgui.core.agent.plan_mode)."""

from __future__ import annotations


def approved_prompt(title: str, markdown: str) -> str:
    """The message that starts the work once the person approves a plan."""
    return (
        f"The plan “{title}” is approved. Plan mode is off: carry it out now.\n\n{markdown.strip()}"
    )


def revise_prompt(title: str, comment: str) -> str:
    """The message that sends the person's comment on a plan back, still in plan mode."""
    return (
        f"Revise the plan “{title}”; the person's comment:\n\n{comment.strip()}\n\n"
        "Write the revised plan with write_plan."
    )
