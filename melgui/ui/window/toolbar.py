"""The toolbar: project folder, role, plan mode, model (from the server's list), connection,
settings; and the composer's chips joined to it (the model chip lists the toolbar's
models, the role chip the roles) and its ring to the status line's context meter."""

from __future__ import annotations

import os
from typing import Literal, Protocol

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar, QToolButton, QWidget

from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import ROLES, Role
from melgui.core.protocol.transport import ModelInfo, sort_models
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.runtime.theme import Colors
from melgui.ui.window.context_meter import ContextMeter

ConnectionState = Literal["unknown", "ok", "error", "busy"]
MODEL_ID_ROLE = Qt.ItemDataRole.UserRole


class ProjectToolbar(QToolBar):
    folderRequested = Signal()
    roleChanged = Signal(str)
    modelChanged = Signal(str)
    refreshModels = Signal()
    settingsRequested = Signal()
    planToggled = Signal(bool)

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__("Project", parent)
        self.colors = colors
        self.setObjectName("projectToolbar")  # saveState() keys toolbars by name
        self.setMovable(False)
        # The folder's name is the button (the window title has the whole path).
        self.folder_button = QToolButton(self)
        self.folder_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.folder_button.setAccessibleName("Project folder")
        self.folder_button.clicked.connect(self.folderRequested)
        self.addWidget(self.folder_button)
        self.addSeparator()
        self.role_box = QComboBox(self)
        self.role_box.addItems(list(ROLES))
        self.role_box.setToolTip("Which tool set the next leg sends")
        self.role_box.setAccessibleName("Role")
        self.role_box.currentTextChanged.connect(self.roleChanged)
        self.addWidget(QLabel(" Role ", self))
        self.addWidget(self.role_box)
        self.plan_button = QToolButton(self)
        self.plan_button.setText("Plan")
        self.plan_button.setCheckable(True)
        self.plan_button.setToolTip(
            "Plan mode for this conversation: the agent only reads and writes a plan "
            "until you approve it (/plan)"
        )
        self.plan_button.setAccessibleName("Plan mode")
        self.plan_button.toggled.connect(self.planToggled)
        self.addWidget(self.plan_button)
        self.model_box = QComboBox(self)
        self.model_box.setEditable(True)
        self.model_box.setMinimumContentsLength(22)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_box.setToolTip(
            "Model for the next leg, from this server's list (remembered per connection)"
        )
        self.model_box.setAccessibleName("Model")
        self.model_box.activated.connect(self._model_picked)
        line = self.model_box.lineEdit()
        if line is not None:
            line.editingFinished.connect(self._model_typed)
        self.addWidget(QLabel(" Model ", self))
        self.addWidget(self.model_box)
        refresh = QToolButton(self)
        refresh.setText("⟳")
        refresh.setToolTip("Ask the server for its models again")
        refresh.setAccessibleName("Refresh the model list")
        refresh.clicked.connect(self.refreshModels)
        self.addWidget(refresh)
        spacer = QWidget(self)
        spacer.setSizePolicy(
            spacer.sizePolicy().Policy.Expanding, spacer.sizePolicy().Policy.Preferred
        )
        self.addWidget(spacer)
        self.connection = QLabel(self)
        self.connection.setTextFormat(Qt.TextFormat.RichText)
        self.connection.setAccessibleName("Connection")
        self.addWidget(self.connection)
        settings = QToolButton(self)
        settings.setText("Settings…")
        settings.setAccessibleName("Settings")
        settings.clicked.connect(self.settingsRequested)
        self.addWidget(settings)
        self._model = ""
        self._connection: tuple[str, ConnectionState, str] = ("", "unknown", "")

    def set_colors(self, colors: Colors) -> None:
        """Follow a theme change: the connection dot is drawn again in `colors`."""
        self.colors = colors
        self.set_connection(*self._connection)

    def set_folder(self, folder: str) -> None:
        self.folder_button.setText(f"{os.path.basename(folder.rstrip(os.sep)) or folder} ▾")
        self.folder_button.setToolTip(f"{folder}\nClick to open another project folder")

    def set_role(self, role: Role) -> None:
        self.role_box.blockSignals(True)
        self.role_box.setCurrentText(role)
        self.role_box.blockSignals(False)

    def set_plan(self, on: bool) -> None:
        self.plan_button.blockSignals(True)
        self.plan_button.setChecked(on)
        self.plan_button.blockSignals(False)

    def set_model(self, model: str) -> None:
        self._model = model
        index = self.model_box.findData(model, MODEL_ID_ROLE)
        if index >= 0:
            self.model_box.setCurrentIndex(index)
        else:
            self.model_box.setEditText(model)

    def set_models(self, models: list[ModelInfo]) -> None:
        """Fill the picker: tool-capable first; models that cannot take tools are marked."""
        self.model_box.blockSignals(True)
        self.model_box.clear()
        for info in sort_models(models):
            label = info.id
            if info.supports_tools is False:
                label += "  (no tools)"
            self.model_box.addItem(label, info.id)
            if info.supports_tools is False:
                self.model_box.setItemData(
                    self.model_box.count() - 1,
                    "This model cannot take tools: the agent can only chat.",
                    Qt.ItemDataRole.ToolTipRole,
                )
        self.model_box.blockSignals(False)
        self.set_model(self._model)

    def current_model(self) -> str:
        data = self.model_box.currentData(MODEL_ID_ROLE)
        if isinstance(data, str) and self.model_box.currentText().startswith(data):
            return data
        return self.model_box.currentText().strip()

    def set_connection(self, label: str, state: ConnectionState, detail: str = "") -> None:
        self._connection = (label, state, detail)
        c = self.colors
        color = {"ok": c.ok, "error": c.error, "busy": c.pending, "unknown": c.muted}[state]
        self.connection.setText(f'<span style="color:{color}">●</span> {label} ')
        self.connection.setToolTip(detail or label)

    def _model_picked(self, index: int) -> None:
        data = self.model_box.itemData(index, MODEL_ID_ROLE)
        model = data if isinstance(data, str) else self.model_box.itemText(index)
        if model != self._model:
            self._model = model
            self.modelChanged.emit(model)

    def _model_typed(self) -> None:
        model = self.current_model()
        if model and model != self._model:
            self._model = model
            self.modelChanged.emit(model)


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
