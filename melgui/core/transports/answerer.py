"""Who answers: the model in use and where it runs, in words for the prompt box."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from melgui.core.config.settings import Settings, preset_for_url
from melgui.core.protocol.transport import Answerer
from melgui.core.transports.local.model import (
    SHIPPED_MODEL_FILE,
    SMALL_MODEL_BYTES,
    default_model_path,
)

# The quantisation tail of a GGUF file name: ".Q4_1", "-q4_k_m", "-Q8_0", "-f16".
QUANT_TAIL = re.compile(r"[.-](?:I?Q\d\w*|[BF]F?16|F32)$", re.IGNORECASE)
LOOPBACK = ("localhost", "::1", "0.0.0.0")


def gguf_name(path: str) -> str:
    """A model's name from its file: `SmolLM2-135M-Instruct.Q4_1.gguf` → `SmolLM2-135M-Instruct`."""
    stem = os.path.basename(path).removesuffix(".gguf")
    if stem.startswith("sha256-"):
        return "a model file from Ollama's store"
    return QUANT_TAIL.sub("", stem) or stem


def _is_small(path: str) -> bool:
    try:
        return os.path.getsize(path) < SMALL_MODEL_BYTES
    except OSError:
        return False


def _is_loopback(host: str) -> bool:
    return host.startswith("127.") or host in LOOPBACK


def who_answers(settings: Settings, model: str = "") -> Answerer:
    """The model that answers on `settings`' connection (`model`: the one chosen)."""
    model = model or settings.model
    if settings.connection == "local":
        path = settings.local_model_path.strip() or default_model_path() or SHIPPED_MODEL_FILE
        return Answerer(gguf_name(path), "on this computer (built-in engine)", _is_small(path))
    if settings.connection == "openai":
        preset = preset_for_url(settings.openai_base_url)
        host = urlsplit(settings.openai_base_url).hostname or ""
        server = preset.label.removesuffix(" (local)") if preset is not None else host
        where = f"on this computer ({server})" if _is_loopback(host) else f"at {server}"
        return Answerer(model or "the server's first model", where)
    host = urlsplit(settings.relay_url).netloc or "an unset address"
    return Answerer(model or "the relay's model", f"through the Mel relay at {host}")
