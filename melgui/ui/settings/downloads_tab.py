"""The settings tab that downloads a better local model than the shipped one: a short
list (filtered by this computer's memory), a progress bar, Cancel, and the finished
file filled in as the local model."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.config.model_catalog import (
    CATALOG,
    CatalogModel,
    machine_memory,
    models_that_fit,
    size_text,
)
from melgui.core.protocol.transport import DownloadProgress
from melgui.desk.model_sources import ModelDownloads
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.settings.found_models import Choice

INTRO = (
    "Models that answer better than the built-in SmolLM2-135M, each one GGUF file from "
    "the Hugging Face hub. A download checks the disk space first, can be cancelled and "
    "resumed, and is checked against the hub's SHA-256."
)


def model_row(model: CatalogModel, downloads: ModelDownloads) -> str:
    have = "  —  downloaded" if downloads.downloaded(model) is not None else ""
    return (
        f"{model.title}  —  {size_text(model.size_bytes)}, needs {size_text(model.ram_bytes)} "
        f"of RAM, {model.licence}{have}\n    {model.why}"
    )


class DownloadModels(QWidget):
    chosen = Signal(object)  # Choice: the downloaded file, to use as the local model
    progressed = Signal(object)  # DownloadProgress, from the download's thread

    def __init__(
        self,
        tasks: TaskKeeper,
        parent: QWidget | None = None,
        *,
        catalog: tuple[CatalogModel, ...] = CATALOG,
        memory: int | None = None,
        root: Path | None = None,
    ) -> None:
        super().__init__(parent)
        self._tasks = tasks
        self._downloads = ModelDownloads(root)
        self._cancel = threading.Event()
        self._running: CatalogModel | None = None
        intro = QLabel(INTRO, self)
        intro.setWordWrap(True)
        self.memory_note = QLabel("", self)
        self.memory_note.setWordWrap(True)
        self.rows = QListWidget(self)
        self.rows.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.download_button = QPushButton("Download", self)
        self.download_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel download", self)
        self.cancel_button.clicked.connect(self.cancel)
        self.use_button = QPushButton("Use it", self)
        self.use_button.clicked.connect(self.use_selected)
        self.bar = QProgressBar(self)
        self.bar.setTextVisible(True)
        self.bar.hide()
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.status.setOpenExternalLinks(True)
        buttons = QHBoxLayout()
        for button in (self.download_button, self.cancel_button, self.use_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.memory_note)
        layout.addWidget(self.rows, 1)
        layout.addWidget(self.bar)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self.progressed.connect(self._show_progress)
        self.show_catalog(catalog, machine_memory() if memory is None else memory)

    def show_catalog(self, catalog: tuple[CatalogModel, ...], memory: int) -> None:
        fits, too_big = models_that_fit(memory, catalog)
        self.rows.clear()
        for model in fits:
            item = QListWidgetItem(model_row(model, self._downloads), self.rows)
            item.setData(Qt.ItemDataRole.UserRole, model)
            item.setToolTip(f"{model.page_url}\n{model.licence}: {model.licence_url}")
        where = self._downloads.folder
        note = f"Stored in {where}."
        if memory > 0:
            note = f"This computer has {size_text(memory)} of memory. " + note
        if too_big:
            names = ", ".join(m.title for m in too_big)
            note += f" Left out, needing more memory than this computer has: {names}."
        self.memory_note.setText(note)
        ok, why = self._downloads.available()
        self.status.setText("" if ok else why)
        if self.rows.count():
            self.rows.setCurrentRow(0)
        self._update_buttons()

    def selected(self) -> CatalogModel | None:
        item = self.rows.currentItem()
        model = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return model if isinstance(model, CatalogModel) else None

    def _update_buttons(self) -> None:
        model = self.selected()
        running = self._running is not None
        self.download_button.setEnabled(
            model is not None and not running and self._downloads.available()[0]
        )
        self.cancel_button.setEnabled(running)
        self.use_button.setEnabled(
            model is not None and self._downloads.downloaded(model) is not None and not running
        )

    def start(self) -> None:
        model = self.selected()
        if model is None or self._running is not None:
            return
        self._running = model
        self._cancel = threading.Event()
        self.bar.setRange(0, 0)  # busy until the hub gives the size
        self.bar.show()
        self.status.setText(f"Asking the hub for {model.filename}…")
        self._update_buttons()
        self._tasks.spawn(self._download(model, self._cancel), what=f"downloading {model.title}")

    def cancel(self) -> None:
        if self._running is None:
            return
        self._cancel.set()
        self.status.setText("Cancelling…")

    async def _download(self, model: CatalogModel, cancel: threading.Event) -> None:
        end = await self._downloads.download(model, on_progress=self.progressed.emit, cancel=cancel)
        if end.path is None:
            self._finish(end.message)
        else:
            self._finish(f"Downloaded to {end.path}; it is now the local model (press OK).")
            self.chosen.emit(Choice("local", str(end.path), ""))

    def _finish(self, message: str) -> None:
        self._running = None
        self.bar.hide()
        self.status.setText(message)
        for row in range(self.rows.count()):
            item = self.rows.item(row)
            model = item.data(Qt.ItemDataRole.UserRole)
            if isinstance(model, CatalogModel):
                item.setText(model_row(model, self._downloads))
        self._update_buttons()

    def _show_progress(self, progress: DownloadProgress) -> None:
        if self._running is None or not progress.total:
            return
        scale = max(1, progress.total // 1_000_000)  # QProgressBar holds an int
        self.bar.setRange(0, progress.total // scale)
        self.bar.setValue(progress.done // scale)
        verb = "Downloading" if progress.stage == "downloading" else "Checking"
        self.bar.setFormat(
            f"{verb} {self._running.filename}: {size_text(progress.done)} of "
            f"{size_text(progress.total)} (%p%)"
        )
        if progress.stage == "downloading":
            self.status.setText("")

    def use_selected(self) -> None:
        model = self.selected()
        path = self._downloads.downloaded(model) if model is not None else None
        if path is not None:
            self.chosen.emit(Choice("local", str(path), ""))
