"""pin_fact: melgui's own tool (not in the relay's seed list), documented in
docs/tools.md beside the seed definitions. A pinned fact is kept word for word at every
compaction of the conversation; pinning writes only the conversation's own state."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

PIN_LIMIT = 500  # characters of one pinned fact: a fact, not a document

PIN_FACT = ToolDef(
    "pin_fact",
    'Pin a fact this conversation must never lose (a decision, a constraint: "the API '
    'is v2; never edit generated/"). Pinned facts are kept word for word every time the '
    "older conversation is summarised to fit the context window; the person sees them "
    "and can unpin them.",
    {"type": "object", "required": ["fact"], "properties": {"fact": {"type": "string"}}},
    summary_argument="fact",
    touches_files=False,
    state_only=True,
)
