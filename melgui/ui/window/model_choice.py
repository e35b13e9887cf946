"""The model follows the connection: the picker holds the current server's models, the
choice is remembered per connection (Settings.connection_models), and after a switch no
session keeps the previous server's model.

After a switch the model is the one last chosen on the new connection (or the one the
Settings dialog picked); until the server's list confirms it, it is "unverified": a
model the new server does not offer is replaced by its first tool-capable model, and
the status bar says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from melgui.core.config.connection_settings import connection_key, connection_label
from melgui.core.config.settings import Settings
from melgui.core.protocol.loop_events import LegFinished, LoopEvent, TurnFailed
from melgui.core.protocol.transport import ModelInfo, TransportError, sort_models
from melgui.desk.desk import Desk
from melgui.ui.chat.composer.choices import ModelAndRole
from melgui.ui.window.status_line import StatusLine
from melgui.ui.window.toolbar import ConnectionState, ProjectToolbar

LEG_SUCCEEDED = "The last leg succeeded"
ModelSink = Callable[[str], None]  # gives the model to every open session
ModelLister = Callable[[], Awaitable[list[ModelInfo]]]


def model_for_switch(old: Settings, new: Settings) -> str:
    """The model to use on `new`'s connection after switching from `old`'s."""
    if new.model and new.model != old.model:
        return new.model  # chosen for the new connection (the Settings dialog's picker)
    return new.connection_models.get(connection_key(new), "")


class ModelChoice:
    """Keeps the composer's model chip, settings and sessions on one model of the current
    connection; the toolbar says how the connection fares."""

    def __init__(
        self,
        desk: Desk,
        choices: ModelAndRole,
        toolbar: ProjectToolbar,
        status: StatusLine,
        give: ModelSink,
        save: Callable[[], None],
    ) -> None:
        self._desk = desk
        self._choices = choices
        choices.modelPicked.connect(self.choose)
        self._toolbar = toolbar
        self._status = status
        self._give = give
        self._save = save
        self.unverified = False
        self.offered: list[ModelInfo] = []
        # A window that becomes a host's view asks the host (`from_host`), not the server:
        # it then loads no HTTP client. Until the host is had or not, `host_known` waits.
        self.from_host: ModelLister | None = None
        self.host_known: asyncio.Event | None = None

    def host_settled(self, lister: ModelLister | None) -> None:
        """The window is a host's view (`lister` asks the host) or runs its agents (None)."""
        self.from_host = lister
        if self.host_known is not None:
            self.host_known.set()

    @property
    def model(self) -> str:
        return self._desk.settings.model

    def choose(self, model: str) -> None:
        """The person picked `model` (the chip, /model or the dialog): use and remember it."""
        settings = self._desk.settings
        settings.model = model
        if model:
            settings.connection_models = {
                **settings.connection_models,
                connection_key(settings): model,
            }
        self._choices.set_model(model)
        self._give(model)
        self._save()

    def switched(self, old: Settings) -> None:
        """The connection changed (the desk already uses the new settings)."""
        new = self._desk.settings
        model = model_for_switch(old, new)
        self.unverified = True
        self.offered = []
        self._choices.set_models([])
        self._status.set_progress("")  # e.g. "Local model ready" was about the old one
        self._status.showMessage(f"Connected to {connection_label(new)}", 8000)
        self.choose(model)

    def on_event(self, event: LoopEvent) -> None:
        """The main session's legs tell whether the connection works (a leg after one
        that succeeded changes nothing; a new connection shows "unknown" first)."""
        match event:
            case LegFinished() if self._toolbar.shown_connection[1:] != ("ok", LEG_SUCCEEDED):
                self._show_connection("ok", LEG_SUCCEEDED)
            case TurnFailed(status=None | 401 | 402 | 403 | 404):
                self._show_connection("error", event.message)
            case _:
                pass

    def _show_connection(self, state: ConnectionState, detail: str) -> None:
        self._toolbar.set_connection(connection_label(self._desk.settings), state, detail)

    async def refresh(self) -> None:
        """Ask the current server for its models; fill the picker; fix the model."""
        if self.host_known is not None:
            await self.host_known.wait()
        settings = self._desk.settings
        label = connection_label(settings)
        generation = self._desk.connection.generation
        self._toolbar.set_connection(label, "busy", "Asking the server for its models…")
        try:
            models = await (self.from_host or self._desk.connection.list_models)()
        except TransportError as exc:
            if generation == self._desk.connection.generation:
                self._toolbar.set_connection(label, "error", str(exc))
                self._status.showMessage(f"Models: {exc}", 15000)
            return
        if generation != self._desk.connection.generation:
            return  # the connection changed while we asked: that answer is stale
        self.offered = models
        self._desk.prompt.models = {model.id: model for model in models}  # images
        self._choices.set_models(models)
        self._toolbar.set_connection(label, "ok", f"{len(models)} models")
        ids = [m.id for m in sort_models(models)]
        if not ids:
            return
        current = self.model
        if not current or (self.unverified and current not in ids):
            if current:
                self._status.showMessage(f"{label} does not offer {current}; using {ids[0]}", 15000)
            self.choose(ids[0])
        self.unverified = False
