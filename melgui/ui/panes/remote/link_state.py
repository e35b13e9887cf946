"""The links' state in the status bar: one word per machine in use, and what it does now.

    indicator = LinkState(status_bar)
    indicator.show_state("build", "reconnecting to build (attempt 2)")

connected → "build ✓ connected"; reconnecting (with backoff) → "build ⟳ reconnecting
(attempt 2)"; lost → "build ✕ connection lost", in the theme's warning colour. The tooltip
says what each means.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

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
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("linkState")
        self.states: dict[str, str] = {}
        self.hide()

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
        self.setStyleSheet("color: #b3261e;" if worst else "")
        self.show()
