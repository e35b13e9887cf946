"""What the connection settings say, with no transport: whose API key the connection
uses, whether it needs one, its short label, the key its models are remembered under,
and a typed URL completed. The window, the host and the transports all read them.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from melgui.core.config.settings import Settings, preset_for_url


def api_key_kind(settings: Settings) -> str:
    """Whose key this connection uses (see melgui.core.config.secrets)."""
    if settings.connection == "relay":
        return "relay"
    if settings.connection == "openai":
        preset = preset_for_url(settings.openai_base_url)
        return preset.id if preset is not None else "custom"
    return "local"


def needs_api_key(settings: Settings) -> bool:
    """Whether the connection takes a key: the relay does, a preset says, an unknown
    OpenAI-compatible server may."""
    if settings.connection == "local":
        return False
    if settings.connection == "openai":
        preset = preset_for_url(settings.openai_base_url)
        return preset is None or preset.needs_key
    return True


def connection_label(settings: Settings) -> str:
    """A short name for the connection indicator."""
    if settings.connection == "relay":
        host = urlsplit(settings.relay_url).netloc or "not set"
        return f"Mel relay · {host}"
    if settings.connection == "openai":
        preset = preset_for_url(settings.openai_base_url)
        if preset is not None:
            return preset.label
        return urlsplit(settings.openai_base_url).netloc or "OpenAI-compatible (not set)"
    return "Local model"


def connection_key(settings: Settings) -> str:
    """Which server a model name belongs to: the kind and its address (or model file)."""
    if settings.connection == "relay":
        return f"relay {settings.relay_url.strip().rstrip('/')}"
    if settings.connection == "openai":
        return f"openai {settings.openai_base_url.strip().rstrip('/')}"
    return f"local {settings.local_model_path.strip()}"


def complete_url(url: str) -> tuple[str, str]:
    """`url` with a missing scheme filled in (http:// for this computer, https:// for
    others), and a sentence saying so ("" when nothing was changed)."""
    text = url.strip()
    if not text or "://" in text:
        return text, ""
    host = text.split("/", 1)[0].split(":", 1)[0].lower()
    local = host in ("localhost", "::1", "[::1]") or host.startswith("127.") or host == "0.0.0.0"
    scheme = "http://" if local else "https://"
    return scheme + text, f"{scheme} added in front of {text!r}."
