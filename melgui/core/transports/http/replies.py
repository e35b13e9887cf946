"""Turning HTTP replies and failures into one-line messages both transports share."""

from __future__ import annotations

import contextlib
import email.utils
import time
from collections.abc import AsyncGenerator
from typing import Any, Literal, cast

import httpx

from melgui.core.config.redaction import redact, remember_secret
from melgui.core.protocol import bounded_json
from melgui.core.protocol.events import StreamError, WireEntry, rejects_history
from melgui.core.protocol.transport import TransportError, WireSink

MAX_ERROR_BODY = 64 * 1024
_MAX_MESSAGE = 300
Direction = Literal["request", "response", "event", "note"]


def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or 500 <= status <= 599


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds: a number of seconds or an HTTP date (RFC 9110)."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def one_line(text: str, limit: int = _MAX_MESSAGE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def server_message(body: str) -> str:
    """The human part of an error body: JSON error.message / message / detail, or text."""
    try:
        payload = bounded_json.loads(body)
    except ValueError:
        return one_line(body)
    return one_line(_message_in(payload) or body)


def _message_in(payload: Any) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, list):
        # FastAPI-style validation details: [{"msg": …, "loc": …}, …]
        parts = [_message_in(item) for item in payload]
        return "; ".join(part for part in parts if part)
    if not isinstance(payload, dict):
        return ""
    for key in ("error", "message", "detail", "msg"):
        if key in payload:
            found = _message_in(payload[key])
            if found:
                return found
    return ""


def url_hint(status: int, url: str) -> str:
    """What a 404 at `url` most likely means, or ""."""
    if status != 404 or not url:
        return ""
    parts = httpx.URL(url)
    if "/v1" not in parts.path:
        base = str(parts.copy_with(path="/v1", query=None)).rstrip("/")
        return f" — tried {url}; the base URL probably lacks /v1 (try {base})"
    return f" — tried {url}; check the base URL and the model name"


def _url_of(response: httpx.Response) -> str:
    try:
        return str(response.request.url)
    except RuntimeError:  # a response built without its request
        return ""


def status_error(response: httpx.Response, body: str, events_seen: bool = False) -> StreamError:
    status = response.status_code
    message = server_message(body)
    url = _url_of(response)
    head = f"HTTP {status} {response.reason_phrase}".rstrip()
    text = f"{head}: {message}" if message else head
    return StreamError(
        text + url_hint(status, url),
        status=status,
        retryable=is_retryable_status(status) and not rejects_history(message),
        retry_after=retry_after_seconds(response.headers.get("retry-after")),
        events_seen=events_seen,
    )


async def read_bounded(response: httpx.Response, limit: int = MAX_ERROR_BODY) -> str:
    """Up to `limit` bytes of a streamed body as text (an error page may be huge)."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with contextlib.aclosing(
            cast(AsyncGenerator[bytes, None], response.aiter_bytes())
        ) as body:
            async for chunk in body:
                chunks.append(chunk)
                size += len(chunk)
                if size >= limit:
                    break
    except httpx.HTTPError:
        pass  # what arrived is enough to explain the status
    return b"".join(chunks)[:limit].decode("utf-8", "replace")


def describe_failure(exc: Exception, url: str, read_timeout: float) -> str:
    """A one-line message for an httpx failure (connection, timeout, protocol)."""
    if isinstance(exc, httpx.ReadTimeout):
        return f"timed out: the server sent nothing for {read_timeout:g} s"
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out while talking to {url}"
    if isinstance(exc, httpx.ConnectError):
        return f"could not connect to {url}: {exc or 'connection refused'}"
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return f"the address {url!r} is not a valid http(s) URL: {exc}"
    return f"the connection to {url} failed: {exc or type(exc).__name__}"


def is_retryable_failure(exc: Exception) -> bool:
    return not isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol)


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class WireLog:
    """Writes wire entries to an optional sink, the API key and key-like text redacted."""

    def __init__(self, sink: WireSink | None, secret: str | None) -> None:
        self.sink = sink
        self.secret = secret
        self._secrets = (secret,) if secret else ()
        remember_secret(secret)  # and the history stores it nowhere

    def __call__(
        self, direction: Direction, text: str, at: float | None = None, clean: bool = False
    ) -> None:
        """One line; `at`: when it arrived (by default now); `clean`: `text` is known to
        hold nothing to redact (see `clean`)."""
        if self.sink is None:
            return
        if not clean:
            text = redact(text, self._secrets)
        self.sink(WireEntry(direction, text, time.time() if at is None else at, True))

    def clean(self, texts: list[str]) -> bool:
        """Whether none of `texts` holds anything to redact, looked at in one pass over
        them joined (a match in one of them is a match in the joined text)."""
        joined = "\x1e".join(texts)
        return redact(joined, self._secrets) == joined


async def request_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    what: str,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
    **kwargs: Any,
) -> Any:
    """One plain JSON request; every failure is a TransportError with a readable message."""
    try:
        response = await client.request(method, url, headers=headers, timeout=timeout, **kwargs)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise TransportError(f"{what}: {describe_failure(exc, url, timeout)}") from exc
    if response.status_code >= 400:
        key = (headers or {}).get("Authorization", "").removeprefix("Bearer ").strip()
        message = redact(server_message(response.text[:MAX_ERROR_BODY]), (key,) if key else ())
        head = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
        detail = f"{head}: {message}" if message else head
        detail += url_hint(response.status_code, url)
        raise TransportError(f"{what}: {detail}", status=response.status_code)
    try:
        return bounded_json.loads(response.content) if response.content else None
    except bounded_json.JSONTooDeep as exc:
        raise TransportError(f"{what}: the server answered with {exc}") from None
    except ValueError as exc:
        raise TransportError(
            f"{what}: the server did not answer with JSON ({one_line(response.text, 80)!r})",
            status=response.status_code,
        ) from exc
