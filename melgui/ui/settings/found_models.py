"""The settings tab that lists the models a person already has: servers running on this
computer and GGUF files on disk. One click on a row fills the connection with it."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.config.settings import ConnectionKind
from melgui.core.protocol.transport import FoundModelFile, FoundServer
from melgui.desk.model_sources import models_on_this_computer
from melgui.ui.runtime.aio import TaskKeeper

INTRO = (
    "Models already on this computer: servers that are running (Ollama, LM Studio, "
    "llama.cpp, vLLM) and model files on disk (Ollama, LM Studio, Hugging Face cache). "
    "Click one to use it, then OK."
)


@dataclass(frozen=True, slots=True)
class Choice:
    """What a row sets: the connection kind, the server URL or model file, the model id."""

    kind: ConnectionKind
    target: str
    model: str


def server_rows(servers: list[FoundServer]) -> list[tuple[str, Choice]]:
    rows: list[tuple[str, Choice]] = []
    for server in servers:
        for model in server.models:
            label = f"{model}  —  {server.name} server at {server.base_url}"
            rows.append((label, Choice("openai", server.base_url, model)))
    return rows


def file_rows(files: list[FoundModelFile]) -> list[tuple[str, Choice]]:
    return [
        (
            f"{found.name}  —  {found.source} file, {_size(found.size)}, "
            "run by the built-in engine",
            Choice("local", found.path, ""),
        )
        for found in files
    ]


def _size(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


class FoundModels(QWidget):
    chosen = Signal(object)  # Choice

    def __init__(self, tasks: TaskKeeper, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tasks = tasks
        intro = QLabel(INTRO, self)
        intro.setWordWrap(True)
        self.find_button = QPushButton("Look again", self)
        self.find_button.clicked.connect(self.refresh)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.rows = QListWidget(self)
        self.rows.itemClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.rows, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.find_button, 0, Qt.AlignmentFlag.AlignLeft)
        self._looked = False

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._looked:  # probe only when the person opens the tab
            self.refresh()

    def refresh(self) -> None:
        self._looked = True
        self.find_button.setEnabled(False)
        self.status.setText("Looking…")
        self._tasks.spawn(self._find(), what="finding models on this computer")

    async def _find(self) -> None:
        servers, files = await models_on_this_computer()
        self.show_found(servers, files)

    def show_found(self, servers: list[FoundServer], files: list[FoundModelFile]) -> None:
        self._looked = True
        self.rows.clear()
        for label, choice in server_rows(servers) + file_rows(files):
            item = QListWidgetItem(label, self.rows)
            item.setData(Qt.ItemDataRole.UserRole, choice)
            item.setToolTip(choice.target)
        self.find_button.setEnabled(True)
        if self.rows.count():
            self.status.setText(f"{self.rows.count()} found.")
        else:
            self.status.setText(
                "None found: no model server answers on its usual port, and no GGUF "
                "files are in the usual folders."
            )

    def _clicked(self, item: QListWidgetItem) -> None:
        choice = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(choice, Choice):
            self.chosen.emit(choice)
