"""The checkpoints of a main conversation that runs in the melgui host: the host takes them
around its calls, so the call cards, the review bar and Undo ask it, as a remote folder's
cards ask that folder's host (the same `checkpoint/*` methods, through `CheckpointsThere`),
and Rewind is the host's `session/rewind`: its files and its list in one step, there.
A remote folder's `/changes` and `/review` ask its host there through it too, when the
main conversation runs there (melgui/ui/window/review_command.py `there_of`).

    hosted = HostedCheckpoints(session)            # a RestoresThere, for CheckpointsThere
    planned = await hosted.rewind(index, plan_only=True)
"""

from __future__ import annotations

from typing import Any

from melgui.host.client import HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.remote.link import LinkError


class HostedCheckpoints:
    """`session`'s checkpoints, asked of its host; a failure is a LinkError in plain words
    (what the checkpoint actions say of a remote folder's host that cannot be asked)."""

    def __init__(self, session: RemoteSession) -> None:
        self.session = session

    async def ask_there(self, method: str, **params: Any) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = await self.session.ask_folder(method, **params)
        except (HostGone, OSError, RpcError) as exc:
            raise LinkError(f"the melgui host did not answer: {exc}") from exc
        return answer

    async def restore_checkpoints(
        self, calls: list[str], plan_only: bool, choices: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return await self.ask_there(
            "checkpoint/restore", calls=calls, plan_only=plan_only, choices=choices or {}
        )

    async def rewind(
        self,
        index: int,
        *,
        plan_only: bool,
        choices: dict[str, str] | None = None,
        continue_from_there: bool = False,
    ) -> dict[str, Any]:
        """Rewind to before user message `index` of the list shown, in the host (see
        `session/rewind`): `plan_only` says what it would put back, touching nothing."""
        session = self.session
        text = session.conversation.messages[index].content
        try:
            answer: dict[str, Any] = await session.ask(
                "session/rewind", index=session.host_index(index), text=text,
                plan_only=plan_only, choices=choices or {}, **{"continue": continue_from_there},
            )  # fmt: skip
        except (HostGone, OSError, RpcError) as exc:
            raise LinkError(f"the melgui host did not rewind: {exc}") from exc
        return answer
