"""The host served to views: over the user's Unix socket (peer uid checked) or over
stdio, newline-delimited JSON-RPC (wire.py), changes sent at most once a frame.

    server = HostServer(Host.open(), idle_exit=600)
    await server.serve_socket(place)     # until idle with nobody attached, or shutdown
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any, get_args

from melgui import lean_start
from melgui.core.context.preview import keep_from_json
from melgui.core.protocol.catalog import Role
from melgui.core.protocol.messages import Message
from melgui.core.protocol.transport import TransportError
from melgui.core.store.checkpoints.restore import CHOICES
from melgui.core.store.checkpoints.shadow import GitError
from melgui.core.terminal.kept import KeptTerminals, TerminalError, terminal_methods
from melgui.core.terminal.passed_pipes import CHANNEL, hand_pipe, own_socket
from melgui.desk.mcp.hosted import HostMcp
from melgui.host import wire
from melgui.host.changes import SequenceAhead
from melgui.host.folder_methods import FolderMethods
from melgui.host.host import Host, KeyRefused, UnknownSession
from melgui.host.notify import HostNotifier, UnseenQuestions
from melgui.host.place import HostPlace, peer_uid
from melgui.host.records import agent_command, worktree_given
from melgui.host.session import agent_methods
from melgui.host.tool_calls import ToolCalls
from melgui.host.wire import RpcError, api_key_of, hidden, parts_of

log = logging.getLogger(__name__)

FRAME = 1 / 60
HOOKS_CHECK = 1.0  # seconds between looks at watched folders' hooks files (a hand edit)
# Seconds with no request and no turn running before the memory freed since is given
# back (lean_start.give_back_free_memory): a host mostly waits, for hours.
QUIET = 1.0
# A view that reads too slowly is let go past this much unsent output; it reattaches with
# the last number it has and misses nothing.
MAX_BACKLOG = 64 * 1024 * 1024


class ViewConnection:
    def __init__(
        self, server: HostServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.client = ""
        self.initialized = False
        self.attached: set[str] = set()
        self.hears_tools = False  # tools/attach or tools/run: it hears tools/result
        self.hooks_of: set[str] = set()  # folders whose hooks it watches (hooks/changed)
        self.channel: socket.socket | None = None  # terminals' pipes go there: passed_pipes.py

    def notify(self, method: str, params: dict[str, Any], payload: bytes | None = None) -> None:
        if payload is None:
            self.send(wire.notification(method, params))
        elif not self.writer.is_closing():
            self.writer.write(wire.encode_with_payload(method, params, payload))

    def hand_pipe(self, term_id: str) -> int | None:
        return hand_pipe(self.channel, term_id) if self.channel is not None else None

    def send(self, message: wire.Message) -> None:
        if self.writer.is_closing():
            return
        transport = self.writer.transport
        if transport.get_write_buffer_size() > MAX_BACKLOG:
            log.warning("view %s reads too slowly: let go", self.client)
            self.writer.close()
            return
        self.writer.write(hidden(wire.encode(message), self.server.host.sent_keys))

    async def run(self) -> None:
        try:
            while True:
                try:
                    line = await self.reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    self.send(wire.failure(None, RpcError(wire.INVALID_REQUEST, "line too long")))
                    break
                except ConnectionError:
                    break
                if not line:
                    break
                if not line.strip():
                    continue
                await self._handle(line)
        finally:
            self.server.connections.discard(self)
            self.server.terminals.detach(self)  # they run on, for the next view
            if self.channel is not None:
                self.channel.close()
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()

    async def _handle(self, line: bytes) -> None:
        ident: Any = None
        try:
            message = wire.decode(line)
            ident = message.get("id")
            method = message.get("method")
            params = message.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict):
                raise RpcError(wire.INVALID_REQUEST, "a request needs a method and object params")
            value = await self.server.dispatch(self, method, params)
        except RpcError as exc:
            if ident is not None or exc.code == wire.PARSE_ERROR:
                self.send(wire.failure(ident, exc))
            if exc.code == wire.VERSION_MISMATCH:
                await self.writer.drain()
                self.writer.close()
            return
        except Exception as exc:  # a handler's fault is the caller's error, never the host's end
            log.exception("request failed")
            if ident is not None:
                self.send(wire.failure(ident, RpcError(wire.INTERNAL_ERROR, str(exc))))
            return
        if ident is not None:
            self.send(wire.result(ident, value))


Handler = Callable[[ViewConnection, dict[str, Any]], Awaitable[Any]]


class HostServer:
    def __init__(self, host: Host, *, idle_exit: float | None = 600.0) -> None:
        self.host = host
        self.idle_exit = idle_exit
        self.connections: set[ViewConnection] = set()
        self.notifier = HostNotifier()
        self.unseen = UnseenQuestions(self.notifier)  # said on the desktop, once each
        self._done = asyncio.Event()
        self._asked_at: float | None = None  # the last request's time, until given back
        # Single tool calls of loops that run in the view (a remote folder).
        self.tool_calls = ToolCalls()
        self.folder = FolderMethods(self.tool_calls, self.connections)
        # The MCP servers its own sessions call: the first desk of each folder runs them.
        self.mcp = HostMcp(host.desk_for, self.connections, host.loops_on)
        host.on_desk = self.mcp.adopt
        for desk in list(host.desks.values()):  # the sessions it reopened
            self.mcp.adopt(desk)
        # Terminal panes of views elsewhere (a remote folder's), kept across their drops.
        self.terminals = KeptTerminals()
        self._offered: dict[str, ViewConnection] = {}  # channel tokens, not yet said back
        self._handlers: dict[str, Handler] = {
            "host/status": self._status,
            "host/shutdown": self._shutdown,
            "session/open": self._open,
            "session/list": self._list,
            "history/list": self._history,
            "models/list": self._models,
            "session/attach": self._attach,
            "session/detach": self._detach,
            "session/close": self._close,
            "session/key": self._key,
            "turn/prompt": self._prompt,
            "turn/stop": self._stop,
            "turn/compact": self._compact,
            "session/branch": self._branch,
            "session/rewind": self._rewind,
            "context/measure": self._measure,
            "context/pin": self._pin,
            "context/unpin": self._unpin,
            "session/preface": self._preface,
            "approval/answer": self._answer,
            "compaction/answer": self._answer_compaction,
            **agent_methods(self.host.session),
            "settings/update": self._settings,
            "host/ping": self._ping,
            CHANNEL: self._channel,
            **self.folder.methods(),
            **self.mcp.methods(),
            **terminal_methods(self.terminals),
        }

    # -- serving -------------------------------------------------------------------------

    async def serve_socket(self, place: HostPlace) -> None:
        with contextlib.suppress(FileNotFoundError):
            place.socket.unlink()  # a dead host's socket: the lock says none runs
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(place.socket))
        os.chmod(place.socket, 0o600)
        listener.listen(64)
        server = await asyncio.start_unix_server(self._accept, sock=listener, limit=wire.MAX_LINE)
        try:
            await self._serve()
        finally:
            server.close()
            with contextlib.suppress(FileNotFoundError):
                place.socket.unlink()

    async def serve_stdio(self) -> None:
        """One view on stdin/stdout; the host ends when stdin closes."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=wire.MAX_LINE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout
        )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        connection = ViewConnection(self, reader, writer)
        self.connections.add(connection)
        viewing = asyncio.create_task(connection.run())
        viewing.add_done_callback(lambda _: self._done.set())
        self.idle_exit = None
        await self._serve()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = writer.get_extra_info("socket")
        uid = peer_uid(raw) if raw is not None else -1
        if uid != os.getuid():
            refusal = RpcError(
                wire.REFUSED, f"refused: this host serves uid {os.getuid()}, not uid {uid}"
            )
            writer.write(wire.encode(wire.failure(None, refusal)))
            with contextlib.suppress(Exception):
                await writer.drain()
            writer.close()
            return
        connection = ViewConnection(self, reader, writer)
        self.connections.add(connection)
        await connection.run()

    async def _serve(self) -> None:
        ticking = asyncio.create_task(self._tick())
        try:
            await self._done.wait()
        finally:
            ticking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticking
            self.broadcast()
            for connection in list(self.connections):
                connection.writer.close()
            await self.notifier.aclose()
            await self.tool_calls.aclose()
            await self.mcp.aclose()
            await self.terminals.aclose()
            await self.host.aclose()

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        idle_since = hooks_checked = loop.time()
        while True:
            await asyncio.sleep(FRAME)
            self.broadcast()
            attached = {s for connection in self.connections for s in connection.attached}
            self.unseen.tell(self.host.sessions.values(), attached, self.mcp)
            if loop.time() - hooks_checked >= HOOKS_CHECK:
                hooks_checked = loop.time()
                self.tool_calls.check_hooks()
            asked = self._asked_at
            if asked is not None and loop.time() - asked >= QUIET and not self.host.running():
                self._asked_at = None
                lean_start.give_back_free_memory()
            if self.connections or self._runs_something():
                idle_since = loop.time()
            elif self.idle_exit is not None and loop.time() - idle_since >= self.idle_exit:
                log.info("idle with no view attached: exiting")
                self._done.set()
                return

    def broadcast(self, only: str | None = None) -> None:
        """Send each session's batch of this frame to the views attached to it."""
        if only is not None:
            session = self.host.sessions.get(only)
            batches = [(only, session.flush())] if session is not None else []
        else:
            batches = self.host.frame()
        for session_id, batch in batches:
            if not batch:
                continue
            message = wire.notification(
                "session/changes", {"session": session_id, "changes": batch}
            )
            for connection in list(self.connections):
                if session_id in connection.attached:
                    connection.send(message)

    def stop(self) -> None:
        self._done.set()

    # -- requests ------------------------------------------------------------------------

    async def dispatch(self, view: ViewConnection, method: str, params: dict[str, Any]) -> Any:
        self._asked_at = asyncio.get_running_loop().time()
        if method == "initialize":
            return self._initialize(view, params)
        if not view.initialized and not (method == CHANNEL and "token" in params):
            raise RpcError(wire.NOT_INITIALIZED, "send initialize first")
        handler = self._handlers.get(method)
        if handler is None:
            raise RpcError(wire.METHOD_NOT_FOUND, f"no method {method!r}")
        try:
            return await handler(view, params)
        except UnknownSession as exc:
            raise RpcError(
                wire.UNKNOWN_SESSION, f"no session {exc.args[0]!r} in this host"
            ) from None
        except (KeyError, TypeError) as exc:
            raise RpcError(wire.INVALID_PARAMS, f"{method}: bad params ({exc})") from None
        except TerminalError as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None

    def _initialize(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        theirs = str(params.get("version", "?"))
        if theirs != wire.VERSION or params.get("protocol") != wire.PROTOCOL:
            # Only to a window (it starts a host of its own), never `--status` or exec.
            gives_way = params.get("client") == "window" and self._idle_apart_from(view)
            if gives_way:  # after the refusal is written
                asyncio.get_running_loop().call_soon(self.stop)
            said = wire.version_refusal(theirs, wire.VERSION, params.get("protocol"), gives_way)
            data = {"host": wire.VERSION, "view": theirs, "protocol": wire.PROTOCOL}
            raise RpcError(wire.VERSION_MISMATCH, said, {**data, "gives_way": gives_way})
        view.initialized = True
        view.client = str(params.get("client", ""))
        return {"version": wire.VERSION, "protocol": wire.PROTOCOL, "pid": os.getpid(),
                "notices": list(self.host.notices)}  # fmt: skip

    def _runs_something(self) -> bool:
        """A turn, a question, a terminal, a call or an ACP agent runs (with no view)."""
        calls = self.tool_calls.busy() or self.terminals.running()
        return calls or bool(self.host.running()) or self.host.agents_alive()

    def _idle_apart_from(self, view: ViewConnection) -> bool:
        """Nothing would be lost if this host ended now: it would give way to a window of
        another version (a host for views, not a view's child over stdio)."""
        others = any(c is not view and c.initialized for c in self.connections)
        return self.idle_exit is not None and not others and not self._runs_something()

    async def _status(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        return {
            "pid": os.getpid(),
            "version": wire.VERSION,
            "views": sum(1 for c in self.connections if c is not view),  # not the asker
            "sessions": [s.describe() for s in self.host.sessions.values()],
            "terminals": self.terminals.list(asker=view),
        }

    async def _channel(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Offer a channel (a token), or make this connection the channel of the view offered it."""
        if (raw := view.writer.get_extra_info("socket")) is not None and "token" not in params:
            self._offered[token := os.urandom(16).hex()] = view
            return {"token": token}
        owner = self._offered.pop(str(params.get("token")), None)
        if owner is None or raw is None or owner not in self.connections or owner.channel:
            raise RpcError(wire.INVALID_PARAMS, "no channel was offered with this token")
        self.connections.discard(view)  # not a view: it only carries the pipes
        owner.channel = own_socket(raw)
        return {}

    async def _shutdown(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        asyncio.get_running_loop().call_soon(self.stop)
        return {}

    async def _open(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        api_key = api_key_of(params)
        self.host.hide(api_key or "")  # before anything can fail and say it
        folder = params["folder"]
        if not isinstance(folder, str) or not os.path.isdir(folder):
            raise RpcError(wire.INVALID_PARAMS, f"{folder!r} is not a folder")
        if params.get("agent") is not None:
            resume = params.get("resume")
            agent = await self.host.open_agent(
                os.path.realpath(folder), agent_command(params["agent"]),
                source=str(params.get("source") or ""),
                resume=resume if isinstance(resume, str) and resume else None,
            )  # fmt: skip
            return agent.describe()
        session = await self.host.open_session(
            os.path.realpath(folder),
            conversation=params.get("conversation"),
            model=str(params.get("model", "")),
            role=str(params.get("role", "assistant")),
            settings=params.get("settings"),
            worktree=worktree_given(params.get("worktree")),
            api_key=api_key,
            source=str(params.get("source") or ""),
        )
        return session.describe()

    async def _key(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The key again, for a session opened with one that a restarted host reopened
        without it (its `key_needed` notice)."""
        try:
            self.host.give_key(str(params["session"]), api_key_of(params, required=True) or "")
        except KeyRefused as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        return {}

    async def _list(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Every session, with how many views other than the asker are attached to it
        (`views`: a window's main conversation another window shows is not taken)."""
        others = [c.attached for c in self.connections if c is not view]
        return [
            {**s.describe(), "views": sum(s.id in attached for attached in others)}
            for s in self.host.sessions.values()
        ]

    async def _history(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        folder, query = params["folder"], params.get("query") or ""
        if not isinstance(folder, str) or not isinstance(query, str):
            raise RpcError(wire.INVALID_PARAMS, "history/list takes a folder and a query")
        return self.host.history(folder, query)

    async def _models(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The models of the connection `settings` (a view's) name, asked from here."""
        desk = self.host.desk_for(params["folder"], params.get("settings") or {})
        try:
            models = await desk.connection.list_models()
        except TransportError as exc:
            raise RpcError(wire.REFUSED, str(exc), {"status": exc.status}) from exc
        return {"models": [dataclasses.asdict(m) for m in models]}

    async def _attach(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """{"sessions": {id: last seq the view has, or null}}: for each, the changes it
        missed, or a snapshot when it has none (or a number this host never gave).
        No await from here to the end: no change can slip between the answer and the
        numbered changes that follow it."""
        wanted = params["sessions"]
        page = params.get("page")
        if page is not None and (not isinstance(page, int) or page < 1):
            raise RpcError(wire.INVALID_PARAMS, f"page must be a number of messages, not {page!r}")
        answer: dict[str, Any] = {}
        for session_id, since in wanted.items():
            session = self.host.session(session_id)
            self.broadcast(only=session_id)  # what others have not had yet goes to them first
            if since is None:
                answer[session_id] = {"snapshot": session.snapshot(page)}
            else:
                try:
                    answer[session_id] = {"changes": session.log.since(int(since))}
                except SequenceAhead as exc:
                    answer[session_id] = {"snapshot": session.snapshot(), "reset": str(exc)}
            view.attached.add(session_id)
        return answer

    async def _detach(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        view.attached.discard(params["session"])
        return {}

    async def _close(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        await self.host.close_session(params["session"])
        return {}

    async def _prompt(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        text = params["text"]
        if not isinstance(text, str) or not text.strip():
            raise RpcError(wire.INVALID_PARAMS, "the prompt is empty")
        self.host.session(params["session"]).prompt(text, parts_of(params))
        return {}

    async def _stop(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        return {"dropped": self.host.session(params["session"]).stop()}

    async def _compact(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        self.host.session(params["session"]).compact()
        return {}

    async def _branch(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Cut the conversation back to its first `keep` messages (Retry, Edit): the
        views hear the new list as a `branched` record. No await: the answer goes before
        the changes it made."""
        session = self.host.session(params["session"])
        reason = params.get("reason")
        if reason not in ("retry", "edit", "rewind"):
            raise RpcError(wire.INVALID_PARAMS, "reason is retry, edit or rewind")
        keep, given = params.get("keep"), params.get("messages")
        if given is None and not isinstance(keep, int):
            raise RpcError(wire.INVALID_PARAMS, f"keep is a number of messages, not {keep!r}")
        try:
            listed = None if given is None else [Message.from_json(m) for m in given]
            session.branch(keep, reason, str(params.get("note", "")), listed)
        except (ValueError, RuntimeError) as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        return {}

    async def _rewind(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Rewind to before a user message: files and list in one step (HostedSession)."""
        session = self.host.session(params["session"])
        index, text, choices = params.get("index"), params.get("text"), params.get("choices") or {}
        if not isinstance(index, int) or not isinstance(text, str | None):
            raise RpcError(wire.INVALID_PARAMS, "index is a message's number, text its words")
        if not isinstance(choices, dict) or not set(choices.values()) <= set(CHOICES):
            raise RpcError(wire.INVALID_PARAMS, f"choices maps a path to one of {CHOICES}")
        try:
            return await session.rewind(
                index, text, plan_only=bool(params.get("plan_only")), choices=choices,
                continue_from_there=bool(params.get("continue")),
            )  # fmt: skip
        except (ValueError, RuntimeError) as exc:  # not the person's message; a turn runs
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        except (GitError, OSError) as exc:
            raise RpcError(wire.INTERNAL_ERROR, f"could not rewind: {exc}") from exc

    async def _measure(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        session = self.host.session(params["session"])
        as_sent, breakdown = bool(params.get("as_sent")), bool(params.get("breakdown"))
        return session.measure(as_sent=as_sent, breakdown=breakdown)

    async def _pin(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The person pins a fact (the model reads it with the next message); the views
        see it in the thread's state. `pinned`: false when blank or pinned already."""
        text = params["text"]
        if not isinstance(text, str):
            raise RpcError(wire.INVALID_PARAMS, "text is the fact to pin")
        return {"pinned": self.host.session(params["session"]).agent.pin(text)}

    async def _unpin(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        text = params["text"]
        if not isinstance(text, str):
            raise RpcError(wire.INVALID_PARAMS, "text is the pinned fact")
        return {"unpinned": self.host.session(params["session"]).agent.unpin(text)}

    async def _preface(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A note the model reads at the start of the next message (what the person did
        meanwhile: a file of a call's rejected)."""
        note = params["note"]
        if not isinstance(note, str) or not note.strip():
            raise RpcError(wire.INVALID_PARAMS, "note is the words the model reads")
        self.host.session(params["session"]).agent.preface(note)
        return {}

    async def _answer(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        session = self.host.session(params["session"])
        decision = params["decision"]
        if decision not in ("approve", "deny"):
            raise RpcError(wire.INVALID_PARAMS, "decision is approve or deny")
        answered = session.answer(
            str(params["call"]), decision, str(params.get("remember", "once")),
            str(params.get("reason", "")), str(params.get("option") or ""),
        )  # fmt: skip
        return {"answered": answered}

    async def _answer_compaction(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A person's answer to the preview before a compaction: the items to keep word for
        word (`keep`), or null: not now."""
        session = self.host.session(params["session"])
        try:
            keep = keep_from_json(params.get("keep"))
        except ValueError as exc:
            raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
        return {"answered": session.answer_compaction(str(params["id"]), keep)}

    async def _settings(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        session = self.host.session(params["session"])
        model = params.get("model")
        if isinstance(model, str) and model:
            session.agent.loop.model = model
        role = params.get("role")
        if role is not None:
            if role not in get_args(Role):
                raise RpcError(wire.INVALID_PARAMS, f"no role {role!r}")
            session.agent.loop.role = role
        plan = params.get("plan")
        if isinstance(plan, bool):
            session.agent.loop.plan.on = plan
        preview = params.get("compaction_preview")
        if isinstance(preview, bool):
            session.preview_compactions(preview)
        approval = params.get("approval")
        if approval is not None:
            if not isinstance(approval, dict):
                raise RpcError(wire.INVALID_PARAMS, "approval is {modes, rules, project_rules}")
            try:
                problems = self.host.set_approval(session.id, approval)
            except ValueError as exc:
                raise RpcError(wire.INVALID_PARAMS, str(exc)) from None
            if problems:
                log.warning("session %s: rules not read: %s", session.id, "; ".join(problems))
        return session.describe()

    # -- single tool calls (the loop runs in the view) -----------------------------------

    async def _ping(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        return {"host": self.tool_calls.host_id}
