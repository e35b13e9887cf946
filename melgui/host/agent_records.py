"""An ACP agent's state as the host sends it to views (the `agent` record, a snapshot's
`agent`): what the agent offers besides the chat (modes, models, commands, usage, sign-in
methods), where it is (starting, ready, sign_in, failed) and why it failed.

    record = {"type": "agent", **agent_json(state, phase, failure)}   # in the host
    phase, failure = take_agent(mirror, record)                       # in a view
"""

from __future__ import annotations

from typing import Any, Literal

from melgui.desk.hosted_agents.agent_state import AgentState, Choice

Phase = Literal["starting", "ready", "sign_in", "failed"]
PHASES: tuple[Phase, ...] = ("starting", "ready", "sign_in", "failed")


def agent_json(state: AgentState, phase: Phase, failure: str) -> dict[str, Any]:
    return {
        "phase": phase,
        "failure": failure,
        "state": {
            "name": state.name, "title": state.title, "agent_info": state.agent_info,
            "session_id": state.session_id, "can_load": state.can_load,
            "can_resume": state.can_resume, "mode": state.mode, "model": state.model,
            "model_option": state.model_option, "used": state.used, "size": state.size,
            "modes": _choices(state.modes), "models": _choices(state.models),
            "commands": _choices(state.commands), "auth_methods": _choices(state.auth_methods),
            "plan": [list(entry) for entry in state.plan],
        },
    }  # fmt: skip


def take_agent(state: AgentState, said: dict[str, Any]) -> tuple[Phase, str]:
    """The host's word on the agent into a view's `state` (its listeners told once);
    returns its phase and failure."""
    given = said.get("state") or {}
    for name in ("title", "agent_info", "session_id", "mode", "model", "model_option"):
        setattr(state, name, str(given.get(name) or ""))
    state.can_load, state.can_resume = bool(given.get("can_load")), bool(given.get("can_resume"))
    state.used, state.size = _count(given.get("used")), _count(given.get("size"))
    for name in ("modes", "models", "commands", "auth_methods"):
        choices = [Choice(str(c[0]), str(c[1]), str(c[2])) for c in given.get(name) or []]
        setattr(state, name, choices)
    state.plan = [(str(e[0]), str(e[1])) for e in given.get("plan") or []]
    state.changed()
    phase = said.get("phase")
    return (phase if phase in PHASES else "starting"), str(said.get("failure") or "")


def _choices(choices: list[Choice]) -> list[list[str]]:
    return [[c.id, c.name, c.description] for c in choices]


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, int) else None
