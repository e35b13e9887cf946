"""The composer: one rounded card holding the prompt box, the chips for the model and the
role, attaching, `@` and `/`, a small context ring, and one button that sends, and stops
while the agent runs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from melgui.ui.chat.composer.chip import Chip
from melgui.ui.chat.composer.input_box import PromptInput
from melgui.ui.runtime.look.icons import icon, icon_button, name_icon
from melgui.ui.runtime.look.tokens import (
    CONTROL_H,
    FOCUS_RING,
    ICON,
    SPACE_S,
    SPACE_XS,
    Colors,
)


class ContextRing(QWidget):
    """How full the context window is, as a small ring; its tooltip says the numbers."""

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.fraction: float | None = None
        self.colour = colors.muted
        self.setFixedSize(ICON + SPACE_XS, ICON + SPACE_XS)
        self.setAccessibleName("Context used")
        self.setToolTip("Context: nothing sent yet")

    def show_fraction(self, fraction: float | None, colour: str, tooltip: str) -> None:
        self.fraction, self.colour = fraction, colour
        self.setToolTip(tooltip)
        self.setAccessibleDescription(tooltip.split("\n", 1)[0])
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        inset = FOCUS_RING
        rect = QRectF(self.rect()).adjusted(inset, inset, -inset, -inset)
        painter.setPen(QPen(QColor(self.colors.border), FOCUS_RING))
        painter.drawEllipse(rect)
        if self.fraction:
            pen = QPen(QColor(self.colour), FOCUS_RING)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            span = -int(min(1.0, self.fraction) * 360 * 16)
            painter.drawArc(rect, 90 * 16, span)
        painter.end()


class ComposerCard(QFrame):
    """The owner gives the chips their menus (choices.py's `join_chips`), says what they
    show (`show_model`, `show_role`) and whether the agent runs (`set_busy`)."""

    sendRequested = Signal()
    stopRequested = Signal()

    def __init__(self, prompt: PromptInput, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setProperty("role", "card")
        self.prompt = prompt
        self.colors = colors
        prompt.setFrameShape(QFrame.Shape.NoFrame)
        prompt.setProperty("role", "bare")
        self.model_chip = Chip("cpu", "Model", colors, self)
        self.chosen_model = self.answering_model = ""
        self.role_chip = Chip("bot", "Role", colors, self)
        self.role_chip.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.attach_button = icon_button("paperclip", "Attach a file or an image", colors.muted)
        self.attach_button.clicked.connect(self._choose_file)
        self.mention_button = icon_button("at-sign", "Mention a file", colors.muted, keys="@")
        self.mention_button.clicked.connect(lambda: prompt.start_token("@"))
        self.command_button = icon_button("square-slash", "Run a command", colors.muted, keys="/")
        self.command_button.clicked.connect(lambda: prompt.start_token("/"))
        self.ring = ContextRing(colors, self)
        self.send_button = self._round_button("arrow-up", "Send", "Enter")
        self.send_button.clicked.connect(self.sendRequested)
        self.stop_button = self._round_button("square", "Stop", "Esc")
        self.stop_button.setToolTip(
            "Stop (Esc): the running request and tool stop; the conversation stays valid"
        )
        self.stop_button.clicked.connect(self.stopRequested)
        self.stop_button.setEnabled(False)
        self.stop_button.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(SPACE_XS)
        for widget in (
            self.model_chip,
            self.role_chip,
            self.attach_button,
            self.mention_button,
            self.command_button,
        ):
            row.addWidget(widget)
        row.addStretch(1)
        row.addWidget(self.ring)
        row.addWidget(self.send_button)
        row.addWidget(self.stop_button)
        # Chips show once the owner says what they hold; `@` and `/` need a project's kit.
        self.model_chip.hide()
        self.role_chip.hide()
        for button in (self.mention_button, self.command_button):
            button.setVisible(prompt.kit is not None)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_S, SPACE_S, SPACE_S)
        layout.setSpacing(SPACE_XS)
        layout.addWidget(prompt)
        layout.addLayout(row)

    # -- the role's words give way at the least width ------------------------------------

    def minimumSizeHint(self) -> QSize:
        """The row's least width with the role chip's words left out: at the window's
        least width (720 px, both docks shown) the row would push the window wider."""
        hint = super().minimumSizeHint()
        role = self.role_chip
        if role.isVisibleTo(self) and role.words_shown:
            return QSize(hint.width() - role.words_width(), hint.height())
        return hint

    def resizeEvent(self, event: QResizeEvent) -> None:
        """The role chip draws its words when the card has room for the whole row."""
        super().resizeEvent(event)
        role = self.role_chip
        whole = super().minimumSizeHint().width()
        if not role.words_shown:
            whole += role.words_width()
        role.show_words_drawn(self.width() >= whole)

    def _round_button(self, icon_name: str, words: str, keys: str) -> QPushButton:
        button = QPushButton(self)
        button.setProperty("role", "send")
        button.setIcon(icon(icon_name, self.colors.accent, self.colors.muted))
        button.setIconSize(QSize(ICON, ICON))
        button.setFixedSize(CONTROL_H, CONTROL_H)
        name_icon(button, words, keys=keys)
        return button

    def set_busy(self, busy: bool) -> None:
        """While the agent runs the one button stops it; then it sends again."""
        self.stop_button.setEnabled(busy)
        self.stop_button.setVisible(busy)
        self.send_button.setVisible(not busy)

    def show_model(self, model: str) -> None:
        """The model chosen ("": none, the connection's default answers)."""
        self.chosen_model = model
        self._name_model()
        self.model_chip.show()

    def name_answerer(self, name: str) -> None:
        """Which model answers: what the chip says while none is chosen (it said "Model"
        while the prompt box and the line over it named the built-in model)."""
        self.answering_model = name
        self._name_model()

    def _name_model(self) -> None:
        chosen, answering = self.chosen_model, self.answering_model
        self.model_chip.show_words(chosen or answering or "Model")
        if chosen or not answering:
            tip = f"Model: {chosen or 'none chosen'}. Click to choose another"
        else:
            tip = f"Model: none chosen, {answering} answers. Click to choose one"
        self.model_chip.setToolTip(tip)

    def show_role(self, role: str) -> None:
        self.role_chip.show_words(role)
        self.role_chip.show()
        self.role_chip.setToolTip(f"Role: {role} (which tools the model gets). Click to change")

    def set_colors(self, colors: Colors) -> None:
        """Tint the icons for a new theme (the stylesheet does the rest)."""
        self.colors = colors
        self.model_chip.set_colors(colors)
        self.role_chip.set_colors(colors)
        for button, name in (
            (self.attach_button, "paperclip"),
            (self.mention_button, "at-sign"),
            (self.command_button, "square-slash"),
        ):
            button.setIcon(icon(name, colors.muted))
        self.send_button.setIcon(icon("arrow-up", colors.accent, colors.muted))
        self.stop_button.setIcon(icon("square", colors.accent, colors.muted))
        self.ring.colors = colors
        self.ring.update()

    def _choose_file(self) -> None:
        kit = self.prompt.kit
        folder = kit.folder if kit is not None else ""
        path, _ = QFileDialog.getOpenFileName(self, "Attach a file or an image", folder)
        if path:
            self.prompt.attach_path(Path(path))
