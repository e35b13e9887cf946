"""One language server process for one project, spoken to with pygls's LanguageClient.

The server starts in the project folder as every child melgui starts: its own session
and process group, default signals, a minimal environment (no API keys). Its stderr is
drained so a chatty server never blocks.

`diagnostics(path, text)` opens or changes the document and returns its diagnostics for
that version:
- pull, when the server offers `textDocument/diagnostic`: one request, its answer;
- push otherwise, with this rule for when they have settled: the server has published
  for the document at the version just sent (or, from a server that sends no version,
  published after the change), and a round trip sent after its latest publish
  (`textDocument/documentSymbol`, answered in order behind the work the change queued)
  came back with no newer publish in between. No fixed sleep: how long it takes is how
  long the server takes. A server that sends no version must stay quiet through two
  round trips in a row (it may publish in parts: typescript-language-server publishes
  the syntax errors, then the type errors, each as tsserver reports them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

from melgui.core.lsp.servers import ServerFailed
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import forked_here, reset_signals

START_TIMEOUT = 30.0  # seconds for the server to start and answer `initialize`
ANSWER_TIMEOUT = 30.0  # seconds for one document's diagnostics
QUIET_ROUND_TRIPS = 2  # round trips with no publish that settle an unversioned server


class ServerSession:
    def __init__(self, argv: Sequence[str], project: str, env: Mapping[str, str]) -> None:
        self.argv = list(argv)
        self.project = project
        self.env = dict(env)
        self.client = LanguageClient("melgui", "1", converter_factory=_converter)
        self.pull = False
        self.versions: dict[str, int] = {}
        self.last_used = time.monotonic()
        # Seconds from the last change sent to the server's first answer for it (its
        # publish, or its pull reply): what the server itself took (bench_diagnostics).
        self.answered_in = 0.0
        self._published: dict[str, tuple[int | None, list[lsp.Diagnostic], int]] = {}
        self._publishes = 0
        self._changed = asyncio.Event()
        self._drain: asyncio.Task[None] | None = None

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            self._publishes += 1
            found = list(params.diagnostics)
            self._published[params.uri] = (params.version, found, self._publishes)
            self._changed.set()

        for method in _IGNORED:  # a server's chatter, not ours to answer or show
            self.client.feature(method)(_ignore)

    @property
    def name(self) -> str:
        return os.path.basename(self.argv[0])

    async def start(self) -> None:
        try:
            await self.client.start_io(
                self.argv[0],
                *self.argv[1:],
                cwd=self.project,
                env=self.env,
                start_new_session=True,
                preexec_fn=forked_here(reset_signals),
            )
        except OSError as exc:
            raise ServerFailed(f"{self.name} could not start: {exc.strerror or exc}") from None
        server = getattr(self.client, "_server", None)
        if server is not None and server.stderr is not None:
            self._drain = asyncio.get_running_loop().create_task(_drain(server.stderr))
        root = Path(self.project).as_uri()
        params = lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=root,
            workspace_folders=[lsp.WorkspaceFolder(root, os.path.basename(self.project))],
            capabilities=lsp.ClientCapabilities(
                text_document=lsp.TextDocumentClientCapabilities(
                    synchronization=lsp.TextDocumentSyncClientCapabilities(),
                    publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                        version_support=True
                    ),
                    diagnostic=lsp.DiagnosticClientCapabilities(),
                    document_symbol=lsp.DocumentSymbolClientCapabilities(
                        hierarchical_document_symbol_support=True
                    ),
                )
            ),
        )
        try:
            result = await within(self.client.initialize_async(params), START_TIMEOUT)
        except (TimeoutError, Exception) as exc:
            await self.stop()
            raise ServerFailed(f"{self.name} did not start: {_why(exc)}") from None
        self.pull = result.capabilities.diagnostic_provider is not None
        self.client.initialized(lsp.InitializedParams())

    async def diagnostics(self, path: str, text: str, language_id: str) -> list[lsp.Diagnostic]:
        """The diagnostics of `path` with contents `text`, for that version."""
        self.last_used = time.monotonic()
        uri = Path(path).as_uri()
        try:
            return await within(self._diagnose(uri, text, language_id), ANSWER_TIMEOUT)
        except TimeoutError:
            raise ServerFailed(f"{self.name} gave no diagnostics in {ANSWER_TIMEOUT:g} s") from None
        finally:
            self.last_used = time.monotonic()

    async def _diagnose(self, uri: str, text: str, language_id: str) -> list[lsp.Diagnostic]:
        seen = self._publishes
        sent = time.monotonic()
        version = self.versions.get(uri, 0) + 1
        self.versions[uri] = version
        if version == 1:
            item = lsp.TextDocumentItem(uri, language_id, version, text)
            self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(item))
        else:
            document = lsp.VersionedTextDocumentIdentifier(version, uri)
            change = lsp.TextDocumentContentChangeWholeDocument(text)
            self.client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(document, [change])
            )
        if self.pull:
            report = await self.client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(uri))
            )
            self.answered_in = time.monotonic() - sent
            if isinstance(report, lsp.RelatedFullDocumentDiagnosticReport):
                return list(report.items)
            return []
        return await self._settled(uri, version, seen, sent)

    async def _settled(
        self, uri: str, version: int, seen: int, sent: float
    ) -> list[lsp.Diagnostic]:
        while True:  # a publish for this version (or, unversioned, after the change)
            found = self._published.get(uri)
            if found is not None and found[2] > seen and found[0] in (None, version):
                break
            self._changed.clear()
            await self._changed.wait()
        self.answered_in = time.monotonic() - sent
        # Then round trips with no newer publish behind them: one for a server that names
        # the version, two in a row for one that does not (it may publish a document's
        # diagnostics in parts, syntax before types, as typescript-language-server does).
        needed = 1 if found[0] is not None else QUIET_ROUND_TRIPS
        quiet = 0
        while quiet < needed:
            latest = self._published[uri][2]
            await self.client.text_document_document_symbol_async(
                lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri))
            )
            quiet = quiet + 1 if self._published[uri][2] == latest else 0
        return list(self._published[uri][1])

    def current(self) -> dict[str, list[lsp.Diagnostic]]:
        """The latest diagnostics the server published, by document URI."""
        return {uri: list(found[1]) for uri, found in self._published.items()}

    async def stop(self) -> None:
        with contextlib.suppress(Exception):
            await within(self.client.shutdown_async(None), 5)
            self.client.exit(None)
        with contextlib.suppress(Exception):
            await within(self.client.stop(), 5)
        server = getattr(self.client, "_server", None)
        if server is not None and server.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(server.pid, 9)
        if self._drain is not None:
            self._drain.cancel()


_IGNORED = (
    lsp.WINDOW_LOG_MESSAGE,
    lsp.WINDOW_SHOW_MESSAGE,
    lsp.TELEMETRY_EVENT,
    lsp.PROGRESS,
    "$/typescriptVersion",
)


def _ignore(params: Any) -> None:
    return None


def _converter() -> Any:
    """lsprotocol's converter, reading past the notebook sync options some servers send in
    a shape it cannot read (pylsp); melgui opens no notebooks."""
    converter = default_converter()
    read = converter.get_structure_hook(lsp.ServerCapabilities)

    def capabilities(value: Any, kind: Any) -> lsp.ServerCapabilities:
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != "notebookDocumentSync"}
        return read(value, kind)

    converter.register_structure_hook(lsp.ServerCapabilities, capabilities)
    return converter


async def _drain(stream: asyncio.StreamReader) -> None:
    with contextlib.suppress(Exception):
        while await stream.read(65536):
            pass


def _why(exc: BaseException) -> str:
    return "no answer in time" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
