"""A project's language-server diagnostics: after an edit or write, the new errors and
warnings of that file go into the tool's result (so the model fixes them in the same
turn) and onto the call's card; the `diagnostics` tool lists the current ones.

A server is started once per project and language, on first use, and stopped when it has
been idle for `IDLE` seconds (it starts again on the next use). Nothing starts in an
untrusted folder: a language server runs the project's code and configuration.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from melgui.core.lsp.servers import (
    Language,
    ServerFailed,
    language_of,
    server_command,
    server_env,
)
from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import AfterCall, ToolOutcome

if TYPE_CHECKING:  # the LSP client (lsprotocol, pygls: 0.5 s) loads when a server starts
    from lsprotocol import types as lsp

    from melgui.core.lsp.client import ServerSession

IDLE = 300.0  # seconds a server may stay unused before it is stopped
EDITING_TOOLS = frozenset({"edit_file", "write_file"})
ERROR, WARNING = 1, 2  # LSP's DiagnosticSeverity values
SHOWN = (ERROR, WARNING)
_WORD = {ERROR: "error", WARNING: "warning"}
MAX_LISTED = 30


class ProjectDiagnostics:
    tools = EDITING_TOOLS  # the calls it reads after (a CallSteps' AfterStep)

    def __init__(
        self,
        project: str,
        *,
        trusted: Callable[[], bool],
        configured: Callable[[], Mapping[str, Sequence[str]]] = dict,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.project = os.path.realpath(project)
        self.trusted = trusted
        self.configured = configured
        self.env = server_env(env)
        self.servers: dict[str, ServerSession] = {}
        self.problems: dict[str, str] = {}  # language -> why its server is not running
        self._known: dict[str, set[tuple[int, str]]] = {}  # path -> (severity, message)
        self._locks: dict[str, asyncio.Lock] = {}
        self._idle: dict[str, asyncio.TimerHandle] = {}
        self._failed: dict[str, str] = {}  # path -> why its server failed just now

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall:
        """After an edit or write: the file's new errors and warnings, for the result."""
        path = arguments.get("path")
        if call.name not in EDITING_TOOLS or status != "ok" or not isinstance(path, str):
            return AfterCall()
        found = await self.for_file(path)
        if found is None:
            failed = self._failed.pop(path, "")
            if failed:  # a server that broke is said once, plainly; the edit stands
                note = f"[Diagnostics unavailable: {failed}]"
                return AfterCall(note, notes=(note,))
            return AfterCall()
        before = self._known.get(found[0], set())
        shown = [d for d in found[1] if d.severity in SHOWN]
        self._known[found[0]] = {(int(d.severity or 1), d.message) for d in shown}
        new = [d for d in shown if (int(d.severity or 1), d.message) not in before]
        if not new:
            return AfterCall()
        relative = os.path.relpath(found[0], self.project)
        lines = [describe(relative, d) for d in new[:MAX_LISTED]]
        if len(new) > MAX_LISTED:
            lines.append(f"… and {len(new) - MAX_LISTED} more")
        server = self.servers[found[2].name].name
        head = f"[Diagnostics from {server}: {len(new)} new in {relative}]"
        return AfterCall("\n".join([head, *lines]), notes=(head, *lines[:5]))

    async def for_file(self, path: str) -> tuple[str, list[lsp.Diagnostic], Language] | None:
        """The diagnostics of one file as it is on disk now; None when no server serves
        it (untrusted folder, no server installed, a server that failed)."""
        if not self.trusted():
            return None
        full = os.path.realpath(os.path.join(self.project, path))
        language = language_of(full)
        if language is None or not os.path.isfile(full):
            return None
        server = await self._server(language, path)
        if server is None:
            return None
        try:
            text = Path(full).read_text(encoding="utf-8", errors="replace")
            found = await server.diagnostics(full, text, language.language_id(full))
        except (ServerFailed, OSError) as exc:
            self.problems[language.name] = str(exc)
            self._failed[path] = str(exc)
            await self._stop(language.name)
            return None
        finally:
            self._idle_later(language.name)
        return full, found, language

    async def _server(self, language: Language, path: str) -> ServerSession | None:
        lock = self._locks.setdefault(language.name, asyncio.Lock())
        async with lock:
            server = self.servers.get(language.name)
            if server is not None:
                return server
            argv = server_command(language, self.project, self.configured(), self.env.get("PATH"))
            if argv is None:
                self.problems[language.name] = f"no {language.name} language server is installed"
                return None
            from melgui.core.lsp.client import ServerSession

            server = ServerSession(argv, self.project, self.env)
            try:
                await server.start()
            except ServerFailed as exc:
                self.problems[language.name] = str(exc)
                self._failed[path] = str(exc)
                return None
            self.problems.pop(language.name, None)
            self.servers[language.name] = server
            return server

    def _idle_later(self, name: str) -> None:
        handle = self._idle.pop(name, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        self._idle[name] = loop.call_later(IDLE, lambda: loop.create_task(self._stop(name)))

    async def _stop(self, name: str) -> None:
        server = self.servers.pop(name, None)
        if server is not None:
            await server.stop()

    async def tool(self, arguments: dict[str, Any]) -> ToolOutcome:
        """The `diagnostics` tool: a file's errors and warnings now, or every file's the
        running servers know."""
        if not self.trusted():
            return ToolOutcome("Language servers are off: this folder is not trusted.")
        path = arguments.get("path")
        if isinstance(path, str) and path.strip():
            found = await self.for_file(path.strip())
            if found is None:
                why = "; ".join(self.problems.values()) or "no language server serves this file"
                return ToolOutcome(f"No diagnostics for {path}: {why}.")
            items = {found[0]: found[1]}
        else:
            items = {}
            for server in self.servers.values():
                for uri, found_items in server.current().items():
                    items[unquote(urlparse(uri).path)] = found_items
        lines = [
            describe(os.path.relpath(p, self.project), d)
            for p, found_items in sorted(items.items())
            for d in found_items
            if d.severity in SHOWN
        ]
        if not lines:
            return ToolOutcome("No errors or warnings.")
        return ToolOutcome("\n".join(lines))

    async def aclose(self) -> None:
        for handle in self._idle.values():
            handle.cancel()
        self._idle.clear()
        for name in list(self.servers):
            await self._stop(name)


def describe(path: str, diagnostic: lsp.Diagnostic) -> str:
    """`app.py:3:5: error: undefined name 'x' (pyflakes)`: 1-based line and column."""
    start = diagnostic.range.start
    word = _WORD.get(diagnostic.severity or ERROR, "note")
    source = f" ({diagnostic.source})" if diagnostic.source else ""
    message = " ".join(diagnostic.message.split())
    return f"{path}:{start.line + 1}:{start.character + 1}: {word}: {message}{source}"


DIAGNOSTICS_TOOL = ToolDef(
    "diagnostics",
    "The project's current errors and warnings from its language servers, with line "
    "numbers: one file's (path) or every file the servers know.",
    {"type": "object", "properties": {"path": {"type": "string"}}},
    read_only=True,
    summary_argument="path",
    summary_default="the project",
    path_argument="path",
    touches_files=False,
)
