"""The bar over the chat that asks whether to trust a folder, and shows it restricted.

The first time a folder is opened (no decision covers it) the bar asks: Trust folder /
Stay restricted. While the folder is untrusted it says so and what is off, with one
Trust button. A trusted folder shows no bar; File → Restrict this folder (and Settings →
Workers) takes the trust back in one click. The decision lives in melgui's config
(`FolderTrust`), never in the folder.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from melgui.core.config.trust import RESTRICTED, FolderTrust
from melgui.ui.runtime.look.tokens import SPACE_S, SPACE_XS

# Below this many pixels for its text beside the buttons, the bar puts its buttons under
# the text: beside them at 720 px the text wrapped at 165 px into 14 lines, and the bar
# took 234 of the window's 600 px from the chat.
TEXT_BESIDE_MIN = 360


def breakable(path: str) -> str:
    """`path` as rich text that may wrap after each slash, underscore or hyphen: a long
    path would otherwise set the bar's minimum width, and the window's (cut at 720 px)."""
    return re.sub(r"([/_-])", "\\1\u200b", html.escape(path))


class TrustBar(QFrame):
    """Shows the trust of one folder (`set_folder`); `changed(trusted)` after a click."""

    changed = Signal(bool)

    def __init__(self, trust: FolderTrust, folder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trustBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Folder trust")
        self.trust = trust
        self.folder = folder
        self.box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.box.setContentsMargins(SPACE_S, SPACE_XS, SPACE_S, SPACE_XS)
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        self.box.addWidget(self.text, 1)
        self.buttons = QWidget(self)
        row = QHBoxLayout(self.buttons)
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        self.trust_button = QPushButton("Trust folder", self.buttons)
        self.trust_button.setObjectName("trustFolder")
        self.trust_button.clicked.connect(lambda: self.decide(True))
        row.addWidget(self.trust_button)
        self.restrict_button = QPushButton("Stay restricted", self.buttons)
        self.restrict_button.setObjectName("stayRestricted")
        self.restrict_button.clicked.connect(lambda: self.decide(False))
        row.addWidget(self.restrict_button)
        self.box.addWidget(self.buttons)
        self.refresh()

    @property
    def stacked(self) -> bool:
        """Whether the buttons are under the text (a narrow bar), not beside it."""
        return self.box.direction() == QBoxLayout.Direction.TopToBottom

    def resizeEvent(self, event: QResizeEvent) -> None:
        beside = self.buttons.sizeHint().width() + self.box.spacing() + TEXT_BESIDE_MIN
        margins = self.box.contentsMargins()
        narrow = event.size().width() - margins.left() - margins.right() < beside
        direction = QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
        if self.box.direction() != direction:
            self.box.setDirection(direction)
            self.box.activate()  # placed now: the first paint is not drawn side by side
        super().resizeEvent(event)

    @property
    def trusted(self) -> bool:
        return self.trust.is_trusted(self.folder)

    def set_folder(self, folder: str) -> None:
        self.folder = folder
        self.refresh()

    def decide(self, trusted: bool) -> None:
        self.trust.set(self.folder, trusted)
        self.refresh()
        self.changed.emit(trusted)

    def refresh(self) -> None:
        """Show the decision as the config holds it now."""
        off = "; ".join(RESTRICTED)
        if self.trusted:
            self.hide()
            return
        if not self.trust.asked(self.folder):
            self.text.setText(
                f"<b>Do you trust the files in {breakable(self.folder)}?</b> A folder you "
                f"downloaded can run its own code. Until you trust it, these stay off: {off}."
            )
            self.restrict_button.show()
        else:
            self.text.setText(
                f"<b>Restricted folder.</b> Off: {off}. The agent still works, with approvals."
            )
            self.restrict_button.hide()
        self.show()
