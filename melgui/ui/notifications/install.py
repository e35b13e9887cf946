"""Puts signals and the agents board into the main window. One call: `install_signals(window)`.

Every agent is registered on one AgentsBoard: the main conversation (again whenever it is
replaced) and every pane whose widget carries a session (`pane.session` of a worker
pane, `pane.acp` of an ACP agent's pane), with its worktree when the pane has one
(`pane.worktree`). Terminal panes' bells go to Attention. The board is a dock
(View → Agents board) whose rows bring their pane forward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QDockWidget, QMainWindow, QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.worktrees.model import Worktree
from melgui.desk.board.agents_board import AgentsBoard
from melgui.desk.board.overlap_watch import OverlapWatch
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.ui.board.board_view import BoardView
from melgui.ui.notifications.attention import MAIN, Attention, SignalHost, pane_key
from melgui.ui.notifications.desktop import DesktopNotifier
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.terminal.pane import TerminalPane
from melgui.ui.runtime.aio import TaskKeeper

MAIN_NAME = "Main conversation"


class SignalWindow(SignalHost, Protocol):
    """What install_signals needs of the window beyond SignalHost (MainWindow is one)."""

    session: AgentSession
    sessionChanged: SignalInstance
    tasks: TaskKeeper

    @property
    def chat(self) -> QWidget: ...


@dataclass(slots=True)
class Signals:
    """What install_signals made: the board, its dock and view, and Attention."""

    board: AgentsBoard
    view: BoardView
    dock: QDockWidget
    attention: Attention
    notifier: DesktopNotifier


def install_signals(host: SignalWindow, window: QMainWindow) -> Signals:
    """Follow every agent of `host` (the window, also given as a QMainWindow)."""
    board = AgentsBoard(overlaps=OverlapWatch())  # which files each worker's worktree changed
    notifier = DesktopNotifier(
        window.windowIcon(),
        lambda coro: host.tasks.spawn(coro, what="desktop notifications"),
        window,
    )
    attention = Attention(host, window, board, notifier, focus_chat=lambda: _focus_chat(host))
    view = BoardView(board)
    dock = QDockWidget("Agents", window)
    dock.setObjectName("agentsDock")
    dock.setWidget(view)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    dock.hide()  # View → Agents board
    view.focusRequested.connect(attention.show)
    board.add(MAIN, MAIN_NAME, host.session)
    host.sessionChanged.connect(lambda session: board.add(MAIN, MAIN_NAME, session))
    follow_panes(host.pane_manager, board, attention)
    return Signals(board, view, dock, attention, notifier)


def follow_panes(manager: PaneManager, board: AgentsBoard, attention: Attention) -> None:
    """Keep the board's pane agents and the terminals' bells in step with the panes."""
    rung: set[int] = set()  # terminal panes whose bell is heard already

    def sync() -> None:
        present: set[str] = set()
        for info, pane in manager.panes():
            key = pane_key(info.id)
            name = f"Pane {info.id} · {info.title}"
            session = getattr(pane, "acp", None) or getattr(pane, "session", None)
            if isinstance(session, AgentSession | HostedAgentSession):
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


def _focus_chat(host: SignalWindow) -> None:
    chat = host.chat
    prompt = getattr(chat, "input", None)
    if prompt is not None:
        prompt.setFocus()
