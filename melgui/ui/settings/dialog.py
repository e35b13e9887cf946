"""Settings: connection (relay, OpenAI-compatible presets, local), API key, approval
policy, tools, theme. "Test connection" lists the server's models or shows its error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.config import secrets
from melgui.core.config.connection_settings import (
    api_key_kind,
    complete_url,
    connection_key,
    needs_api_key,
)
from melgui.core.config.settings import PRESETS, ConnectionKind, Settings, preset_for_url
from melgui.core.protocol.tools.commands import SandboxStatus
from melgui.core.rules.claude_rules import claude_rules
from melgui.core.rules.policy import RulePolicy
from melgui.core.store.records import AllowedCall
from melgui.desk.model_sources import list_connection_models
from melgui.ui.approvals.history_trial import Recorded
from melgui.ui.approvals.rules_editor import PolicyEditor
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.look.tokens import DIALOG_SETTINGS, NOTE_MAX_H
from melgui.ui.settings.downloads_tab import DownloadModels
from melgui.ui.settings.found_models import Choice, FoundModels
from melgui.ui.settings.notifications_tab import SignalsTab
from melgui.ui.settings.sidebar import SidebarPages
from melgui.ui.settings.workers_tab import WorkerSettingsTab

CUSTOM = "custom"
_KINDS: tuple[tuple[ConnectionKind, str], ...] = (
    ("local", "Local model (offline, on this computer)"),
    ("relay", "Mel relay"),
    ("openai", "OpenAI-compatible server (Meliai API, OpenAI, Ollama, …)"),
)
_PERSIST: tuple[tuple[secrets.Persist, str], ...] = (
    ("keyring", "in the system keyring"),
    ("session", "only for this session"),
    ("file", "in a protected file (readable only by you)"),
)


class SettingsDialog(QDialog):
    applied = Signal(object, object)  # (Settings, api key or None)

    def __init__(
        self,
        settings: Settings,
        policy: RulePolicy,
        history: list[str],
        tasks: TaskKeeper,
        parent: QWidget | None = None,
        *,
        allowed: Sequence[AllowedCall] = (),
        rule_problems: Sequence[str] = (),
        recorded: Recorded | None = None,
        sandbox: SandboxStatus | None = None,
    ) -> None:
        """`sandbox`: whether commands can be sandboxed where they run (the desk says);
        None: not checked."""
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.original = settings
        self.policy = policy
        self._tasks = tasks
        self.key_message = ""  # where a typed key went, once accepted
        tabs = SidebarPages(self)  # the categories down the left
        self.tabs = tabs
        tabs.addTab(self._connection_tab(settings), "Connection")
        self.found_models = FoundModels(tasks, self)
        self.found_models.chosen.connect(self.use_found)
        tabs.addTab(self.found_models, "On this computer")
        self.downloads = DownloadModels(tasks, self)
        self.downloads.chosen.connect(self.use_found)
        self.finished.connect(self.downloads.cancel)  # a download lives with the dialog
        tabs.addTab(self.downloads, "Better models")
        self.policy_editor = PolicyEditor(
            policy,
            history,
            settings=settings,
            allowed=allowed,
            importable=claude_rules(policy.project) if policy.project else (),
            sandbox=sandbox,
            problems=rule_problems,
            recorded=recorded,
            tasks=tasks,
            parent=self,
        )
        tabs.addTab(self.policy_editor, "Approval")
        tabs.addTab(self._tools_tab(settings), "Tools")
        self.workers_tab = WorkerSettingsTab(settings, policy.project, self)
        tabs.addTab(self.workers_tab, "Workers")
        tabs.addTab(self._appearance_tab(settings), "Appearance")
        self.signals_tab = SignalsTab(settings, self)
        tabs.addTab(self.signals_tab, "Signals")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(*DIALOG_SETTINGS)

    # --- tabs --------------------------------------------------------------------------

    def _connection_tab(self, settings: Settings) -> QWidget:
        tab = QWidget(self)
        form = QFormLayout(tab)
        self._connection_form = form
        self.kind_group = QButtonGroup(self)
        kinds = QVBoxLayout()
        self._kind_buttons: dict[str, QRadioButton] = {}
        for kind, label in _KINDS:
            button = QRadioButton(label, tab)
            self.kind_group.addButton(button)
            self._kind_buttons[kind] = button
            kinds.addWidget(button)
            button.toggled.connect(self._update_enabled)
        form.addRow("Connect to", kinds)
        self.relay_url = QLineEdit(settings.relay_url, tab)
        self.relay_url.setPlaceholderText("https://relay.example.com")
        self.stream_path = QLineEdit(settings.relay_stream_path, tab)
        form.addRow("Relay URL", self.relay_url)
        form.addRow("Relay stream path", self.stream_path)
        self.preset = QComboBox(tab)
        for preset in PRESETS.values():
            self.preset.addItem(f"{preset.label} — {preset.base_url}", preset.id)
        self.preset.addItem("Other OpenAI-compatible server", CUSTOM)
        self.base_url = QLineEdit(settings.openai_base_url, tab)
        self.base_url.setPlaceholderText("http://127.0.0.1:8000/v1")
        known = preset_for_url(settings.openai_base_url)
        self.preset.setCurrentIndex(self.preset.findData(known.id if known else CUSTOM))
        self.preset.currentIndexChanged.connect(self._preset_chosen)
        self.base_url.textEdited.connect(self._url_edited)
        form.addRow("Server", self.preset)
        form.addRow("Base URL", self.base_url)
        self.model_path = QLineEdit(settings.local_model_path, tab)
        self.model_path.setPlaceholderText("empty: the model shipped with melgui[local]")
        browse = QPushButton("Browse…", tab)
        browse.clicked.connect(self._browse_model)
        path_row = QHBoxLayout()
        path_row.addWidget(self.model_path, 1)
        path_row.addWidget(browse)
        self._path_row = path_row
        form.addRow("Local model file", path_row)
        self.api_key = QLineEdit(tab)
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.persist = QComboBox(tab)
        for value, label in _PERSIST:
            self.persist.addItem(label, value)
        status = secrets.keyring_status()
        if not status.available:
            self.persist.setCurrentIndex(1)
        self.keyring_note = QLabel(status.message, tab)
        self.keyring_note.setWordWrap(True)
        self.key_source = QLabel(tab)
        self.api_key.textChanged.connect(self._show_key_source)
        self.persist.currentIndexChanged.connect(self._show_key_source)
        form.addRow("API key", self.api_key)
        form.addRow("Keep the key", self.persist)
        form.addRow("", self.keyring_note)
        form.addRow("Current key", self.key_source)
        self._send_reasoning = set(settings.send_reasoning)
        self.send_reasoning = QCheckBox("Send the model's reasoning back with each request", tab)
        self.send_reasoning.setToolTip(
            "For this connection only. Most servers ignore it or reject it; some reasoning "
            "models (DeepSeek, gpt-oss) do better with it."
        )
        self.send_reasoning.toggled.connect(self._reasoning_toggled)
        form.addRow("Reasoning", self.send_reasoning)
        self.test_button = QPushButton("Test connection", tab)
        self.test_button.clicked.connect(self.test_connection)
        self.test_result = QPlainTextEdit(tab)
        self.test_result.setReadOnly(True)
        self.test_result.setMaximumHeight(NOTE_MAX_H)
        form.addRow(self.test_button, self.test_result)
        self.model_box = QComboBox(tab)
        self.model_box.setEditable(True)
        self.model_box.setAccessibleName("Model")
        self.model_box.setToolTip(
            "The model for this connection (remembered per connection); "
            "Test connection lists the server's models. Empty: the server's first model."
        )
        self.model_box.setEditText(settings.model)
        self._model_key = connection_key(settings)
        form.addRow("Model", self.model_box)
        self._kind_buttons[settings.connection].setChecked(True)
        self._update_enabled()
        return tab

    def _tools_tab(self, settings: Settings) -> QWidget:
        tab = QWidget(self)
        form = QFormLayout(tab)
        self.timeout = QDoubleSpinBox(tab)
        self.timeout.setRange(1, 24 * 3600)
        self.timeout.setDecimals(0)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(settings.command_timeout)
        form.addRow("run_command timeout", self.timeout)
        self.search_url = QLineEdit(settings.web_search_url, tab)
        self.search_url.setPlaceholderText("https://searx.example.org (JSON API enabled)")
        form.addRow("Web search (SearXNG URL)", self.search_url)
        note = QLabel("Empty: web_search answers that no provider is configured.", tab)
        form.addRow("", note)
        return tab

    def _appearance_tab(self, settings: Settings) -> QWidget:
        tab = QWidget(self)
        form = QFormLayout(tab)
        self.theme = QComboBox(tab)
        self.theme.addItem("Light", "light")
        self.theme.addItem("Dark", "dark")
        self.theme.addItem("Follow the system", "system")
        self.theme.setCurrentIndex(max(0, self.theme.findData(settings.theme)))
        form.addRow("Theme", self.theme)
        self.focus_keys = QKeySequenceEdit(QKeySequence(settings.focus_chat_keys), tab)
        self.focus_keys.setAccessibleName("Back to the chat from a terminal")
        self.focus_keys.setToolTip(
            "Terminals send every key to their program except this one (and Ctrl+Tab, "
            "Ctrl+Shift+Tab, Ctrl+Shift+P)"
        )
        form.addRow("Back to the chat", self.focus_keys)
        return tab

    # --- behaviour ---------------------------------------------------------------------

    def kind(self) -> ConnectionKind:
        for kind, button in self._kind_buttons.items():
            if button.isChecked():
                return kind  # type: ignore[return-value]
        return "local"

    def _update_enabled(self) -> None:
        """Show the fields of the chosen connection only (and the key's when it needs one)."""
        kind = self.kind()
        form = self._connection_form
        for widget in (self.relay_url, self.stream_path):
            form.setRowVisible(widget, kind == "relay")
        form.setRowVisible(self.preset, kind == "openai")
        form.setRowVisible(self.base_url, kind == "openai")
        form.setRowVisible(self._path_row, kind == "local")
        try:
            draft = self.draft()
        except ValueError:
            return
        self.send_reasoning.blockSignals(True)
        self.send_reasoning.setChecked(api_key_kind(draft) in self._send_reasoning)
        form.setRowVisible(self.send_reasoning, kind != "local")
        self.send_reasoning.blockSignals(False)
        self._follow_connection(draft)
        wants_key = needs_api_key(draft)
        key_rows: tuple[QWidget, ...] = (self.api_key, self.persist, self.keyring_note)
        for row in (*key_rows, self.key_source):
            form.setRowVisible(row, wants_key)
        self._show_key_source()

    def _show_key_source(self) -> None:
        """Where the key comes from; a key typed here is named as such, not "not set"."""
        try:
            draft = self.draft()
        except ValueError:
            return
        if not needs_api_key(draft):
            self.key_source.setText("not needed")
        elif self.api_key.text().strip():
            self.key_source.setText(
                f"the one typed above, kept {self.persist.currentText()} when you press OK"
            )
        else:
            self.key_source.setText(secrets.key_source(api_key_kind(draft)))

    def _reasoning_toggled(self, checked: bool) -> None:
        try:
            connection = api_key_kind(self.draft())
        except ValueError:
            return
        if checked:
            self._send_reasoning.add(connection)
        else:
            self._send_reasoning.discard(connection)

    def _follow_connection(self, draft: Settings) -> None:
        """Another connection in the form: its own remembered model, never the last one's."""
        key = connection_key(draft)
        if not hasattr(self, "model_box") or key == self._model_key:
            return
        self._model_key = key
        self.model_box.clear()
        if key == connection_key(self.original):
            self.model_box.setEditText(self.original.model)
        else:
            self.model_box.setEditText(self.original.connection_models.get(key, ""))

    def _complete_urls(self) -> str:
        """Fill in a missing http(s):// in the URL fields; what was done, or ""."""
        notes = []
        for field in (self.relay_url, self.base_url):
            completed, note = complete_url(field.text())
            if note:
                field.setText(completed)
                notes.append(note)
        return " ".join(notes)

    def _preset_chosen(self, index: int) -> None:
        preset = PRESETS.get(str(self.preset.itemData(index)))
        if preset is not None:
            self.base_url.setText(preset.base_url)
        self._update_enabled()

    def _url_edited(self, text: str) -> None:
        known = preset_for_url(text)
        self.preset.blockSignals(True)
        self.preset.setCurrentIndex(self.preset.findData(known.id if known else CUSTOM))
        self.preset.blockSignals(False)
        self._update_enabled()

    def _browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Local model", "", "GGUF models (*.gguf)")
        if path:
            self.model_path.setText(path)

    def use_found(self, choice: Choice) -> None:
        """Fill the connection with a server's model or a model file, and show it."""
        self._kind_buttons[choice.kind].setChecked(True)
        if choice.kind == "openai":
            self.base_url.setText(choice.target)
            self._url_edited(choice.target)
        else:
            self.model_path.setText(choice.target)
        self._update_enabled()  # the model box follows the connection first
        self.model_box.setEditText(choice.model)
        self.tabs.setCurrentIndex(0)

    def draft(self) -> Settings:
        """The settings as the dialog shows them; raises ValueError when invalid."""
        values: dict[str, Any] = {
            **self.original.model_dump(),
            "connection": self.kind(),
            "relay_url": self.relay_url.text().strip(),
            "relay_stream_path": self.stream_path.text().strip() or "/v1/agent/stream",
            "openai_base_url": self.base_url.text().strip(),
            "local_model_path": self.model_path.text().strip(),
            "command_timeout": self.timeout.value() if hasattr(self, "timeout") else 120.0,
            "web_search_url": self.search_url.text().strip() if hasattr(self, "search_url") else "",
            "theme": self.theme.currentData() if hasattr(self, "theme") else "light",
            "focus_chat_keys": self._focus_keys(),
        }
        if hasattr(self, "signals_tab"):
            values.update(self.signals_tab.values())
        if hasattr(self, "_send_reasoning"):
            values["send_reasoning"] = sorted(self._send_reasoning)
        if hasattr(self, "model_box"):
            model = self.model_box.currentText().strip()
            values["model"] = model
            if model:
                key = connection_key(Settings.model_validate(values))
                values["connection_models"] = {**self.original.connection_models, key: model}
        if hasattr(self, "policy_editor"):
            values["approval_modes"] = self.policy_editor.modes()
            editor = self.policy_editor
            values["rules"] = editor.rule_lines("everywhere")
            project_rules = dict(self.original.project_rules)
            project_rules.pop(self.policy.project, None)
            if editor.rule_lines("project") and self.policy.project:
                project_rules[self.policy.project] = editor.rule_lines("project")
            values["project_rules"] = project_rules
            values.update(editor.sandbox_values())
        if hasattr(self, "workers_tab"):
            values.update(self.workers_tab.values(self.original))
        return Settings.model_validate(values)

    def _focus_keys(self) -> str:
        if not hasattr(self, "focus_keys") or self.focus_keys.keySequence().isEmpty():
            return self.original.focus_chat_keys
        return self.focus_keys.keySequence().toString()

    def _key_for(self, draft: Settings) -> str | None:
        typed = self.api_key.text().strip()
        if typed:
            return typed
        return secrets.get_api_key(api_key_kind(draft)) if needs_api_key(draft) else None

    def test_connection(self) -> None:
        filled = self._complete_urls()
        try:
            draft = self.draft()
        except ValueError as exc:
            self.test_result.setPlainText(f"Invalid settings: {exc}")
            return
        self.test_result.setPlainText(f"{filled} Asking the server for its models…".strip())
        self.test_button.setEnabled(False)
        self._tasks.spawn(self._test(draft, self._key_for(draft)), what="testing the connection")

    async def _test(self, draft: Settings, key: str | None) -> None:
        models, error = await list_connection_models(draft, key)
        self.test_button.setEnabled(True)
        if error:
            self.test_result.setPlainText(f"✗ {error}")
        elif not models:
            self.test_result.setPlainText("✓ Connected, but the server lists no models.")
        else:
            self.test_result.setPlainText(
                f"✓ {len(models)} models: pick one in Model below.\n" + "\n".join(models)
            )
            current = self.model_box.currentText().strip()
            ids = [m.split("  (")[0] for m in models]
            self.model_box.clear()
            self.model_box.addItems(ids)
            self.model_box.setEditText(current if current in ids else ids[0])

    def accept(self) -> None:
        self.key_message = self._complete_urls()
        try:
            draft = self.draft()
        except ValueError as exc:
            self.error.setText(f"Not saved: {' '.join(str(exc).split())[:300]}")
            return
        typed = self.api_key.text().strip()
        if typed and needs_api_key(draft):
            saved = secrets.set_api_key(api_key_kind(draft), typed, self.persist.currentData())
            self.keyring_note.setText(saved.message)
            self.key_message = f"{self.key_message} {saved.message}".strip()
        # this conversation's rules live with its policy, not in the settings
        self.policy.book.conversation[:] = self.policy_editor.rule_list("conversation")
        self.applied.emit(draft, self._key_for(draft))
        super().accept()
