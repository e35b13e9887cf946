"""Watching every agent for the person: the agents board and its view, Attention,
desktop notifications, and the parallel work over the board's workers (where their
changes overlap, the merge queue of those that finished).

    signals = watch_agents(window, tasks, panes=..., approvals=..., desk=..., ...)
    signals.follow_main(session)        # each main conversation the window shows

Every agent is registered on one AgentsBoard: the main conversation (again whenever it is
replaced) and every pane whose widget carries a session (`pane.session` of a worker
pane, `pane.acp` of an ACP agent's pane), with its worktree when the pane has one
(`pane.worktree`); a worker pane's session in the melgui host is followed through its copy
of the host's thread. Terminal panes' bells go to Attention. The board's view sits in a
dock (the window places it; View → Agents board) whose rows bring their pane forward;
the merge queue's view in another (View → Merge queue).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtWidgets import QDockWidget, QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.worktrees.model import Worktree
from melgui.desk.board.agents_board import AgentsBoard
from melgui.desk.board.overlap_watch import OverlapWatch
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.host.remote_session import RemoteSession
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.approvals.waiting_bar import WaitingBar
from melgui.ui.board.board_view import BoardView
from melgui.ui.board.parallel_work import ParallelWork, parallel_work
from melgui.ui.mcp.input_form import InputForm
from melgui.ui.mcp.sampling_bar import SamplingBar
from melgui.ui.notifications.attention import MAIN, Attention, pane_key
from melgui.ui.notifications.desktop import DesktopNotifier
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.terminal.pane import TerminalPane
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.runtime.theme import Colors

MAIN_NAME = "Main conversation"


@dataclass(slots=True, weakref_slot=True)  # a slot of themeChanged
class Signals:
    """What watch_agents made: the board, its view in its dock, Attention, the notifier,
    the parallel work (the merge queue's view in its own dock)."""

    board: AgentsBoard
    view: BoardView
    dock: QDockWidget
    attention: Attention
    notifier: DesktopNotifier
    parallel: ParallelWork

    def follow_main(self, session: MainSession) -> None:
        """`session` is the main conversation now (one in the melgui host is not on the
        board, as workers there are not)."""
        if isinstance(session, AgentSession):
            self.board.add(MAIN, MAIN_NAME, session)
        else:
            self.board.remove(MAIN)

    def set_colors(self, colors: Colors) -> None:
        self.view.set_colors(colors)
        self.parallel.set_colors(colors)


def watch_agents(
    window: QWidget,
    tasks: TaskKeeper,
    *,
    panes: PaneManager,
    approvals: ApprovalQueue,
    waiting_bar: WaitingBar,
    asks: Sequence[InputForm | SamplingBar] = (),
    settings: Callable[[], Settings],
    show_call: Callable[[str], None],
    focus_chat: Callable[[], None],
    desk: Desk,
    colors: Colors,
) -> Signals:
    """Watch the agents of `window` (the top-level widget: its icon, its activation):
    the panes' and, once `follow_main` is called, the main conversation's."""
    board = AgentsBoard(overlaps=OverlapWatch())  # which files each worker's worktree changed
    notifier = DesktopNotifier(
        window.windowIcon(),
        lambda coro: tasks.spawn(coro, what="desktop notifications"),
        window,
    )
    attention = Attention(
        window,
        board,
        notifier,
        panes=panes,
        approvals=approvals,
        waiting_bar=waiting_bar,
        asks=asks,
        settings=settings,
        show_call=show_call,
        focus_chat=focus_chat,
    )
    view = BoardView(board, colors=colors)
    dock = _dock("Agents", "agentsDock", view)
    view.focusRequested.connect(attention.show)
    follow_panes(panes, board, attention)
    parallel = parallel_work(board, panes, desk, settings, colors)
    parallel.dock = _dock("Merge queue", "mergeQueueDock", parallel.view)
    return Signals(board, view, dock, attention, notifier, parallel)


def _dock(title: str, name: str, widget: QWidget) -> QDockWidget:
    dock = QDockWidget(title)
    dock.setObjectName(name)
    dock.setWidget(widget)
    return dock


def follow_panes(manager: PaneManager, board: AgentsBoard, attention: Attention) -> None:
    """Keep the board's pane agents and the terminals' bells in step with the panes."""
    rung: set[int] = set()  # terminal panes whose bell is heard already

    def sync() -> None:
        present: set[str] = set()
        for info, pane in manager.panes():
            key = pane_key(info.id)
            name = f"Pane {info.id} · {info.title}"
            session = getattr(pane, "acp", None) or getattr(pane, "session", None)
            if isinstance(session, AgentSession | HostedAgentSession | RemoteSession):
                present.add(key)
                if board.session(key) is not session:
                    board.add(key, name, session, worktree=_worktree_of(pane))
                else:
                    board.rename(key, name)
            elif isinstance(pane, TerminalPane) and info.id not in rung:
                rung.add(info.id)
                pane.bell.connect(lambda i=info.id, n=name: attention.ring(i, n))
        for key in board.agent_keys():
            if key != MAIN and key not in present:
                board.remove(key)
        rung.intersection_update(info.id for info, _pane in manager.panes())
        attention.refresh_seen()

    manager.panesChanged.connect(sync)
    sync()


def _worktree_of(pane: object) -> Callable[[], Worktree | None]:
    """The pane's worktree, read when asked (it is set once the worktree exists)."""

    def worktree() -> Worktree | None:
        found = getattr(pane, "worktree", None)
        return found if isinstance(found, Worktree) else None

    return worktree
