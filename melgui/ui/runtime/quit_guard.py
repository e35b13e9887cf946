"""Asking before closing loses something: one dialog naming each loss.

The window's close (and so Quit) goes through `QuitGuard.allow_close()`: with nothing
live it returns True; otherwise it opens the dialog and returns False, and closes the
window itself when the person chooses to quit anyway. Closing one pane asks the same way
through `ask_about_losses`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget

from melgui.core.protocol.views.losses import Loss, LossRegistry


def describe_losses(losses: list[Loss]) -> str:
    """One bullet line per loss."""
    return "\n".join(f"• {loss.describe()}" for loss in losses)


def ask_about_losses(
    parent: QWidget,
    losses: list[Loss],
    question: str,
    proceed: str,
    on_proceed: Callable[[], None],
    also: tuple[str, Callable[[], None]] | None = None,
) -> QMessageBox:
    """A window-modal question listing `losses`; `on_proceed` runs when confirmed. `also`:
    one more choice (its label and what it does)."""
    box = QMessageBox(parent)
    box.setObjectName("lossDialog")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("melgui")
    box.setText(question)
    box.setInformativeText(describe_losses(losses))
    go = box.addButton(proceed, QMessageBox.ButtonRole.DestructiveRole)
    other = box.addButton(also[0], QMessageBox.ButtonRole.AcceptRole) if also else None
    if other is not None:
        other.setObjectName("keepRunning")
    stay = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(stay)
    box.setEscapeButton(stay)

    def finished(_result: int) -> None:
        if box.clickedButton() is go:
            on_proceed()
        elif also is not None and other is not None and box.clickedButton() is other:
            also[1]()
        box.deleteLater()

    box.finished.connect(finished)
    box.open()
    return box


class Background(Protocol):
    """Work that can go on without the window (sessions and terminals in the melgui host)."""

    def offered(self) -> bool: ...

    def keep_running(self) -> None: ...


KEEP_RUNNING = "Keep running in the background"


class QuitGuard(QObject):
    """Decides whether the window may close now; asks when something would be lost."""

    def __init__(self, window: QWidget, loss_registry: LossRegistry) -> None:
        super().__init__(window)
        self._window = window
        self._loss_registry = loss_registry
        self._confirmed = False
        self.dialog: QMessageBox | None = None
        self.background: Background | None = None  # this machine's melgui host (or a
        # remote folder's host there, when the window's main conversation runs there)
        # Workers whose loop runs in melgui's host on another machine (a host's
        # `loop_there`: RemoteSide), kept running there as the host's sessions are here.
        self.elsewhere: Background | None = None

    def allow_close(self) -> bool:
        if self._confirmed:
            return True
        losses = self._loss_registry.losses()
        if not losses:
            return True
        if self.dialog is None:
            count = len(losses)
            question = (
                "Quitting now would lose this:"
                if count == 1
                else f"Quitting now would lose these {count} things:"
            )
            also = None
            if self._offered(self.background) or self._offered(self.elsewhere):
                also = (KEEP_RUNNING, self._keep_running)
            if self._offered(self.background):
                question += (
                    "\n(Agents and terminals in the melgui host can keep running without "
                    "the window.)"
                )
            if self._offered(self.elsewhere):
                question += (
                    "\n(Workers whose loop runs in melgui's host on another machine can "
                    "keep running there; Quit anyway stops them there.)"
                )
            self.dialog = ask_about_losses(
                self._window, losses, question, "Quit anyway", self._quit_anyway, also
            )
            self.dialog.finished.connect(self._forget_dialog)
        return False

    def allow(self) -> None:
        """Close without asking from now on (a polite kill from the system)."""
        self._confirmed = True

    def _forget_dialog(self) -> None:
        self.dialog = None

    @staticmethod
    def _offered(background: Background | None) -> bool:
        return background is not None and background.offered()

    def _keep_running(self) -> None:
        for background in (self.background, self.elsewhere):
            if background is not None:
                background.keep_running()
        self._quit_anyway()

    def _quit_anyway(self) -> None:
        self._confirmed = True
        self._window.close()
