"""ssh's questions in the window: an unknown host key (with its fingerprint), a passphrase
or a password, asked in a dialog that the answer (or Cancel: no) closes.

    answer = await ask_in_window(window, question)     # None: the person said no

Nothing is answered for the person: a host key is accepted only by its Accept button.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from melgui.remote.askpass import Question


async def ask_in_window(parent: QWidget, question: Question) -> str | None:
    future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

    def answer(value: str | None) -> None:
        if not future.done():
            future.set_result(value)

    if question.kind == "host_key":
        box = host_key_box(parent, question)
        box.finished.connect(
            lambda _code: answer("yes" if box.clickedButton() is box.property("accept") else None)
        )
        box.open()
    else:
        dialog = QInputDialog(parent)
        dialog.setObjectName("sshQuestion")
        dialog.setWindowTitle("ssh asks")
        dialog.setLabelText(question.prompt.strip())
        if question.secret:
            dialog.setTextEchoMode(QLineEdit.EchoMode.Password)
        dialog.textValueSelected.connect(answer)
        dialog.rejected.connect(lambda: answer(None))
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
    return await future


def host_key_box(parent: QWidget, question: Question) -> QMessageBox:
    box = QMessageBox(parent)
    box.setObjectName("sshHostKey")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Unknown host key")
    box.setText(
        "This machine's host key is not known here. Accept it only if it is the key you "
        "expect (ask whoever runs the machine, or compare with `ssh-keygen -lf` there)."
    )
    box.setInformativeText(f"{question.key_type} key fingerprint:\n{question.fingerprint}")
    box.setDetailedText(question.prompt.strip())
    accept = box.addButton("Accept and connect", QMessageBox.ButtonRole.AcceptRole)
    refuse = box.addButton("Do not connect", QMessageBox.ButtonRole.RejectRole)
    box.setProperty("accept", accept)
    box.setDefaultButton(refuse)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    return box
