"""The composer's chips and ring, joined to the window: the model chip lists the server's
models (the toolbar's list), the role chip the roles, and the ring follows the status
line's context meter."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtGui import QAction

from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import ROLES, Role
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.window.context_meter import ContextMeter
from melgui.ui.window.toolbar import MODEL_ID_ROLE, ProjectToolbar


class ComposerHost(Protocol):
    chat: ChatView
    toolbar: ProjectToolbar

    @property
    def settings(self) -> Settings: ...

    def set_role(self, role: str) -> None: ...

    def set_model(self, model: str) -> None: ...


def join_composer(window: ComposerHost, meter: ContextMeter) -> None:
    """Wire the chat now shown (a new one comes with each conversation)."""
    card = window.chat.composer
    toolbar = window.toolbar
    card.show_model(toolbar.current_model() or window.settings.model)
    card.show_role(window.settings.role)

    def fill_models() -> None:
        menu = card.model_chip.menu()
        menu.clear()
        box = toolbar.model_box
        current = toolbar.current_model()
        for index in range(box.count()):
            model = box.itemData(index, MODEL_ID_ROLE)
            model = model if isinstance(model, str) else box.itemText(index)
            action = menu.addAction(box.itemText(index))
            action.setCheckable(True)
            action.setChecked(model == current)
            action.triggered.connect(lambda _=False, m=model: choose_model(m))
        if not box.count():
            menu.addAction("No models listed: type one in the toolbar").setEnabled(False)

    def choose_model(model: str) -> None:
        toolbar.set_model(model)
        window.set_model(model)
        card.show_model(model)

    def fill_roles() -> None:
        menu = card.role_chip.menu()
        menu.clear()
        for role in ROLES:
            action: QAction = menu.addAction(role)
            action.setCheckable(True)
            action.setChecked(role == window.settings.role)
            action.triggered.connect(lambda _=False, r=role: choose_role(r))

    def choose_role(role: Role) -> None:
        toolbar.set_role(role)
        window.set_role(role)
        card.show_role(role)

    card.model_chip.menu().aboutToShow.connect(fill_models)
    card.role_chip.menu().aboutToShow.connect(fill_roles)
    toolbar.modelChanged.connect(card.show_model)
    toolbar.roleChanged.connect(card.show_role)

    meter.changed.connect(card.ring.show_fraction)  # dropped with the card's ring
    card.ring.show_fraction(meter.fraction, meter.colour, meter.bar.toolTip())
