"""The history sidebar: stored conversations of the project folder (melgui.core.store)."""

from melgui.ui.history.install import install_history
from melgui.ui.history.sidebar import HistorySidebar

__all__ = ["HistorySidebar", "install_history"]
