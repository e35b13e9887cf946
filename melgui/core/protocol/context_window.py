"""What is known of a model's context window, and where that knowledge came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

WindowSource = Literal["server", "setting", "guess", "unknown"]
ServerKind = Literal["ollama", "lmstudio", "llamacpp", "vllm", "openrouter", "local", "relay", ""]

GUESSED_WINDOW = 8192  # when nothing says: small enough for most servers people run


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """`tokens` is None when unknown (the relay, unless its stream says)."""

    tokens: int | None
    source: WindowSource
    detail: str = ""  # where it was read, in words ("Ollama /api/show num_ctx")
    server: ServerKind = ""  # which kind of server, for the fix a warning names

    @property
    def label(self) -> str:
        if self.tokens is None:
            return "unknown"
        suffix = {"server": "", "setting": " (your setting)", "guess": " (a guess)"}
        return f"{self.tokens:,}{suffix.get(self.source, '')}"


UNKNOWN_WINDOW = ContextWindow(None, "unknown", "the server does not say")


def fix_for(server: ServerKind) -> str:
    """How to give that server a larger window, in plain words."""
    match server:
        case "ollama":
            return (
                "Ollama runs models with a small context by default: start it with "
                "OLLAMA_CONTEXT_LENGTH=32768 ollama serve, or set PARAMETER num_ctx 32768 in "
                "a Modelfile (ollama create), then reconnect."
            )
        case "lmstudio":
            return (
                "In LM Studio, open the model's load settings, raise Context Length "
                "(e.g. 32768) and load the model again."
            )
        case "llamacpp":
            return "Restart llama-server with a larger context, e.g. -c 32768."
        case "vllm":
            return "Restart vLLM with a larger --max-model-len, or choose a larger model."
        case "local":
            return "The embedded model's window is fixed: start a new conversation or compact."
        case _:
            return (
                "Raise the server's context length, or choose a model with a larger window "
                "(Settings → Connection)."
            )
