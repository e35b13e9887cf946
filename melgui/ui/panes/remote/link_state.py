"""The links' state in the status bar: one word per machine in use, and what it does now.

    indicator = LinkState(status_bar)
    indicator.show_state("build", "reconnecting to build (attempt 2)")

connected → "build ✓ connected"; reconnecting (with backoff) → "build ⟳ reconnecting
(attempt 2)"; lost → "build ✕ connection lost"; trouble in the theme's error colour. The
tooltip says what each means.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from melgui.ui.runtime.theme import LIGHT, Colors

_MEANING = {
    "connected": "connected: tools and terminals run there",
    "reconnecting": "reconnecting with backoff: calls and terminals go on there, and what "
    "they did meanwhile shows once it is back",
    "lost": "connection lost: open calls got their result saying so; programs may still run there",
    "connecting": "connecting (ssh may ask you something)",
}


def words(state: str) -> tuple[str, str]:
    """(short word, its kind) for a link's state text."""
    if state == "connected":
        return "✓ connected", "connected"
    if state.startswith("reconnecting"):
        attempt = state[state.find("(") :] if "(" in state else ""
        return f"⟳ reconnecting {attempt}".strip(), "reconnecting"
    if state == "lost":
        return "✕ connection lost", "lost"
    return "… connecting", "connecting"


class LinkState(QLabel):
    def __init__(self, parent: QWidget | None = None, colors: Colors = LIGHT) -> None:
        super().__init__(parent)
        self.setObjectName("linkState")
        self.colors = colors
        self.states: dict[str, str] = {}
        self.hide()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self._colour()

    def show_state(self, host: str, state: str) -> None:
        self.states[host] = state
        parts, tips, worst = [], [], ""
        for name, text in self.states.items():
            word, kind = words(text)
            parts.append(f"{name} {word}")
            tips.append(f"{name}: {_MEANING[kind]}")
            if kind == "lost" or (kind == "reconnecting" and worst != "lost"):
                worst = kind
        self.setText("  ·  ".join(parts))
        self.setToolTip("\n".join(tips))
        self.setProperty("trouble", worst)
        self._colour()
        self.show()

    def _colour(self) -> None:
        trouble = self.property("trouble")
        self.setStyleSheet(f"color: {self.colors.error};" if trouble else "")
