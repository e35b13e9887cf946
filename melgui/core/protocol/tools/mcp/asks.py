"""What a person is asked on behalf of an MCP server, and what a view shows of a call
on one: the types a window draws and answers, wherever the server runs (in the window's
own process, or in the melgui host: ui/mcp/host_servers.py). No MCP SDK here.

    request = InputRequest.of("files", message, schema, call)    # a form (elicitation)
    problem = request.accept({"guest": "Ada"})                    # "" once it fits the schema
    sampling = SamplingRequest("files", "gpt-x", messages, 512)   # a model's answer asked
    sampling.approve()

Form mode: the requested schema read into fields, the answer checked against them, and
the three ways out the spec gives (accept with content, decline, cancel). URL mode: an
address the server wants the person to visit (a sign-in of its own, a payment), shown in
full with its host, opened only when the person says so (accept), else declined or
cancelled. The spec limits a form to a flat object of primitives: strings (with a format
or a length), numbers and integers (with bounds), booleans, and enums (single choice, or
a multi-select array). Anything else in a schema is shown as a string.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit


@dataclass(frozen=True)
class RunningCall:
    """The desk's call a server's message is about: who made it, its id, its tool's
    model-facing name (empty source and id: a call made outside any loop)."""

    source: str
    call_id: str
    tool: str


@dataclass(frozen=True)
class Progress:
    progress: float
    total: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        if self.total is None or self.total <= 0:
            return None
        return max(0.0, min(1.0, self.progress / self.total))

    def line(self) -> str:
        """ "3 of 10 · indexing src/" (or "3 · …" when the server gives no total)."""
        done = f"{self.progress:g}" + (f" of {self.total:g}" if self.total is not None else "")
        return f"{done} · {self.message}" if self.message else done


Kind = Literal["string", "number", "integer", "boolean", "choice", "choices"]
Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    options: tuple[tuple[str, str], ...] = ()  # (value, label) for choice and choices
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None


def _options(spec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """`enum` (with `enumNames`), or `oneOf`/`anyOf` of {const, title}."""
    if isinstance(spec.get("enum"), list):
        values = [str(v) for v in spec["enum"]]
        names = spec.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) else values
        return tuple(zip(values, labels + values[len(labels) :], strict=False))
    for key in ("oneOf", "anyOf"):
        if isinstance(spec.get(key), list):
            return tuple(
                (str(item["const"]), str(item.get("title", item["const"])))
                for item in spec[key]
                if isinstance(item, dict) and "const" in item
            )
    return ()


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def fields_of(schema: dict[str, Any]) -> tuple[Field, ...]:
    """The form's fields, in the schema's order."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    found = []
    for name, spec in properties.items():
        if not isinstance(spec, dict):
            continue
        kind: Kind
        options: tuple[tuple[str, str], ...] = ()
        if spec.get("type") == "array":
            items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
            kind, options = "choices", _options(items or {})
        elif options := _options(spec):
            kind = "choice"
        elif spec.get("type") in ("number", "integer", "boolean"):
            kind = spec["type"]
        else:
            kind = "string"
        length = spec.get("maxLength")
        found.append(
            Field(
                str(name),
                kind,
                str(spec.get("title") or name),
                str(spec.get("description") or ""),
                name in required,
                spec.get("default"),
                options,
                _number(spec.get("minimum")),
                _number(spec.get("maximum")),
                length if isinstance(length, int) else None,
            )
        )
    return tuple(found)


def defaults_of(fields: tuple[Field, ...]) -> dict[str, Any]:
    return {f.name: f.default for f in fields if f.default is not None}


def checked(fields: tuple[Field, ...], values: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The content to send (empty optional fields left out), or a one-line problem."""
    content: dict[str, Any] = {}
    for f in fields:
        value = values.get(f.name)
        if value is None or value == "" or value == []:
            if f.required:
                return {}, f"{f.title} is required."
            continue
        if f.kind in ("number", "integer"):
            try:
                number = int(value) if f.kind == "integer" else float(value)
            except (TypeError, ValueError):
                kind = "a whole number" if f.kind == "integer" else "a number"
                return {}, f"{f.title} must be {kind}."
            if f.minimum is not None and number < f.minimum:
                return {}, f"{f.title} must be at least {f.minimum:g}."
            if f.maximum is not None and number > f.maximum:
                return {}, f"{f.title} must be at most {f.maximum:g}."
            value = number
        elif f.kind == "boolean":
            value = bool(value)
        elif f.kind == "choice" and str(value) not in {v for v, _ in f.options}:
            return {}, f"{f.title} must be one of the choices."
        elif f.kind == "string":
            value = str(value)
            if f.max_length is not None and len(value) > f.max_length:
                return {}, f"{f.title} is longer than {f.max_length} characters."
        content[f.name] = value
    return content, ""


def url_problem(url: str) -> str:
    """Why an address may not be offered to the person at all ("" when it may)."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return f"not a web address: {url[:200]}"
    if parts.username or parts.password:
        return "the address carries a user name or password"
    return ""


def url_warning(url: str) -> str:
    """What the person should know before opening it ("" when nothing stands out)."""
    host = urlsplit(url).hostname or ""
    if "xn--" in host or not host.isascii():
        return "its host is written in an international alphabet and may imitate another"
    if urlsplit(url).scheme == "http" and host not in ("localhost", "127.0.0.1", "::1"):
        return "it is not encrypted (http)"
    return ""


@dataclass
class InputRequest:
    server: str
    message: str
    fields: tuple[Field, ...]
    call: RunningCall | None = None  # None when no call of this server was running
    answer: asyncio.Future[tuple[Action, dict[str, Any] | None]] = field(
        default_factory=lambda: asyncio.get_event_loop().create_future()
    )
    url: str = ""  # URL mode: the address to visit (no fields)
    elicitation_id: str = ""
    completed: bool = False  # the server said the interaction at `url` is done

    @classmethod
    def for_url(
        cls, server: str, message: str, url: str, elicitation_id: str, call: RunningCall | None
    ) -> InputRequest:
        return cls(
            server, " ".join(message.split()), (), call, url=url, elicitation_id=elicitation_id
        )

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @classmethod
    def of(
        cls, server: str, message: str, schema: dict[str, Any], call: RunningCall | None
    ) -> InputRequest:
        return cls(server, " ".join(message.split()), fields_of(schema), call)

    @property
    def pending(self) -> bool:
        return not self.answer.done()

    def accept(self, values: dict[str, Any]) -> str:
        """Answer with `values` (checked); returns the problem instead when they do not fit.
        For an address, accepting is the person's consent to open it (no content)."""
        content, problem = checked(self.fields, values)
        if not problem and self.pending:
            self.answer.set_result(("accept", None if self.url else content))
        return problem

    def decline(self) -> None:
        if self.pending:
            self.answer.set_result(("decline", None))

    def cancel(self) -> None:
        if self.pending:
            self.answer.set_result(("cancel", None))


@dataclass(frozen=True)
class SamplingTarget:
    """The connection a server's request goes through: the conversation's, at the time."""

    # A core.protocol.transport.Transport: named loosely, since the transport module reads
    # the tools' definitions of this package's parent (no import cycle between them).
    transport: Any
    model: str
    cwd: str


@dataclass
class SamplingRequest:
    server: str
    model: str
    messages: list[dict[str, Any]]
    max_tokens: int
    call: RunningCall | None = None
    answer: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_event_loop().create_future()
    )

    @property
    def pending(self) -> bool:
        return not self.answer.done()

    def approve(self) -> None:
        if self.pending:
            self.answer.set_result(True)

    def refuse(self) -> None:
        if self.pending:
            self.answer.set_result(False)
