"""A failed turn as one clear line and what to do about it (no Qt here)."""

from __future__ import annotations

from dataclasses import dataclass

from melgui.core.protocol.events import ENDED_EARLY, rejects_history
from melgui.core.protocol.tools.definition import shorten

_UNREACHABLE = (
    "connect",
    "connection refused",
    "name or service not known",
    "nodename nor servname",
    "timed out",
    "timeout",
    "unreachable",
    "could not resolve",
    "no route to host",
)


@dataclass(frozen=True, slots=True)
class Explained:
    text: str
    action: str


def rejects_images(message: str, status: int | None) -> bool:
    """Whether a failure is the server refusing image input."""
    lower = message.lower()
    words = ("image", "vision", "multimodal", "image_url")
    return (
        (status is None or 400 <= status < 500)
        and any(w in lower for w in words)
        and any(w in lower for w in ("support", "not ", "cannot", "invalid", "unsupported", "only"))
    )


def cut_short(message: str) -> bool:
    """The answer's stream ended (the connection closed) before the answer finished."""
    return ENDED_EARLY in message.lower()


def explain_failure(message: str, status: int | None, *, kept: int = 0) -> Explained:
    """E.g. a 401 → "The server refused the API key" + "set a valid key in Settings".

    `kept`: characters of the answer that had arrived (and stay in the conversation)."""
    detail = " ".join(message.split()) or "no details"
    lower = detail.lower()
    if cut_short(message):
        what = (
            f"{kept:,} characters of the answer were kept above"
            if kept
            else "nothing of the answer had arrived"
        )
        return Explained(
            f"The connection to the server closed before the answer finished; {what}.",
            "Retry sends your message again (this attempt stays in the history)",
        )
    if rejects_images(message, status):
        return Explained(
            f"The model cannot take images ({_status(status)}): {detail}",
            "the image is taken out of the conversation; send again or pick a vision model",
        )
    if status in (401, 403):
        return Explained(
            f"The server refused the API key (HTTP {status}): {detail}",
            "set a valid key in Settings → Connection",
        )
    if status == 402 or "quota" in lower or ("insufficient" in lower and "credit" in lower):
        return Explained(
            f"The quota or credit is used up ({_status(status)}): {detail}",
            "wait for the quota to renew or change plan, then send again",
        )
    if status == 429:
        return Explained(
            f"The server is rate limiting ({_status(status)}): {detail}",
            "wait a moment and send again",
        )
    if status is not None and status >= 400 and rejects_history(detail):
        return Explained(
            f"The server rejected this conversation's history ({_status(status)}): "
            f"{shorten(detail, 160)}",
            "Edit and resend the last message (Ctrl+Shift+Up) or start a new conversation "
            "(Ctrl+N); this one stays in the history",
        )
    if status == 404:
        return Explained(
            f"The server has no such endpoint or model (HTTP 404): {detail}",
            "fix the base URL (or stream path) and model in Settings → Connection",
        )
    if status is not None and status >= 500:
        return Explained(
            f"The server failed (HTTP {status}): {detail}",
            "try again later; the conversation is kept",
        )
    if "not an http" in lower or "invalid url" in lower or "unsupported protocol" in lower:
        return Explained(
            f"The server URL is not usable: {detail}", "fix it in Settings → Connection"
        )
    if "settings" in lower and status is None:
        return Explained(detail, "open Settings → Connection")
    if any(word in lower for word in _UNREACHABLE):
        return Explained(
            f"Cannot reach the server: {detail}",
            "check that it is running and the URL in Settings → Connection is right",
        )
    if "local model" in lower or "llama" in lower or "gguf" in lower:
        return Explained(detail, "choose a model file or another connection in Settings")
    prefix = f"The turn failed ({_status(status)})" if status else "The turn failed"
    return Explained(f"{prefix}: {detail}", "send again, or change the connection in Settings")


def _status(status: int | None) -> str:
    return f"HTTP {status}" if status is not None else "no status"
