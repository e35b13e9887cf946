"""Opening the Settings dialog with what it shows besides the settings: past run_command
commands for the rule editor and the log of calls that ran without asking."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from PySide6.QtWidgets import QMainWindow, QStatusBar

from melgui.core.config.settings import Settings, SettingsError, save_settings
from melgui.core.rules.policy import RulePolicy
from melgui.core.store.records import AllowedCall, RecordedCall
from melgui.desk.desk import Desk
from melgui.ui.runtime.aio import TaskKeeper


def save_or_report(settings: Settings, persist: bool, report: Callable[[str], None]) -> None:
    """Write the settings file (unless `persist` is off); a failure is reported, not raised."""
    if not persist:
        return
    try:
        save_settings(settings)
    except SettingsError as exc:
        report(str(exc))


def past_commands(records: Iterable[Any], store: Any, report: Callable[[str], None]) -> list[str]:
    """Past run_command commands, newest first, once each: this conversation's (from the
    inspector's call records), then the stored ones of every kept conversation."""
    current = [
        str(record.arguments.get("command"))
        for record in records
        if record.call.name == "run_command" and record.arguments
    ]
    stored: list[str] = []
    if store is not None:
        try:
            stored = store.calls.recent_commands()
        except sqlite3.Error as exc:
            report(f"History: cannot read past commands: {exc}")
    return list(dict.fromkeys([*reversed(current), *stored]))


def allowed_log(store: Any, report: Callable[[str], None]) -> list[AllowedCall]:
    """The log of calls that ran without asking, with the rule that allowed each."""
    if store is None:
        return []
    try:
        return list(store.calls.allowed_without_asking())
    except sqlite3.Error as exc:
        report(f"History: cannot read the log of allowed calls: {exc}")
        return []


class TrustDecider(Protocol):
    def decide(self, trusted: bool) -> None: ...


class SettingsHost(Protocol):
    """What the Settings dialog's flow uses of the window (MainWindow is one)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def policy(self) -> RulePolicy: ...

    @property
    def desk(self) -> Desk: ...

    @property
    def tasks(self) -> TaskKeeper: ...

    @property
    def status(self) -> QStatusBar: ...

    @property
    def trust_bar(self) -> TrustDecider: ...

    @property
    def main_window(self) -> QMainWindow: ...

    def command_history(self) -> list[str]: ...

    def recorded_calls(self, conversations: int | None) -> Sequence[RecordedCall]: ...

    def apply_settings(self, new: Settings, api_key: str | None) -> None: ...


def open_settings_dialog(window: SettingsHost, allowed: list[AllowedCall], tab: str = "") -> None:
    """Show Settings for a MainWindow; an accepted dialog applies through the window.
    `tab` "better-models" opens it on the model downloads."""
    from melgui.ui.settings.dialog import SettingsDialog

    dialog = SettingsDialog(
        window.settings,
        window.policy,
        window.command_history(),
        window.tasks,
        window.main_window,
        allowed=allowed,
        rule_problems=window.desk.rule_problems,
        recorded=window.recorded_calls,
        sandbox=window.desk.sandbox_status(),
    )
    dialog.applied.connect(window.apply_settings)
    dialog.workers_tab.trust.toggled.connect(window.trust_bar.decide)
    dialog.accepted.connect(
        lambda: window.status.showMessage(dialog.key_message, 20000) if dialog.key_message else None
    )
    if tab == "better-models":
        dialog.tabs.setCurrentWidget(dialog.downloads)
    dialog.open()


def claude_rules_offer(count: int) -> str:
    """The status line offering a project's Claude Code rules melgui lacks ("" for none)."""
    if not count:
        return ""
    return (
        f"This project has {count} Claude Code permission rule(s) melgui does "
        "not: Settings → Approval → Import shows and imports them."
    )
