"""The composer's model and role chips: what they choose from and the menus they open.

The choice outlives each conversation's composer card (a new card comes with each), so
it is held once per window in `ModelAndRole`: the server's models, the model and the role
in use. `join_chips` shows it on a card and gives the card's chips their menus. The
window listens for `modelPicked` and `rolePicked` (the person chose) and says what
changed elsewhere with `set_model`, `set_models` and `set_role`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import QLineEdit, QMenu, QWidget, QWidgetAction

from melgui.core.protocol.catalog import ROLES, Role
from melgui.core.protocol.transport import ModelInfo, sort_models
from melgui.ui.chat.composer.composer_card import ComposerCard
from melgui.ui.runtime.look.icons import icon
from melgui.ui.runtime.look.tokens import Colors

NO_TOOLS = "This model cannot take tools: the agent can only chat."
ROLE_TOOLS = {
    "assistant": "Files, search, commands, the web, plans and PDFs",
    "worker": "The assistant's tools and the project's shared memory",
    "orchestrator": "The worker's tools and panes: terminals, CLI agents and workers",
}


class ModelAndRole(QObject):
    """The window's model and role, and the models its server offers."""

    modelShown = Signal(str)  # the model in use changed (by anyone)
    roleShown = Signal(str)
    modelPicked = Signal(str)  # the person chose a model (a chip, /model)
    rolePicked = Signal(str)
    refreshRequested = Signal()  # the person asked the server for its models again

    def __init__(self, model: str, role: Role, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.role: Role = role
        self.models: list[ModelInfo] = []  # tool-capable first

    def set_model(self, model: str) -> None:
        if model != self.model:
            self.model = model
            self.modelShown.emit(model)

    def set_models(self, models: list[ModelInfo]) -> None:
        self.models = sort_models(models)

    def set_role(self, role: Role) -> None:
        if role != self.role:
            self.role = role
            self.roleShown.emit(role)

    def pick_model(self, model: str) -> None:
        """The person chose `model`: shown, and the window uses it."""
        self.set_model(model)
        self.modelPicked.emit(model)

    def pick_role(self, role: Role) -> None:
        self.set_role(role)
        self.rolePicked.emit(role)


def model_label(info: ModelInfo) -> str:
    return info.id + ("  (no tools)" if info.supports_tools is False else "")


class ModelMenu(QMenu):
    """The server's models, a field that filters them (or names one the list lacks: Enter
    uses it) and "Refresh the model list"; built afresh each time it opens."""

    def __init__(self, choices: ModelAndRole, colors: Colors, parent: QWidget) -> None:
        super().__init__(parent)
        self.choices = choices
        self.colors = colors
        self.setToolTipsVisible(True)
        self.field: QLineEdit
        self.model_actions: list[QAction]
        self.use_typed: QAction
        self.fill()
        self.aboutToShow.connect(self.fill)

    def fill(self) -> None:
        self.clear()  # and the field: its action owned it
        self.field = QLineEdit()
        self.field.setPlaceholderText("Filter, or type a model id")
        self.field.setAccessibleName("Model id")
        self.field.setClearButtonEnabled(True)
        self.field.textChanged.connect(self._filter)
        self.field.returnPressed.connect(self._enter)
        holder = QWidgetAction(self)
        holder.setDefaultWidget(self.field)
        self.addAction(holder)
        self.model_actions = []
        for info in self.choices.models:
            action = self.addAction(model_label(info))
            action.setData(info.id)
            action.setCheckable(True)
            action.setChecked(info.id == self.choices.model)
            if info.supports_tools is False:
                action.setToolTip(NO_TOOLS)
            action.triggered.connect(lambda _=False, m=info.id: self.choices.pick_model(m))
            self.model_actions.append(action)
        if not self.model_actions:
            self.addAction("The server listed no models: type one above").setEnabled(False)
        self.use_typed = self.addAction("")
        self.use_typed.setVisible(False)
        self.use_typed.triggered.connect(lambda: self._use(self.field.text().strip()))
        self.addSeparator()
        refresh = self.addAction(icon("rotate-ccw", self.colors.muted), "Refresh the model list")
        refresh.setToolTip("Ask the server for its models again")
        refresh.triggered.connect(self.choices.refreshRequested)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.field.setFocus(Qt.FocusReason.PopupFocusReason)  # typing filters at once

    def _filter(self, text: str) -> None:
        typed = text.strip()
        for action in self.model_actions:
            action.setVisible(typed.lower() in str(action.data()).lower())
        known = any(typed == action.data() for action in self.model_actions)
        self.use_typed.setText(f"Use “{typed}”")
        self.use_typed.setVisible(bool(typed) and not known)

    def _enter(self) -> None:
        """Enter: the model named exactly, else the first one shown, else the typed id."""
        typed = self.field.text().strip()
        shown = [str(a.data()) for a in self.model_actions if a.isVisible()]
        exact = [model for model in shown if model == typed]
        chosen = (exact or shown or [typed])[0]
        self._use(chosen)

    def _use(self, model: str) -> None:
        self.close()
        if model:
            self.choices.pick_model(model)


class RoleMenu(QMenu):
    """The roles, each with the tools it sends."""

    def __init__(self, choices: ModelAndRole, parent: QWidget) -> None:
        super().__init__(parent)
        self.choices = choices
        self.setToolTipsVisible(True)
        self.aboutToShow.connect(self.fill)

    def fill(self) -> None:
        self.clear()
        for role in ROLES:
            action = self.addAction(role)
            action.setCheckable(True)
            action.setChecked(role == self.choices.role)
            action.setToolTip(ROLE_TOOLS[role])
            action.triggered.connect(lambda _=False, r=role: self.choices.pick_role(r))


def join_chips(card: ComposerCard, choices: ModelAndRole) -> None:
    """Show `choices` on `card` (a new one comes with each conversation) and give its
    chips their menus; the connections go with the card."""
    card.model_chip.setMenu(ModelMenu(choices, card.colors, card.model_chip))
    card.role_chip.setMenu(RoleMenu(choices, card.role_chip))
    card.show_model(choices.model)
    card.show_role(choices.role)
    choices.modelShown.connect(card.show_model)
    choices.roleShown.connect(card.show_role)


def open_model_menu(card: ComposerCard) -> None:
    """Open the model chip's menu from the keyboard (/model with no id), without waiting."""
    chip = card.model_chip
    menu = chip.menu()
    if not chip.isVisible() or not isinstance(menu, ModelMenu):
        return
    menu.fill()  # to know its height: it opens above the chip, as the chip's own does
    menu.popup(chip.mapToGlobal(QPoint(0, -menu.sizeHint().height())))
