"""Questions the Changes view asks before it writes: awaited without blocking the loop."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

Role = QMessageBox.ButtonRole


class Question(QMessageBox):
    """A message box with named choices; `await question.choice()` -> the chosen label,
    or "" when it was closed or cancelled."""

    def __init__(
        self,
        parent: QWidget | None,
        title: str,
        text: str,
        choices: list[tuple[str, Role]],
        *,
        detail: str = "",
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setIcon(QMessageBox.Icon.Question)
        self.setText(text)
        if detail:
            self.setInformativeText(detail)
        self.labels: dict[QAbstractButton, str] = {}
        for label, role in choices:
            button = self.addButton(label, role)
            self.labels[button] = label
        cancel = self.addButton(QMessageBox.StandardButton.Cancel)
        self.cancel_button = cancel
        self.setDefaultButton(cancel)
        self.setEscapeButton(cancel)

    def choice(self) -> asyncio.Future[str]:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def done(_code: int) -> None:
            if not future.done():
                future.set_result(self.labels.get(self.clickedButton(), ""))

        self.finished.connect(done)
        self.open()
        return future

    def click(self, label: str) -> None:
        """Choose `label` ("Cancel" for cancel) as a person would (tests, scripted use)."""
        if label == "Cancel":
            self.cancel_button.click()
            return
        for button, text in self.labels.items():
            if text == label:
                button.click()
                return
        raise KeyError(label)
