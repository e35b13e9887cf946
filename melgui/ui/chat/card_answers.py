"""The answers given on a waiting call's card, the one place a person answers it.

Allow, Deny (with the reason typed for the call, if any), an "Always allow" choice (a
menu under the card's button) or an ACP agent's own option: each goes to the thread
(`Thread.answer`), which hands it to the loop. "Deny with a reason…" opens a line in
place, over the card; what is typed there is the call's draft (`Thread.set_draft`),
which the card shows and which the deny key sends.

When a call starts waiting, its card is scrolled into view and the keyboard goes to its
Allow (Enter allows, Tab goes to Deny and on) if the keyboard was in this chat (or
nowhere) and nothing is typed there; brought forward on purpose ("Go to it", a
notification clicked), it goes there unless the person is typing.

The window's Allow and Deny keys (`answer_waiting`) answer the waiting call whose card
has the keyboard, else the oldest question waiting in any pane, on its card.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QMenu, QPlainTextEdit, QTextEdit, QWidget

from melgui.core.protocol.approval import Approve, Decision, Deny, Remember
from melgui.core.thread.entries import CallEntry
from melgui.core.thread.thread import Thread
from melgui.ui.approvals.approval_controls import always_choices
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.chat.blocks.approval_card import action_href
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.look.tokens import SPACE_XS

VERBS = frozenset({"approve", "deny", "always", "reason", "choose"})
REASON_WIDTH = 46  # the reason line's width, in average characters


class ReasonLine(QLineEdit):
    """The reason's line: Escape closes it (the reason kept), before the chat's Escape
    (stop the turn) would take it."""

    escaped = Signal()

    def event(self, event: QEvent) -> bool:
        override = event.type() == QEvent.Type.ShortcutOverride
        if override and isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape:
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.escaped.emit()
            return
        super().keyPressEvent(event)


class CardAnswers(QObject):
    """`thread()`: the thread of the chat's session now; `source()`: who asks there ("main",
    a pane's title)."""

    def __init__(
        self, transcript: ChatTranscript, thread: Callable[[], Thread], source: Callable[[], str]
    ) -> None:
        super().__init__(transcript)
        self.transcript = transcript
        self._thread = thread
        self.source = source
        self.menu: QMenu | None = None  # the "Always allow" choices, while open
        self._reason_for = ""  # the call whose reason line is open
        self.reason = ReasonLine(transcript.viewport())  # "Deny with a reason…", in place
        self.reason.setPlaceholderText("Reason for denying (Enter sends it to the model)")
        self.reason.setAccessibleName("Reason for denying")
        self.reason.hide()
        self.reason.textEdited.connect(self._typed)
        self.reason.returnPressed.connect(lambda: self.deny(self._reason_for))
        self.reason.escaped.connect(self._close_reason)
        transcript.verticalScrollBar().valueChanged.connect(lambda _v: self._place_reason())

    # -- what the card's links ask ---------------------------------------------------

    def on_action(self, verb: str, argument: str) -> None:
        if verb not in VERBS:
            return
        call_id, _, more = argument.rpartition(":") if verb == "choose" else (argument, "", "")
        if self.waiting(call_id) is None:
            return
        match verb:
            case "approve":
                self.approve(call_id)
            case "deny":
                self.deny(call_id)
            case "always":
                self.show_always(call_id)
            case "reason":
                self.open_reason(call_id)
            case "choose":
                self.choose(call_id, int(more) if more.isdigit() else -1)

    def waiting(self, call_id: str) -> CallEntry | None:
        entry = self._thread().call(call_id)
        return entry if entry is not None and entry.phase == "waiting" else None

    def waiting_ids(self) -> list[str]:
        """The calls of this chat that wait for the person, oldest first."""
        return [e.call_id for e in self._thread().calls() if e.phase == "waiting"]

    def _answer(self, call_id: str, decision: Decision) -> None:
        if self._reason_for == call_id:
            self._close_reason()
        if self.menu is not None:  # the choices asked about it, answered now
            self.menu.close()
            self.menu = None
            self.transcript.activateWindow()  # the keyboard back in the window
            self.transcript.setFocus(Qt.FocusReason.PopupFocusReason)
        self._thread().answer(call_id, decision)

    def settled(self, call_id: str) -> None:
        """The call waits no more (answered anywhere, stopped): its reason line closes."""
        if self._reason_for == call_id:
            self._close_reason()

    def approve(self, call_id: str, remember: Remember = "once") -> None:
        if self.waiting(call_id) is not None:
            self._answer(call_id, Approve(remember))

    def deny(self, call_id: str) -> None:
        entry = self.waiting(call_id)
        if entry is not None:
            draft = entry.question.draft if entry.question is not None else ""
            if self._reason_for == call_id:
                draft = self.reason.text()
            self._answer(call_id, Deny(draft))

    def choose(self, call_id: str, index: int) -> None:
        """Answer with the agent's own option number `index`, as it offered it."""
        entry = self.waiting(call_id)
        options = entry.question.options if entry and entry.question else ()
        if not 0 <= index < len(options):
            return
        option = options[index]
        request = self._thread().request(call_id)
        if request is not None:
            request.choose(option.option_id)  # keeps which one was chosen
            return
        allow = option.kind.startswith("allow")
        remember: Remember = "session" if option.kind == "allow_always" else "once"
        self._answer(call_id, Approve(remember) if allow else Deny(option.label))

    # -- in place: the choices' menu and the reason's line ------------------------------

    def _under(self, call_id: str, verb: str) -> QPoint:
        """Where, in the viewport, the card's link `verb` ends (its bottom left)."""
        cursor = self.transcript.link_cursor(call_id, action_href(verb, call_id))
        if cursor is None:
            return QPoint(0, 0)
        start = self.transcript.cursorRect(cursor)
        return QPoint(max(start.left() - start.width(), 0), start.bottom() + SPACE_XS)

    def show_always(self, call_id: str) -> QMenu | None:
        entry = self.waiting(call_id)
        if entry is None or entry.judgement is None:
            return None
        choices = always_choices(entry.name, entry.judgement)
        if not choices:
            return None
        menu = QMenu(self.transcript)
        menu.setAccessibleName("Always allow")
        for remember, words in choices:
            action = QAction(words, menu)
            action.setData(remember)
            action.triggered.connect(lambda _=False, r=remember: self.approve(call_id, r))
            menu.addAction(action)
        self.menu = menu
        viewport = self.transcript.viewport()
        menu.popup(viewport.mapToGlobal(self._under(call_id, "always")))
        return menu

    def open_reason(self, call_id: str) -> QLineEdit:
        """The reason's line over the card, under its buttons, with the keyboard in it."""
        entry = self.waiting(call_id)
        self._reason_for = call_id
        draft = entry.question.draft if entry is not None and entry.question else ""
        self.reason.setText(draft)
        metrics = self.reason.fontMetrics()
        width = metrics.averageCharWidth() * REASON_WIDTH
        self.reason.resize(width, self.reason.sizeHint().height())
        self._place_reason()
        self.reason.show()
        self.reason.raise_()
        self.reason.setFocus(Qt.FocusReason.OtherFocusReason)
        return self.reason

    def _place_reason(self) -> None:
        if not self._reason_for:
            return
        if self.waiting(self._reason_for) is None:
            self._close_reason()
            return
        point = self._under(self._reason_for, "approve")
        room = self.transcript.viewport().width() - point.x() - SPACE_XS
        self.reason.resize(min(self.reason.width(), max(room, 0)), self.reason.height())
        self.reason.move(point)

    def _typed(self, text: str) -> None:
        if self._reason_for:
            self._thread().set_draft(self._reason_for, text)
            self._place_reason()  # the card shows the reason now: its buttons moved

    def _close_reason(self) -> None:
        self._reason_for = ""
        had_focus = self.reason.hasFocus()
        self.reason.hide()
        if had_focus:
            self.transcript.setFocus(Qt.FocusReason.OtherFocusReason)

    # -- the keyboard -------------------------------------------------------------------

    def arrived(self, call_id: str, *, brought: bool = False) -> None:
        """A call waits now (or is `brought` forward): its card into view, the keyboard on
        its first answer if the person was here, or asked for it, and is not typing."""
        entry = self.waiting(call_id)
        if entry is None:
            return
        options = entry.question.options if entry.question is not None else ()
        href = action_href("choose", call_id, "0") if options else action_href("approve", call_id)
        focus = QApplication.focusWidget()
        chat = self.transcript.parentWidget() or self.transcript
        here = focus is None or chat.isAncestorOf(focus)
        self.transcript.focus_link(call_id, href, (brought or here) and not typing())

    def reveal(self, call_id: str) -> bool:
        """Bring a call's card forward (the "waiting" line's Go to it, a notification)."""
        if self.waiting(call_id) is not None:
            self.arrived(call_id, brought=True)
            return True
        return self.transcript.reveal_card(call_id)

    def focused(self) -> str | None:
        """The waiting call whose card has the keyboard (its reason line included)."""
        if self._reason_for and self.reason.hasFocus():
            return self._reason_for
        if not self.transcript.hasFocus():
            return None
        call_id = self.transcript.card_at(self.transcript.textCursor().position())
        return call_id if call_id is not None and self.waiting(call_id) is not None else None


def typing() -> bool:
    """The keyboard is in a text box with something typed in it (a prompt, a reply)."""
    widget = QApplication.focusWidget()
    if isinstance(widget, QLineEdit):
        return bool(widget.text())
    if isinstance(widget, QPlainTextEdit | QTextEdit) and not widget.isReadOnly():
        return bool(widget.toPlainText())
    return False


def answer_waiting(window: QWidget, queue: ApprovalQueue, *, allow: bool) -> bool:
    """The window's Allow (or Deny) key: the call whose card has the keyboard, else the
    oldest in `queue`, on its card (its thread's answer, with the reason typed for it);
    False when none waits."""
    cards = window.findChildren(CardAnswers)
    for answers in cards:
        focused = answers.focused()
        if focused is not None:
            return _give(answers, focused, allow)
    request = queue.first()
    if request is None:
        return False
    call_id = request.call.id
    for answers in cards:
        if answers.source() == request.source and answers.waiting(call_id) is not None:
            return _give(answers, call_id, allow)
    if allow:  # no chat shows it (a session without a view): answered as it was asked
        request.approve("once")
    else:
        request.deny(request.draft)
    return True


def _give(answers: CardAnswers, call_id: str, allow: bool) -> bool:
    if allow:
        answers.approve(call_id)
    else:
        answers.deny(call_id)
    return True
