"""A model's context window, from what the server says (called by discovery.py).

Asked in order, each answer ending the search: the `/v1/models` entry (OpenRouter's
`context_length`, vLLM's `max_model_len`, LM Studio's `loaded_context_length`),
Ollama's `/api/show` (`num_ctx` in its parameters; without it Ollama runs its small
default whatever the model could take), llama.cpp's `/props` (`n_ctx`), LM Studio's
`/api/v0/models/{id}`. Each probe is short; a server that answers none gets the
per-model setting, else a guess marked as one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from melgui.core.protocol import bounded_json
from melgui.core.protocol.context_window import (
    GUESSED_WINDOW,
    ContextWindow,
    ServerKind,
)
from melgui.core.protocol.transport import ModelInfo

if TYPE_CHECKING:
    import httpx

OLLAMA_DEFAULT_CTX = 4096  # Ollama's num_ctx when neither Modelfile nor environment sets it
PROBE_TIMEOUT = 3.0
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)", re.MULTILINE)
_MODEL_FIELDS = (
    "loaded_context_length",
    "context_length",
    "max_model_len",
    "n_ctx",
    "context_window",
)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def window_from_model_fields(fields: Mapping[str, Any]) -> int | None:
    """The window a `/v1/models` entry names, if any."""
    for key in _MODEL_FIELDS:
        if (tokens := _positive(fields.get(key))) is not None:
            return tokens
    provider = fields.get("top_provider")
    if isinstance(provider, Mapping):
        return _positive(provider.get("context_length"))
    meta = fields.get("meta")  # llama.cpp's /v1/models: meta.n_ctx_train
    if isinstance(meta, Mapping):
        return _positive(meta.get("n_ctx")) or _positive(meta.get("n_ctx_train"))
    return None


def kind_from_fields(fields: Mapping[str, Any]) -> ServerKind:
    if "max_model_len" in fields:
        return "vllm"
    if "top_provider" in fields or "pricing" in fields:
        return "openrouter"
    if "loaded_context_length" in fields or "max_context_length" in fields:
        return "lmstudio"
    if fields.get("owned_by") == "llamacpp" or "meta" in fields:
        return "llamacpp"
    if fields.get("owned_by") == "library" or fields.get("owned_by") == "ollama":
        return "ollama"
    return ""


def kind_from_url(base_url: str) -> ServerKind:
    port = urlsplit(base_url).port
    kinds: dict[int, ServerKind] = {11434: "ollama", 1234: "lmstudio", 8080: "llamacpp"}
    return kinds.get(port or 0, "")


def ollama_window(payload: Any) -> ContextWindow | None:
    """Ollama's `/api/show` answer: `num_ctx` set, or its default with the model's limit."""
    if not isinstance(payload, dict) or not ("model_info" in payload or "parameters" in payload):
        return None
    parameters = payload.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    if match:
        return ContextWindow(int(match.group(1)), "server", "Ollama num_ctx", "ollama")
    info = payload.get("model_info")
    limit = None
    if isinstance(info, dict):
        limit = next((_positive(v) for k, v in info.items() if k.endswith(".context_length")), None)
    detail = (
        f"Ollama's default num_ctx (the model can take {limit:,})"
        if limit
        else ("Ollama's default num_ctx")
    )
    return ContextWindow(OLLAMA_DEFAULT_CTX, "guess", detail, "ollama")


def llamacpp_window(payload: Any) -> ContextWindow | None:
    if not isinstance(payload, dict):
        return None
    settings = payload.get("default_generation_settings")
    tokens = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    tokens = tokens or _positive(payload.get("n_ctx"))
    if tokens is None:
        return None
    return ContextWindow(tokens, "server", "llama.cpp /props n_ctx", "llamacpp")


def lmstudio_window(payload: Any) -> ContextWindow | None:
    if not isinstance(payload, dict):
        return None
    tokens = _positive(payload.get("loaded_context_length")) or _positive(
        payload.get("max_context_length")
    )
    if tokens is None:
        return None
    return ContextWindow(tokens, "server", "LM Studio model context length", "lmstudio")


async def _get_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Any:
    import httpx  # the client's: loaded with it (http/tls.py)

    try:
        response = await client.request(
            method, url, json=body, headers=dict(headers or {}), timeout=PROBE_TIMEOUT
        )
        if response.status_code != 200:
            return None
        return bounded_json.loads(response.content)
    except (httpx.HTTPError, ValueError):
        return None


async def probe_server(
    client: httpx.AsyncClient,
    base_url: str,
    model: str,
    models: list[ModelInfo] | None,
    headers: Mapping[str, str] | None = None,
) -> ContextWindow | None:
    """What an OpenAI-compatible server at `base_url` says of `model`'s window."""
    entry = next((m for m in models or () if m.id == model), None)
    guess_kind = kind_from_url(base_url)
    if entry is not None:
        tokens = window_from_model_fields(entry.extra)
        if tokens is not None:
            kind = kind_from_fields(entry.extra) or guess_kind
            return ContextWindow(tokens, "server", "the server's model list", kind)
    root = base_url.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    show = await _get_json(client, "POST", f"{root}/api/show", {"model": model}, headers)
    found = ollama_window(show)
    if found is None:
        found = llamacpp_window(await _get_json(client, "GET", f"{root}/props", None, headers))
    if found is None:
        url = f"{root}/api/v0/models/{quote(model, safe='')}"
        found = lmstudio_window(await _get_json(client, "GET", url, None, headers))
    return found


def fallback_window(setting: int | None, server: ServerKind = "") -> ContextWindow:
    if setting:
        return ContextWindow(setting, "setting", "Settings → context window", server)
    return ContextWindow(GUESSED_WINDOW, "guess", "nothing said; a conservative default", server)


__all__ = [
    "OLLAMA_DEFAULT_CTX",
    "fallback_window",
    "kind_from_url",
    "llamacpp_window",
    "lmstudio_window",
    "ollama_window",
    "probe_server",
    "window_from_model_fields",
]
