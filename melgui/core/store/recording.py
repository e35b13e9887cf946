"""One call to record a session: a new conversation, or a stored one resumed.

store = open_store()
recording = start_recording(store, folder, model=model, role=role,
                            resume_id=options.resume, continue_latest=options.continue_)
session = AgentSession(..., recording.conversation, ..., wire=recording.journal.record_wire)
recording.journal.attach(session)
...
recording.close()        # flushes the journal; the caller closes the store
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from melgui.core.protocol.messages import Conversation
from melgui.core.store.journal import Journal
from melgui.core.store.resume import Resumed, latest_conversation, resume
from melgui.core.store.store import Store


class UnknownConversationError(LookupError):
    """--resume names no stored conversation (or several); the message says which."""


@dataclass
class Recording:
    conversation_id: str
    conversation: Conversation
    journal: Journal
    resumed: Resumed | None = None

    @property
    def notices(self) -> list[str]:
        """One-line messages for the person: a store problem, a repaired history."""
        lines = [self.journal.store.notice] if self.journal.store.notice else []
        if self.resumed is not None and (text := self.resumed.describe()):
            lines.append(text)
        return lines

    def close(self) -> None:
        self.journal.close()


def start_recording(
    store: Store,
    folder: str,
    *,
    model: str = "",
    role: str = "",
    resume_id: str | None = None,
    continue_latest: bool = False,
    on_problem: Callable[[str], None] | None = None,
) -> Recording:
    """Open the conversation to record into: `resume_id` (an id or a unique prefix), else
    the latest of `folder` when `continue_latest`, else a new one.

    Raises UnknownConversationError for a `resume_id` that matches no single conversation.
    """
    cid: str | None = None
    if resume_id:
        cid = resolve_id(store, resume_id)
    elif continue_latest:
        cid = latest_conversation(store, folder)
    if cid is None:
        cid = store.create_conversation(folder, model=model, role=role)
        conversation = Conversation()
        return Recording(
            cid, conversation, Journal(store, cid, conversation, on_problem=on_problem)
        )
    resumed = resume(store, cid)
    store.set_model(cid, model=model or None, role=role or None)
    journal = Journal(
        store,
        cid,
        resumed.conversation,
        stored=resumed.conversation.messages,  # resume left the store holding just these
        on_problem=on_problem,
    )
    return Recording(cid, resumed.conversation, journal, resumed)


def resolve_id(store: Store, text: str) -> str:
    """The conversation whose id is `text` or starts with it (deleted ones included)."""
    matches = store.ids_starting_with(text.strip())
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UnknownConversationError(f"no stored conversation has the id {text!r}")
    raise UnknownConversationError(
        f"{len(matches)} conversations have ids starting with {text!r}; give more characters"
    )
