"""Discovering models and servers: the one place that asks what is available.

Today: the models the current connection offers. The embedded engine's files, servers
running on loopback and model files already on disk, and each model's context length,
are found here too as they are added.
"""

from __future__ import annotations

from melgui.core.protocol.transport import Transport, TransportError


async def list_models_text(transport: Transport) -> tuple[list[str], str]:
    """For "Test connection": model ids, or ([], the error line)."""
    try:
        models = await transport.list_models()
    except TransportError as exc:
        return [], str(exc)
    except Exception as exc:  # a transport bug must not crash the dialog
        return [], f"{type(exc).__name__}: {exc}"
    return [m.id + ("  (no tools)" if m.supports_tools is False else "") for m in models], ""
