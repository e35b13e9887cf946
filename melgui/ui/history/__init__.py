"""The history sidebar: stored conversations of the project folder (melgui.core.store)."""

from melgui.ui.history.conversations import ConversationHistory
from melgui.ui.history.sidebar import HistorySidebar

__all__ = ["ConversationHistory", "HistorySidebar"]
