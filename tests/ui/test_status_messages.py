"""The status bar shows one text at a time at its left: "Ready" (what runs now) or a
temporary message, never both drawn on top of each other (docs/main-reattached.png showed
"Ready" under "Attached to the melgui host: …"). Every way a message comes: on the shown
window, before the window shows, with a status widget added while it shows (the host's
"Runs in the melgui host" label), ended by its timeout or by clearMessage. A message too
long for a narrow window is elided, its whole text the bar's tooltip."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QLabel, QSizeGrip, QWidget

from melgui.ui.window.main_window import MainWindow
from melgui.ui.window.status_line import StatusLine
from tests.fakes import ScriptedRelay
from tests.fakes.window import relay_settings, wait_until

MESSAGE = "Attached to the melgui host: the main conversation is back."


def message_rect(status: StatusLine) -> QRect:
    """Where the temporary message's text is drawn: as Qt paints it, from the bar's left
    (6 px in) to the first visible permanent widget, as wide as its text at most."""
    permanent = [w for w in permanent_widgets(status) if w.isVisible()]
    right = min([w.x() - 2 for w in permanent], default=status.width() - 12)
    width = status.fontMetrics().horizontalAdvance(status.currentMessage())
    return QRect(6, 0, max(0, min(width, right - 6)), status.height())


def permanent_widgets(status: StatusLine) -> list[QWidget]:
    return [status.progress, status.counts, status.context_meter]


def drawn_over_the_message(status: StatusLine) -> list[str]:
    """The visible widgets of the bar that sit where the message is drawn."""
    where = message_rect(status)
    over = []
    for child in status.findChildren(QWidget):
        if child.parentWidget() is not status or isinstance(child, QSizeGrip):
            continue
        if child.isVisible() and child.geometry().intersects(where):
            over.append(child.text() if isinstance(child, QLabel) else type(child).__name__)
    return over


def one_text(status: StatusLine) -> str:
    """What the left of the bar reads, failing if two texts are drawn there."""
    message, ready = status.currentMessage(), status.activity.isVisible()
    assert bool(message) != ready, f"message {message!r}, activity shown: {ready}"
    if message:
        assert drawn_over_the_message(status) == []
        return message
    return status.activity.text()


def test_a_message_hides_ready_until_it_ends(
    make_window: Callable[..., MainWindow], scripted_relay: ScriptedRelay, run: Any
) -> None:
    window = make_window(relay_settings(scripted_relay))
    window.resize(1100, 500)
    status = window.status
    assert one_text(status) == "Ready"
    status.showMessage(MESSAGE)
    assert one_text(status) == MESSAGE
    # The host adds its label while the message shows: Qt's new layout shows the bar's
    # widgets again unless they were hidden for good.
    label = QLabel("Runs in the melgui host", status)
    status.addPermanentWidget(label)
    run(wait_until(lambda: label.isVisible()))
    assert one_text(status) == MESSAGE
    status.clearMessage()
    assert one_text(status) == "Ready"
    status.showMessage("Short one", 50)
    assert one_text(status) == "Short one"
    run(wait_until(lambda: not status.currentMessage()))
    assert one_text(status) == "Ready"


def test_a_message_said_before_the_window_shows_hides_ready_once_it_shows(
    make_window: Callable[..., MainWindow], scripted_relay: ScriptedRelay, run: Any
) -> None:
    window = make_window(relay_settings(scripted_relay))
    window.hide()
    window.status.showMessage(MESSAGE, 60000)
    window.show()
    run(wait_until(lambda: window.status.isVisible()))
    assert one_text(window.status) == MESSAGE
    window.status.activity.setText("Waiting for the model — request 1")  # a turn starts
    assert one_text(window.status) == MESSAGE
    window.status.clearMessage()
    assert one_text(window.status) == "Waiting for the model — request 1"


LONG = (
    "Cannot open /home/someone/projects/a-rather-long-folder-name/and/deeper/still: "
    "Permission denied; check the folder's permissions and try again"
)


def inked_columns(status: StatusLine, where: QRect) -> int:
    """How many pixel columns of `where` the bar's real rendering draws something in."""
    image = status.grab().toImage()
    background = image.pixelColor(where.left(), 1)
    return sum(
        any(image.pixelColor(x, y) != background for y in range(where.top(), where.bottom()))
        for x in range(where.left(), where.right())
    )


def test_a_message_too_long_for_a_narrow_window_is_elided_with_its_whole_text_as_tip(
    make_window: Callable[..., MainWindow], scripted_relay: ScriptedRelay, run: Any
) -> None:
    window = make_window(relay_settings(scripted_relay))
    window.resize(720, 500)  # the window's own minimum width
    status = window.status
    run(wait_until(lambda: window.width() == 720))
    status.showMessage(LONG)
    assert not status.counts.isVisible()  # they give the message their room
    run(wait_until(lambda: status.message_rect().width() > 150))  # once laid out again
    drawn = status.drawn_message()
    assert drawn.endswith("…") and LONG.startswith(drawn[:-1]) and len(drawn) > 20
    room = status.message_rect()
    assert status.fontMetrics().horizontalAdvance(drawn) <= room.width()
    assert inked_columns(status, room) > room.width() // 2  # drawn there, not cut to nothing
    assert status.toolTip() == LONG
    assert drawn_over_the_message(status) == []
    status.clearMessage()
    assert status.toolTip() == "" and one_text(status) == "Ready"
    assert not status.counts.isVisible()  # at 720 px they leave what runs now its room
    window.resize(1400, 500)  # wide enough for a shorter one: whole, the counts beside it
    run(wait_until(lambda: window.width() == 1400))
    status.showMessage(MESSAGE)
    assert status.drawn_message() == MESSAGE and status.counts.isVisible()
    assert status.toolTip() == MESSAGE


def test_what_runs_now_is_elided_too_and_never_widens_the_bar(
    make_window: Callable[..., MainWindow], scripted_relay: ScriptedRelay, run: Any
) -> None:
    window = make_window(relay_settings(scripted_relay))
    window.resize(720, 500)
    status = window.status
    run(wait_until(lambda: window.width() == 720))
    assert status.activity.isVisible() and status.activity.text() == "Ready"
    running = "Running run_command " + "pytest -q tests/ui/test_status_messages.py -k " * 3
    status.activity.setText(running)
    assert status.minimumSizeHint().width() <= 720  # the bar never asks for its width
    run(wait_until(lambda: status.activity.width() > 100))
    label = status.activity
    shown = QLabel.text(label)  # as drawn
    assert shown.endswith("…") and running.startswith(shown[:-1])
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert label.text() == running and label.toolTip() == running
    assert status.width() <= window.width()
    status.activity.setText("Ready")
    assert QLabel.text(label) == "Ready" and label.toolTip() == ""
