"""A window's approval settings, as it sends them to a session it runs in a melgui host
(`settings/update`'s `approval`): the per-tool modes and the rules of every project and of
this one, which the host's policy for that session takes in place of its own settings
file's, so the host asks exactly when the window would.

    approval = approval_of(window_policy)            # the window's, as JSON
    problems = apply_approval(session_policy, approval)  # the host's, in place
"""

from __future__ import annotations

from typing import Any, cast, get_args

from melgui.core.agent.policy import RulePolicy
from melgui.core.agent.rule_scopes import parse_rules, rule_lines
from melgui.core.protocol.catalog import Mode


def approval_of(policy: RulePolicy) -> dict[str, Any]:
    """The modes and the lasting rules of `policy` (a conversation's own rules are its
    session's: learned where it runs)."""
    book = policy.book
    return {
        "modes": dict(sorted(policy.modes.items())),
        "rules": rule_lines(book.everywhere),
        "project_rules": rule_lines(book.project),
    }


def apply_approval(policy: RulePolicy, approval: dict[str, Any]) -> list[str]:
    """Put `approval` into `policy`, in place (the lists its desk's policies share: a
    desk of one session's own, or this machine's for the folder, whose settings file is
    the window's own). Returns the rules that could not be read. Raises ValueError for
    what is not an approval."""
    modes = approval.get("modes", {})
    rules, project = approval.get("rules", []), approval.get("project_rules", [])
    if not isinstance(modes, dict) or not all(m in get_args(Mode) for m in modes.values()):
        raise ValueError(f"modes map a tool to one of {get_args(Mode)}")
    lines = (rules, project)
    if not all(isinstance(x, list) and all(isinstance(r, str) for r in x) for x in lines):
        raise ValueError("rules and project_rules are lists of rule lines")
    everywhere, problems = parse_rules(rules, "everywhere")
    here, more = parse_rules(project, "project")
    policy.modes.clear()
    policy.modes.update({str(k): cast(Mode, v) for k, v in modes.items()})
    policy.book.everywhere[:] = everywhere
    policy.book.project[:] = here
    return problems + more
