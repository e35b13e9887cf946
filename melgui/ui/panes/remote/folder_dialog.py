"""File → Open remote folder…: an `ssh://[user@]host[:port]/abs/path` URL (checked as it is
typed), or one of the recent remote folders; it opens in a window of its own.

    dialog = RemoteFolderDialog(recent_folders(), open_folder, parent)
    dialog.open()
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QVBoxLayout,
    QWidget,
)

from melgui.core.config.settings import config_dir
from melgui.remote.target import TargetError, parse_folder

RECENT_FILE = "remote-folders.json"
RECENT_KEPT = 10


def recent_path() -> Path:
    return config_dir() / RECENT_FILE


def recent_folders() -> list[str]:
    """Remote folders opened before, the last first."""
    try:
        found = json.loads(recent_path().read_text())
    except (OSError, ValueError):
        return []
    return [str(url) for url in found if isinstance(url, str)][:RECENT_KEPT]


def remember_folder(url: str) -> None:
    kept = [url, *(other for other in recent_folders() if other != url)][:RECENT_KEPT]
    path = recent_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(kept, indent=1) + "\n")


def open_in_new_window(url: str) -> None:
    """`melgui URL` as its own process: a window per remote folder."""
    subprocess.Popen([sys.executable, "-m", "melgui", url], start_new_session=True)


class RemoteFolderDialog(QDialog):
    def __init__(
        self, recent: list[str], open_folder: Callable[[str], None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("remoteFolderDialog")
        self.setWindowTitle("Open remote folder")
        self._open = open_folder
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Folder on another machine (your ssh config applies):", self))
        self.url = QLineEdit(self)
        self.url.setObjectName("remoteUrl")
        self.url.setPlaceholderText("ssh://[user@]host[:port]/abs/path")
        layout.addWidget(self.url)
        self.problem = QLabel("", self)
        self.problem.setObjectName("remoteUrlProblem")
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)
        self.recent = QListWidget(self)
        self.recent.setObjectName("recentRemoteFolders")
        self.recent.addItems(recent)
        self.recent.currentTextChanged.connect(self.url.setText)
        self.recent.itemActivated.connect(lambda _item: self.accept())
        if recent:
            layout.addWidget(QLabel("Recent:", self))
            layout.addWidget(self.recent)
        else:
            self.recent.hide()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.url.textChanged.connect(self._check)
        self._check()

    def _check(self) -> str | None:
        """The problem with the URL typed, said under it (None: it is fine)."""
        text = self.url.text().strip()
        problem = None
        if text:
            try:
                parse_folder(text)
            except TargetError as exc:
                problem = str(exc)
        self.problem.setText(problem or "")
        button = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        button.setEnabled(bool(text) and problem is None)
        return problem

    def accept(self) -> None:
        text = self.url.text().strip()
        if not text or self._check() is not None:
            return
        self._open(text)
        super().accept()
