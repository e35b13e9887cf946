"""Discovering models and servers: the one place that asks what is available.

Today: the models the current connection offers. The embedded engine's files, servers
running on loopback and model files already on disk, and each model's context length,
are found here too as they are added.
"""

from __future__ import annotations

import httpx

from melgui.core.protocol.context_window import UNKNOWN_WINDOW, ContextWindow
from melgui.core.protocol.transport import ModelInfo, Transport, TransportError
from melgui.core.transports.context_length import fallback_window, kind_from_url, probe_server
from melgui.core.transports.http.replies import auth_headers


async def list_models_text(transport: Transport) -> tuple[list[str], str]:
    """For "Test connection": model ids, or ([], the error line)."""
    try:
        models = await transport.list_models()
    except TransportError as exc:
        return [], str(exc)
    except Exception as exc:  # a transport bug must not crash the dialog
        return [], f"{type(exc).__name__}: {exc}"
    return [m.id + ("  (no tools)" if m.supports_tools is False else "") for m in models], ""


# --- context windows (issue 19) ------------------------------------------------------


async def context_window(
    transport: Transport, model: str, *, setting: int | None = None
) -> ContextWindow:
    """The chosen model's window: what the server says, else `setting`, else a guess.

    The relay says nothing of windows: "unknown" unless a setting names one.
    """
    if transport.name == "relay":
        return fallback_window(setting, "relay") if setting else UNKNOWN_WINDOW
    n_ctx = getattr(transport, "n_ctx", None)
    if transport.name == "local" and isinstance(n_ctx, int):
        return ContextWindow(n_ctx, "server", "the embedded model's context", "local")
    base_url = getattr(transport, "base_url", None)
    if transport.name != "openai" or not isinstance(base_url, str):
        return fallback_window(setting)
    try:
        models: list[ModelInfo] | None = await transport.list_models()
    except Exception:  # a model list that fails says nothing of the window
        models = None
    headers = auth_headers(getattr(transport, "api_key", None))
    async with httpx.AsyncClient() as client:
        found = await probe_server(client, base_url, model, models, headers)
    if found is not None and (found.source == "server" or not setting):
        return found
    return fallback_window(setting, found.server if found else kind_from_url(base_url))
