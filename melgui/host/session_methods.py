"""The methods a window's main conversation in the host needs beyond a worker's (protocol
10): Rewind to one of its messages (its calls' checkpoints put back and its list cut, in
one step, by desk.rewind as a window does its own), the context's measure and breakdown
(core.context.measure: the host measures, the view draws), and its pinned facts.
HostServer takes them into its method table.

    handlers = {**SessionMethods(host).methods(), ...}
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from melgui.core.context.breakdown import next_request
from melgui.core.context.measure import breakdown_to_json, measure, measure_to_json
from melgui.core.store.checkpoints.restore import CHOICES
from melgui.core.store.checkpoints.shadow import GitError
from melgui.core.store.checkpoints.versions import conflict_versions
from melgui.desk.desk import Desk
from melgui.desk.rewind import plan_rewind, rewind
from melgui.host import wire
from melgui.host.host import Host
from melgui.host.session import HostedSession
from melgui.host.wire import RpcError

if TYPE_CHECKING:
    from melgui.host.server import ViewConnection

Method = Callable[["ViewConnection", dict[str, Any]], Awaitable[Any]]


class SessionMethods:
    def __init__(self, host: Host) -> None:
        self.host = host

    def methods(self) -> dict[str, Method]:
        return {
            "session/rewind": self._rewind,
            "context/measure": self._measure,
            "context/pin": self._pin,
            "context/unpin": self._unpin,
        }

    async def _rewind(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Rewind to before user message `index` (`text`: its words, as the view shows
        them, so a list another view changed meanwhile is not cut in the wrong place):
        the files its calls and the later ones changed put back (a file changed since by
        someone else keeps its current version unless `choices` says otherwise), and with
        `continue`, the conversation cut back to before it, the model told with the next
        message. `plan_only`: which files it would put back and which conflict (with
        their versions as text), touching nothing."""
        session = self.host.session(params["session"])
        index, choices = params.get("index"), params.get("choices") or {}
        if not isinstance(index, int):
            raise RpcError(wire.INVALID_PARAMS, f"index is a message's number, not {index!r}")
        if not isinstance(choices, dict) or not set(choices.values()) <= set(CHOICES):
            raise RpcError(wire.INVALID_PARAMS, f"choices maps a path to one of {CHOICES}")
        messages = session.agent.conversation.messages
        text = params.get("text")
        if text is not None and (index >= len(messages) or messages[index].content != text):
            raise RpcError(wire.INVALID_PARAMS, "the conversation changed: that message moved")
        checkpoints = _desk_of(session).checkpoints
        try:
            plan = await plan_rewind(checkpoints, messages, index)
            if params.get("plan_only"):
                return {
                    "text": plan.text,
                    "files": [p.path for p in plan.restore.paths if not p.settled],
                    "conflicts": [p.path for p in plan.restore.conflicts],
                    "versions": await conflict_versions(checkpoints, plan.restore.conflicts),
                    "busy": session.busy,
                }
            done = await rewind(checkpoints, session.agent, plan, choices,
                                continue_from_there=bool(params.get("continue")))  # fmt: skip
        except (ValueError, RuntimeError) as exc:  # not a user message; a turn runs
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        except (GitError, OSError) as exc:
            raise RpcError(wire.INTERNAL_ERROR, f"could not rewind: {exc}") from exc
        return {
            "restored": done.id if done is not None else None,
            "files": sorted({change.path for change in done.files}) if done else [],
            "conflicts": [p.path for p in plan.restore.conflicts],
            "skipped": list(checkpoints.skipped),
        }

    async def _measure(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The context meter's numbers for the session (`as_sent`: as the loop measured
        the leg that just went); with `breakdown`, what the next request's tokens are
        spent on too (the meter's popup)."""
        session = self.host.session(params["session"])
        agent = session.agent
        answer = measure_to_json(measure(agent, as_sent=bool(params.get("as_sent"))))
        if params.get("breakdown"):
            answer["breakdown"] = breakdown_to_json(next_request(agent))
        return answer

    async def _pin(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The person pins a fact (the model reads it with the next message); the views
        see it in the thread's state. `pinned`: false when blank or pinned already."""
        text = params["text"]
        if not isinstance(text, str):
            raise RpcError(wire.INVALID_PARAMS, "text is the fact to pin")
        return {"pinned": self.host.session(params["session"]).agent.pin(text)}

    async def _unpin(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        text = params["text"]
        if not isinstance(text, str):
            raise RpcError(wire.INVALID_PARAMS, "text is the pinned fact")
        return {"unpinned": self.host.session(params["session"]).agent.unpin(text)}


def _desk_of(session: HostedSession) -> Desk:
    if session.desk is None:
        raise RpcError(wire.INVALID_PARAMS, "this session keeps no checkpoints here")
    return session.desk
