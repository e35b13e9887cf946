"""A host's view asks its host for the models of the window's connection (`models/list`),
so the window's process opens no connection to the model server and loads no HTTP client.
A host older than the method: the window asks the server itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from melgui.core.protocol.transport import ModelInfo, TransportError
from melgui.host.client import HostClient
from melgui.host.wire import METHOD_NOT_FOUND, RpcError

if TYPE_CHECKING:
    from melgui.ui.window.host_view.view import HostView, ViewedWindow


async def models_from_host(view: HostView, window: ViewedWindow) -> list[ModelInfo]:
    """The server's models, as the window's host lists them for the window's connection."""
    from melgui.ui.window.host_view.view import _connection

    client = view.client
    if not isinstance(client, HostClient) or client.gone:  # a remote folder's, or gone
        return await window.desk.connection.list_models()
    try:
        said = await client.call(
            "models/list", folder=window.project_folder, settings=_connection(window.settings)
        )
    except RpcError as exc:
        if exc.code == METHOD_NOT_FOUND:  # an older host
            return await window.desk.connection.list_models()
        status = exc.data.get("status") if isinstance(exc.data, dict) else None
        raise TransportError(exc.message, status) from exc
    return [ModelInfo(**model) for model in said["models"]]
