"""Attention: when an agent needs the person and is not in front, say so.

An agent needs the person when it waits for an approval, finishes a turn or fails one
(moments of the BoardFeed), and a terminal pane needs them when its program rings the
bell. If that agent's pane is not in front (the window is not the active one, or the
pane is not the focused one), the person gets, each unless turned off in Settings:

- a desktop notification naming the pane (DesktopNotifier); clicking it shows the pane,
  or the approval, with the window raised;
- the taskbar's urgency hint (`QApplication.alert`), until the window is activated;
- a badge on the pane's header and tab, until the pane is focused.

The "waiting" line counts every approval waiting, whichever pane asks (unless turned off),
and the forms and requests for a model's answer MCP servers wait on (shown under it): a
new one of those signals as an approval of the main conversation does (no badge: it is
the window's, under its waiting line), said as the host says it with no window
(`host/notify.py`'s `ask_said`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from melgui.core.config.settings import Settings
from melgui.core.protocol.calls import summarize
from melgui.core.protocol.tools.mcp.asks import InputRequest, SamplingRequest
from melgui.core.protocol.views.board_rows import BoardFeed, Moment
from melgui.host.notify import ask_said
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.approvals.waiting_bar import WaitingBar
from melgui.ui.mcp.input_form import InputForm
from melgui.ui.mcp.sampling_bar import SamplingBar
from melgui.ui.notifications.desktop import DesktopNotifier
from melgui.ui.panes.manager import PaneManager

MAIN = "main"
KEEP_NOTIFIED = 50
Alert = Callable[[QWidget, int], None]


def pane_key(pane_id: int) -> str:
    return f"pane-{pane_id}"


def pane_of(key: str) -> int:
    """The pane id in a key ("pane-3" -> 3), 0 for the main conversation."""
    return int(key.removeprefix("pane-")) if key.startswith("pane-") else 0


class Attention(QObject):
    """Turns moments and bells into notifications, the urgency hint and badges.

    `window`: the top-level widget whose activation counts as the person looking;
    `settings()`: the settings now; `show_call(call_id)`: the main conversation's waiting call
    brought forward (its card); `approvals` and the requests of `asks` (the MCP servers'
    forms and sampling requests, whose "Show call" goes to the waiting bar's) are counted
    on `waiting_bar`."""

    def __init__(
        self,
        window: QWidget,
        board: BoardFeed,
        notifier: DesktopNotifier,
        *,
        panes: PaneManager,
        approvals: ApprovalQueue,
        waiting_bar: WaitingBar,
        asks: Sequence[InputForm | SamplingBar] = (),
        settings: Callable[[], Settings],
        show_call: Callable[[str], None],
        focus_chat: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self.asks = tuple(asks)
        self.panes = panes
        self.approvals = approvals
        self.waiting_bar = waiting_bar
        self._settings = settings
        self._show_call = show_call
        self.focus_chat = focus_chat
        self.window = window
        self.board = board
        self.notifier = notifier
        self.alert: Alert = QApplication.alert  # the taskbar hint; tests wrap it
        self.urgent = False  # the window asked for attention and was not activated since
        self.unseen: dict[int, int] = {}  # pane id -> signals not seen yet
        self.notified: list[tuple[str, str, str]] = []  # (key, summary, body): the last 50
        board.on_moment(self._on_moment)
        notifier.clicked.connect(self.show)
        approvals.changed.connect(self._count_approvals)
        for bar in self.asks:
            bar.asked.connect(self._on_ask)
            bar.answered.connect(self._count_approvals)
            bar.showRequested.connect(waiting_bar.showRequested)
        panes.area.focusedPaneChanged.connect(lambda _id: self.refresh_seen())
        window.installEventFilter(self)
        self._count_approvals()

    # -- deciding ----------------------------------------------------------------------

    def in_front(self, key: str) -> bool:
        """The person sees this agent now: the window is active and, for a pane, the pane
        has the focus in the current tab."""
        window = self.window
        if not window.isActiveWindow() or window.isMinimized() or not window.isVisible():
            return False
        pane_id = pane_of(key)
        if pane_id == 0:
            return True
        area = self.panes.area
        frame = area.frame(pane_id)
        return (
            frame is not None
            and area.focused_id == pane_id
            and area.tab_of(pane_id) == area.tabs.currentIndex()
            and frame.isVisible()
        )

    def _on_moment(self, moment: Moment) -> None:
        settings = self._settings()
        if moment.kind != "approval" and not settings.signal_turn_end:
            return
        where = moment.name
        if moment.kind == "approval":
            request = next(
                (r for r in self.board.pending(moment.key) if r.call.id == moment.call_id), None
            )
            arguments = request.arguments if request is not None else {}
            summary = f"{where} waits for your approval"
            body = f"{moment.detail}: {summarize(moment.detail, arguments, 120)}"
        elif moment.kind == "finished":
            summary, body = f"{where} finished its turn", _excerpt(moment.detail)
        else:
            summary, body = f"{where} failed", _excerpt(moment.detail)
        self.signal(moment.key, summary, body)

    def _on_ask(self, request: InputRequest | SamplingRequest) -> None:
        """An MCP server's form or request for a model's answer waits for the person."""
        self._count_approvals()
        summary, line = ask_said(request)
        self.signal(MAIN, summary, line)

    def ring(self, pane_id: int, name: str) -> None:
        """A terminal pane's program rang the bell."""
        if self._settings().signal_bell:
            self.signal(pane_key(pane_id), f"{name} rang the bell", "")

    def signal(self, key: str, summary: str, body: str) -> bool:
        """Signal `summary` about agent or pane `key` unless it is in front; True if sent."""
        if self.in_front(key):
            return False
        settings = self._settings()
        if settings.signal_desktop:
            self.notified.append((key, summary, body))
            del self.notified[:-KEEP_NOTIFIED]
            self.notifier.notify(summary, body, key)
        if settings.signal_taskbar:
            self.urgent = True
            self.alert(self.window, 0)
        pane_id = pane_of(key)
        if pane_id and settings.signal_badges:
            self.unseen[pane_id] = self.unseen.get(pane_id, 0) + 1
            self.panes.area.set_badge(pane_id, self.unseen[pane_id], summary)
        return True

    # -- being seen --------------------------------------------------------------------

    def show(self, key: str) -> None:
        """Bring agent `key` forward: the window raised, its pane focused, and its oldest
        waiting approval shown."""
        window = self.window
        if window.isMinimized():
            window.showNormal()
        window.show()
        window.raise_()
        window.activateWindow()
        pane_id = pane_of(key)
        waiting = self.board.pending(key)
        manager = self.panes
        if pane_id == 0:
            if waiting:  # its card, with the keyboard on it
                self._show_call(waiting[0].call.id)
            else:
                self.focus_chat()
        elif waiting and manager.show_call(waiting[0].source, waiting[0].call.id):
            pass
        elif manager.pane(pane_id) is not None:
            manager.area.focus_pane(pane_id)
        self.seen(pane_id)

    def seen(self, pane_id: int) -> None:
        """The person looked at this pane: its badge goes."""
        if self.unseen.pop(pane_id, 0):
            self.panes.area.set_badge(pane_id, 0)

    def refresh_seen(self) -> None:
        for pane_id in list(self.unseen):
            if self.in_front(pane_key(pane_id)) or self.panes.pane(pane_id) is None:
                self.seen(pane_id)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.WindowActivate:
            self.urgent = False
            self.refresh_seen()
        return False

    def _count_approvals(self) -> None:
        shown = self._settings().signal_approval_count  # read at each change of the queue
        waiting = len(self.approvals) + sum(len(bar.requests) for bar in self.asks)
        self.waiting_bar.set_count(waiting if shown else 0)


def _excerpt(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
