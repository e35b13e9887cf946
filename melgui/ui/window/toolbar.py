"""The toolbar: the project folder, plan mode, the connection and settings. The model and
the role are chosen in the composer (melgui/ui/chat/composer/choices.py)."""

from __future__ import annotations

import os
from typing import Literal

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QLabel, QToolBar, QToolButton, QWidget

from melgui.ui.runtime.look.icons import icon, icon_button
from melgui.ui.runtime.look.tokens import ICON
from melgui.ui.runtime.theme import Colors

ConnectionState = Literal["unknown", "ok", "error", "busy"]


class ProjectToolbar(QToolBar):
    folderRequested = Signal()
    settingsRequested = Signal()
    planToggled = Signal(bool)

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__("Project", parent)
        self.colors = colors
        self.setObjectName("projectToolbar")  # saveState() keys toolbars by name
        self.setMovable(False)
        self.setIconSize(QSize(ICON, ICON))
        # The folder's name is the button (the window title has the whole path).
        self.folder_button = QToolButton(self)
        self.folder_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.folder_button.setAccessibleName("Project folder")
        self.folder_button.clicked.connect(self.folderRequested)
        self.addWidget(self.folder_button)
        self.addSeparator()
        self.plan_button = QToolButton(self)
        self.plan_button.setText("Plan")
        self.plan_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.plan_button.setIcon(icon("list-checks", colors.muted))
        self.plan_button.setCheckable(True)
        self.plan_button.setToolTip(
            "Plan mode for this conversation: the agent only reads and writes a plan "
            "until you approve it (/plan)"
        )
        self.plan_button.setAccessibleName("Plan mode")
        self.plan_button.toggled.connect(self.planToggled)
        self.addWidget(self.plan_button)
        spacer = QWidget(self)
        spacer.setSizePolicy(
            spacer.sizePolicy().Policy.Expanding, spacer.sizePolicy().Policy.Preferred
        )
        self.addWidget(spacer)
        self.connection = QLabel(self)
        self.connection.setTextFormat(Qt.TextFormat.RichText)
        self.connection.setAccessibleName("Connection")
        self.addWidget(self.connection)
        self.settings_button = icon_button("settings", "Settings", colors.muted, keys="Ctrl+,")
        self.settings_button.clicked.connect(self.settingsRequested)
        self.addWidget(self.settings_button)
        self.shown_connection: tuple[str, ConnectionState, str] = ("", "unknown", "")

    def set_colors(self, colors: Colors) -> None:
        """Follow a theme change: the connection dot is drawn again in `colors`."""
        self.colors = colors
        self.plan_button.setIcon(icon("list-checks", colors.muted))
        self.settings_button.setIcon(icon("settings", colors.muted))
        self.set_connection(*self.shown_connection)

    def set_folder(self, folder: str) -> None:
        self.folder_button.setText(f"{os.path.basename(folder.rstrip(os.sep)) or folder} ▾")
        self.folder_button.setToolTip(f"{folder}\nClick to open another project folder")

    def set_plan(self, on: bool) -> None:
        self.plan_button.blockSignals(True)
        self.plan_button.setChecked(on)
        self.plan_button.blockSignals(False)

    def set_connection(self, label: str, state: ConnectionState, detail: str = "") -> None:
        self.shown_connection = (label, state, detail)
        c = self.colors
        color = {"ok": c.ok, "error": c.error, "busy": c.pending, "unknown": c.muted}[state]
        self.connection.setText(f'<span style="color:{color}">●</span> {label} ')
        self.connection.setToolTip(detail or label)
