"""A host's view asks its host for the models of the window's connection (`models/list`),
so the window's process opens no connection to the model server and loads no HTTP client.
A host older than the method: the window asks the server itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from melgui.core.protocol.transport import ModelInfo, TransportError
from melgui.host.client import HostClient
from melgui.host.wire import METHOD_NOT_FOUND, RpcError
from melgui.remote.link_client import LinkClient


async def models_from_host(
    client: HostClient | LinkClient,
    here: Callable[[], Awaitable[list[ModelInfo]]],
    folder: str,
    settings: dict[str, Any],
) -> list[ModelInfo]:
    """The server's models, as the window's host lists them for `settings`' connection
    (a remote folder's host, or one gone: the window asks the server: `here`)."""
    if not isinstance(client, HostClient) or client.gone:
        return await here()
    try:
        said = await client.call("models/list", folder=folder, settings=settings)
    except RpcError as exc:
        if exc.code == METHOD_NOT_FOUND:  # an older host
            return await here()
        status = exc.data.get("status") if isinstance(exc.data, dict) else None
        raise TransportError(exc.message, status) from exc
    return [ModelInfo(**model) for model in said["models"]]
