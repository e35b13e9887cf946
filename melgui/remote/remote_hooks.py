"""A remote folder's own hooks, run there: what the loop here (core/hooks/hooks.py) asks
at each point while the person trusts the folder, sent to melgui's host there as
`hooks/run` (core/hooks/there.py runs them) and answered once, across a dropped link.

    there = RemoteHooks(reach, trusted=lambda: trust.is_trusted(url), where="build")
    Hooks(HookFiles(stand_in, project_files=False), cwd="/srv/p", there=there)

A point is sent only when a hook there matches it: the link keeps which events and
matchers the folder has there (asked at the first point, then told by the host there
when its files change: docs/host-protocol.md, "Hooks there"); while the link is down,
or before it was asked, every point is sent.

A point whose hooks there give no answer (the link lost for good, the host there died
while they ran, or not reached at all) comes back as `lost`, in plain words. A point
waits for a link that is reconnecting, as a call does, but SessionEnd (a closing
conversation, a closing window) does not: it is not run then.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from melgui.core.hooks.there import RanThere, ran_there_from_json
from melgui.core.protocol.tooling import HookEvent
from melgui.remote.link import Link, LinkError

# The link and the folder's path there, once reached (raises LinkError when it is not).
Reach = Callable[[], Awaitable[tuple[Link, str]]]


class RemoteHooks:
    def __init__(self, reach: Reach, *, trusted: Callable[[], bool], where: str) -> None:
        self.reach = reach
        self.trusted = trusted
        self.where = where
        self._prefix = "hooks-" + uuid.uuid4().hex[:12]  # unique per run it sends
        self._count = 0
        self._reached: tuple[Link, str] | None = None

    def active(self) -> bool:
        return self.trusted()

    def wanted(self, event: HookEvent, names: Sequence[str]) -> bool:
        if self._reached is None:
            return True  # not asked yet: the first point asks
        link, folder = self._reached
        known = link.hooks_known(folder)
        return known is None or known.wants(event, names)

    async def run(
        self, event: HookEvent, names: Sequence[str], payload: dict[str, Any]
    ) -> RanThere:
        self._count += 1
        try:
            link, folder = await self.reach()
        except LinkError as exc:
            return RanThere(lost=f"the project's {event} hooks on {self.where} did not run: {exc}")
        if event == "SessionEnd" and link.state != "connected":  # closing: no reconnect wait
            return RanThere(lost=f"the project's SessionEnd hooks on {self.where} did not run: "
                            f"the link is down ({link.state})")  # fmt: skip
        if self._reached is None:
            self._reached = link, folder
        known = link.hooks_known(folder) or await link.watch_hooks(folder)
        if known is not None and not known.wants(event, names):
            return RanThere()  # no hook there for this point: nothing to run
        call_id = f"{self._prefix}/{self._count}"
        outcome = await link.run_hooks(call_id, folder, event, list(names), payload)
        found = outcome.get("hooks")
        if outcome.get("status") == "error" or not isinstance(found, dict):
            said = str(outcome.get("content") or "no answer came from the host there")
            return RanThere(lost=said)
        return ran_there_from_json(found, self.where)
