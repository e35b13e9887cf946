"""What the window's menus, shortcuts, command palette and own slash commands do.

`window_commands(window)` lists every menu command (see melgui.ui.window.menus.Command);
the slots that are not the window's own live here: docks, zoom, pane focus, opening
panes, exporting the current conversation, the palette, the shortcuts sheet and About.
`slash_commands(window)` are the window's own slash commands (/clear, /compact, /model,
/role, /export, /help), added to the desk's beside the custom ones, as compaction, MCP
prompts and ACP agents add theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QMessageBox,
    QWidget,
)

import melgui
from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import ROLES
from melgui.core.protocol.views.slash_commands import SlashCommand, SlashCommands
from melgui.desk.desk import Desk
from melgui.desk.kit import WorkspaceKit
from melgui.ui.approvals.approval_controls import APPROVE_KEYS, DENY_KEYS
from melgui.ui.board.parallel_work import ParallelWork
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.composer.choices import ModelAndRole, open_model_menu
from melgui.ui.history.sidebar import HistorySidebar
from melgui.ui.mcp.servers_panel import ServersPanel
from melgui.ui.notifications.agents_watch import Signals
from melgui.ui.panes.acp_dialogs import ask_agent, ask_earlier_session
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.remote.remote_side import RemoteSide
from melgui.ui.panes.terminal.keys import RESERVED_KEYS
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.runtime.theme import Colors
from melgui.ui.window.conversation_actions import edit_last, retry_last
from melgui.ui.window.menus import Command, build_menus
from melgui.ui.window.palette import CommandPalette, ShortcutsSheet
from melgui.ui.window.side.side_panel import SidePanel
from melgui.ui.window.status_line import StatusLine

Std = QKeySequence.StandardKey
DEFAULT_FOCUS_CHAT_KEYS = "Ctrl+`"
TERMINAL_NOTE = (
    "Terminal panes send every key to their program, Tab, Esc and Ctrl+C included, except "
    "the window's own shortcuts: {focus} returns to the chat (Settings → "
    "Appearance → “Back to the chat”), Ctrl+Tab / Ctrl+Shift+Tab move between the chat "
    "and the panes, Ctrl+Shift+P opens the palette. In the chat, Esc stops the agent. "
    "Copy and paste in a terminal are Ctrl+Shift+C and Ctrl+Shift+V."
)


# Shortcuts that work even while a terminal pane has the keyboard (a way out of it).
TERMINAL_PASSES = (
    "focus_chat", "next_pane", "previous_pane", "palette", "stop", "quit", "new_terminal",
    "close_pane",
)  # fmt: skip


class CommandHost(Protocol):
    """What the commands use of the window (MainWindow is one)."""

    session: MainSession
    chat: ChatView
    status: StatusLine
    history: HistorySidebar
    history_dock: QDockWidget
    side_panel: SidePanel
    signals: Signals
    parallel: ParallelWork
    remote: RemoteSide
    mcp_panel: ServersPanel
    pane_manager: PaneManager
    actions_by_name: dict[str, QAction]
    palette_dialog: CommandPalette | None
    zoom_steps: int
    colors: Colors
    choices: ModelAndRole

    @property
    def settings(self) -> Settings: ...

    @property
    def kit(self) -> WorkspaceKit: ...

    @property
    def desk(self) -> Desk: ...

    @property
    def tasks(self) -> TaskKeeper: ...

    @property
    def main_window(self) -> QMainWindow:
        """The window as a Qt widget: its menus, the parent of its dialogs."""
        ...

    def new_conversation(self) -> None: ...

    def toggle_trust(self) -> None: ...

    def open_settings(self) -> None: ...

    def approve_key(self) -> bool: ...

    def deny_key(self) -> bool: ...

    def project_folder(self) -> str: ...

    def change_folder(self, folder: str) -> None: ...


def menu_actions(window: CommandHost) -> dict[str, QAction]:
    """The window's menus and shortcuts; terminals let TERMINAL_PASSES through."""
    actions = build_menus(
        window.main_window, window_commands(window, window.settings.focus_chat_keys)
    )
    RESERVED_KEYS.set(s for name in TERMINAL_PASSES for s in actions[name].shortcuts())
    return actions


def set_focus_chat_keys(actions: dict[str, QAction], keys: str) -> None:
    """Another key back to the chat (Settings); terminals let the new one through."""
    actions["focus_chat"].setShortcut(QKeySequence(keys))
    RESERVED_KEYS.set(s for name in TERMINAL_PASSES for s in actions[name].shortcuts())


def window_commands(window: CommandHost, focus_chat_keys: str) -> list[Command]:
    """Every command of `window` (a MainWindow), in menu order."""
    w = window
    return [
        Command("new", "&File", "&New conversation", Std.New, w.new_conversation),
        Command("open_folder", "&File", "&Open folder…", Std.Open, lambda: choose_folder(w)),
        Command(
            "open_remote_folder", "&File", "Open &remote folder…", None,
            lambda: w.remote.ask_folder(),
            "A folder on another machine over ssh, in a window of its own",
        ),
        Command(
            "export", "&File", "&Export conversation…", "Ctrl+Shift+E",
            lambda: export_current(w), "Save the current conversation as Markdown or JSON",
        ),
        Command(
            "folder_trust", "&File", "&Trust or restrict this folder", None, w.toggle_trust,
            "Trusted: the folder's MCP servers, git hooks and filters, setup command may run",
        ),
        Command("settings", "&File", "&Settings…", "Ctrl+,", w.open_settings),
        Command(
            "quit", "&File", "&Quit", "Ctrl+Q", w.main_window.close,
            "Asks first if work would be lost",
        ),
        Command("stop", "&Conversation", "&Stop the agent", "Ctrl+.", lambda: w.chat.stop()),
        Command(
            "retry", "&Conversation", "&Retry the last message", "Ctrl+Shift+R",
            lambda: w.status.showMessage(retry_last(w.session, w.chat), 10000),
        ),
        Command(
            "edit_resend", "&Conversation", "&Edit and resend the last message", "Ctrl+Shift+Up",
            lambda: w.status.showMessage(edit_last(w.session, w.chat), 10000),
        ),
        Command(
            "approve", "&Conversation", "&Allow the waiting call (on its card)",
            APPROVE_KEYS.toString(),
            w.approve_key,
        ),
        Command(
            "deny", "&Conversation", "De&ny the waiting call (with the typed reason)",
            DENY_KEYS.toString(), w.deny_key,
        ),
        Command("rename", "&Conversation", "Re&name conversation…", "F2", lambda: rename(w)),
        Command("delete", "&Conversation", "&Delete conversation", None, lambda: delete(w)),
        Command("history", "&View", "&History", "Ctrl+Shift+H", lambda: toggle(w.history_dock)),
        Command(
            "inspector", "&View", "&Inspector", "Ctrl+Shift+I",
            lambda: w.side_panel.toggle("inspector"),
        ),
        Command("plans", "&View", "&Plans", "Ctrl+Shift+L", lambda: w.side_panel.toggle("plans")),
        Command("board", "&View", "&Agents board", "Ctrl+Shift+B", lambda: toggle(w.signals.dock)),
        Command("merge_queue", "&View", "Merge &queue", None, lambda: toggle(w.parallel.dock)),
        Command(
            "mcp", "&View", "&MCP servers", "Ctrl+Shift+M", lambda: w.side_panel.reveal("mcp")
        ),
        Command("zoom_in", "&View", "Zoom &in", Std.ZoomIn, lambda: zoom(w, 1)),
        Command("zoom_out", "&View", "Zoom &out", Std.ZoomOut, lambda: zoom(w, -1)),
        Command("zoom_reset", "&View", "&Reset zoom", "Ctrl+0", lambda: zoom(w, 0)),
        Command("palette", "&View", "&Command palette…", "Ctrl+Shift+P", lambda: palette(w)),
        Command("new_terminal", "&Panes", "New &terminal", "Ctrl+Shift+T", lambda: new_terminal(w)),
        Command(
            "new_command", "&Panes", "New terminal &running…", "Ctrl+Shift+X",
            lambda: ask_command(w),
        ),
        Command("new_worker", "&Panes", "New &worker…", "Ctrl+Shift+N", lambda: ask_worker(w)),
        Command("new_agent", "&Panes", "New &agent pane…", "Ctrl+Shift+G", lambda: ask_agent(w)),
        Command(
            "reopen_agent", "&Panes", "Reopen agent &session…", None,
            lambda: ask_earlier_session(w),
        ),
        Command("next_pane", "&Panes", "&Next pane", "Ctrl+Tab", lambda: cycle_focus(w, 1)),
        Command(
            "previous_pane", "&Panes", "&Previous pane", "Ctrl+Shift+Tab",
            lambda: cycle_focus(w, -1),
        ),
        Command(
            "focus_chat", "&Panes", "Back to the &chat", focus_chat_keys, lambda: focus_chat(w)
        ),
        Command("close_pane", "&Panes", "C&lose pane", "Ctrl+Shift+W", lambda: close_pane(w)),
        Command("shortcuts", "&Help", "&Keyboard shortcuts", "F1", lambda: shortcuts(w)),
        Command("about", "&Help", "&About melgui", None, lambda: about(w)),
    ]  # fmt: skip


def toggle(dock: QDockWidget) -> None:
    dock.setVisible(not dock.isVisible())
    if dock.isVisible():
        dock.raise_()


def export_current(window: CommandHost) -> None:
    sidebar = window.history
    cid = sidebar.current_id
    if cid is None:
        window.status.showMessage("Nothing to export yet: this conversation is empty.", 8000)
        return
    from melgui.ui.history.sidebar import export_default

    summary = sidebar.store.summary(cid)
    offered = export_default(window.project_folder(), summary.title if summary else "", ".md")
    path, _kind = QFileDialog.getSaveFileName(
        window.main_window, "Export conversation", offered, "Markdown (*.md);;JSON (*.json)"
    )
    if path:
        sidebar.export_to(cid, path, "json" if path.endswith(".json") else "markdown")


def rename(window: CommandHost) -> None:
    sidebar = window.history
    cid = sidebar.current_id
    if cid is not None:
        window.history_dock.show()
        sidebar.start_rename(cid)


def delete(window: CommandHost) -> None:
    sidebar = window.history
    cid = sidebar.current_id
    if cid is not None:
        sidebar.delete(cid)  # the undo bar offers it back


def palette(window: CommandHost) -> CommandPalette:
    dialog = CommandPalette(list(window.actions_by_name.values()), window.main_window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    window.palette_dialog = dialog
    return dialog


def shortcuts(window: CommandHost) -> ShortcutsSheet:
    focus = window.actions_by_name["focus_chat"].shortcut()
    note = TERMINAL_NOTE.format(focus=focus.toString(QKeySequence.SequenceFormat.NativeText))
    sheet = ShortcutsSheet(list(window.actions_by_name.values()), note, window.main_window)
    sheet.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    sheet.open()
    return sheet


def about(window: CommandHost) -> None:
    version = getattr(melgui, "__version__", "")
    QMessageBox.about(
        window.main_window,
        "About melgui",
        f"melgui {version}\nWork with an AI agent on a project folder.\n"
        "Press Ctrl+Shift+P for every command, F1 for the shortcuts.",
    )


def new_terminal(window: CommandHost, command: str | None = None) -> None:
    manager = window.pane_manager
    if manager.home is not None or manager.host is not None:  # it runs in a host
        window.tasks.spawn(_terminal_in_host(window, command), what="a terminal")
        return
    try:
        info = window.pane_manager.open_terminal(command, "tab")
    except Exception as exc:  # PaneError and start-up failures: say so, keep going
        window.status.showMessage(f"Cannot open a terminal: {exc}", 15000)
        return
    window.pane_manager.area.focus_pane(info.id)


async def _terminal_in_host(window: CommandHost, command: str | None) -> None:
    """Opened in the background (a remote folder's link may be reconnecting, the melgui
    host answers in its own time); a failure is said."""
    try:
        info = await window.pane_manager.start_terminal(command)
    except Exception as exc:  # PaneError and start-up failures: say so, keep going
        window.status.showMessage(f"Cannot open a terminal: {exc}", 15000)
        return
    window.pane_manager.area.focus_pane(info.id)


def _ask(
    window: CommandHost,
    title: str,
    label: str,
    done: Callable[[str], None],
    multiline: bool = False,
) -> QInputDialog:
    dialog = QInputDialog(window.main_window)
    dialog.setObjectName("paneDialog")
    dialog.setWindowTitle(title)
    dialog.setLabelText(label)
    if multiline:
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
    dialog.textValueSelected.connect(lambda text: done(text.strip()) if text.strip() else None)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def ask_command(window: CommandHost) -> QInputDialog:
    return _ask(
        window, "New terminal", "Command to run in the project folder:",
        lambda text: new_terminal(window, text),
    )  # fmt: skip


def ask_worker(window: CommandHost) -> QDialog:
    from melgui.ui.panes.worker_dialog import WorkerDialog, start_worker_soon

    def start(task: str, own: bool, carry: bool) -> None:
        start_worker_soon(window, task, own, carry)

    manager = window.pane_manager
    hosts = manager.remote.names() if manager.remote is not None else []
    dialog = WorkerDialog(manager.worktrees(), start, window.main_window, hosts=hosts)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def close_pane(window: CommandHost) -> None:
    area = window.pane_manager.area
    if area.focused_id:
        window.pane_manager.request_close(area.focused_id)


def focus_order(window: CommandHost) -> list[QWidget]:
    """The chat's prompt, then each pane in tab order (what Ctrl+Tab walks through)."""
    order: list[QWidget] = [window.chat.input]
    area = window.pane_manager.area
    frames = sorted(area.frames(), key=lambda f: (area.tab_of(f.pane_id), f.pane_id))
    order += [frame.content for frame in frames]
    return order


def cycle_focus(window: CommandHost, step: int) -> None:
    """Ctrl+Tab: from the chat to each pane and back, showing the pane's tab."""
    order = focus_order(window)
    focused = QApplication.focusWidget()
    current = next(
        (i for i, w in enumerate(order) if focused is w or (focused and w.isAncestorOf(focused))),
        -1,
    )
    target = order[(current + step) % len(order)]
    area = window.pane_manager.area
    for frame in area.frames():
        if frame.content is target:
            area.focus_pane(frame.pane_id)
            return
    focus_chat(window)


def focus_chat(window: CommandHost) -> None:
    """Back to the prompt, from a terminal or anywhere else."""
    window.main_window.activateWindow()
    window.chat.input.setFocus(Qt.FocusReason.ShortcutFocusReason)


def zoom(window: CommandHost, step: int) -> None:
    """Bigger (1), smaller (-1) or default (0) text in the chat and the terminals."""
    window.zoom_steps = 0 if step == 0 else max(-4, min(8, window.zoom_steps + step))
    zoom_widget(window.chat.transcript, window.zoom_steps)
    for _info, pane in window.pane_manager.panes():
        view = getattr(pane, "view", None)
        if view is not None and hasattr(view, "zoom_to"):
            view.zoom_to(window.zoom_steps)


def zoom_widget(widget: QWidget, steps: int) -> None:
    """`steps` points above (or below) the widget's own font size, remembered on it."""
    base = widget.property("melguiBasePointSize")
    if not isinstance(base, float):
        base = widget.font().pointSizeF()
        widget.setProperty("melguiBasePointSize", base)
    font = widget.font()
    font.setPointSizeF(max(6.0, base + steps))
    widget.setFont(font)


def choose_folder(window: CommandHost) -> None:
    """Ask for another project folder and work there (a new conversation)."""
    folder = QFileDialog.getExistingDirectory(
        window.main_window, "Open a project folder", window.kit.folder
    )
    if folder:
        window.change_folder(folder)


def slash_commands(window: CommandHost, commands: SlashCommands) -> list[SlashCommand]:
    """The window's own slash commands (`commands`: all of them, for /help)."""

    def clear(_arguments: str) -> None:
        window.new_conversation()

    def model(arguments: str) -> None:
        if not arguments:
            open_model_menu(window.chat.composer)
            return
        window.choices.pick_model(arguments)
        window.chat.transcript.add_notice(f"Model: {arguments}", window.colors.muted)

    def role(arguments: str) -> None:
        chosen = next((name for name in ROLES if name == arguments), None)
        if chosen is None:
            window.chat.show_note(f"/role takes one of: {', '.join(ROLES)}.")
            return
        window.choices.pick_role(chosen)
        window.chat.transcript.add_notice(f"Role: {arguments}", window.colors.muted)

    def export(arguments: str) -> None:
        fmt: Literal["markdown", "json"] = (
            "json" if arguments.strip().lower() in ("json", ".json") else "markdown"
        )
        history = window.history
        cid = history.current_id
        if cid is None:
            window.chat.show_note("Nothing to export yet: the conversation has no messages.")
            return
        suffix, kind = (".json", "JSON (*.json)") if fmt == "json" else (".md", "Markdown (*.md)")
        path, _ = QFileDialog.getSaveFileName(
            window.chat, "Export conversation", "conversation" + suffix, kind
        )
        if path and history.export_to(cid, path, fmt):
            window.chat.transcript.add_notice(f"Exported to {path}", window.colors.muted)

    def show_help(_arguments: str) -> None:
        for line in commands.help_text().splitlines():
            window.chat.transcript.add_notice(line, window.colors.muted)

    def compact(_arguments: str) -> None:  # the same as the status bar's Compact
        window.chat.bridge.compact()

    return [
        SlashCommand("clear", "Start a new conversation", clear),
        SlashCommand("compact", "Summarise the older conversation now (originals kept)", compact),
        SlashCommand("model", "Use another model (no id: open the list)", model, usage="[id]"),
        SlashCommand("role", f"Change the tool set: {', '.join(ROLES)}", role, usage="<role>"),
        SlashCommand("export", "Export this conversation", export, usage="[markdown|json]"),
        SlashCommand("help", "List the commands", show_help),
    ]
