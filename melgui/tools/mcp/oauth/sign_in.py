"""OAuth 2.1 sign-in for an HTTP server, through the SDK's client support.

The SDK's `OAuthClientProvider` does the protocol: protected-resource and
authorization-server metadata discovery, dynamic client registration, authorization code
with PKCE, scope selection and step-up, refresh. This module gives it what belongs to the
app: where the sign-in is kept (oauth.store), a loopback redirect (`http://127.0.0.1:PORT
/callback`), and the person's browser, opened with `webbrowser` (which honours
`$BROWSER`, so scripts and tests supply their own). Whether a browser may open at all is
asked each time (`interactive`): the window signs in only when the person asks, exec
unless told not to.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import socket
import webbrowser
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from pydantic import AnyUrl

from melgui.core.runtime.deadline import within
from melgui.tools.mcp.oauth.grants import auth_method
from melgui.tools.mcp.oauth.provider import ServerProvider
from melgui.tools.mcp.oauth.settings import OAuthSettings
from melgui.tools.mcp.oauth.store import KeptSignIn

# The SDK logs each failed flow with its traceback; melgui says why in the server's state.
logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())
logging.getLogger("mcp.client.auth").propagate = False

SIGN_IN_TIMEOUT = 300.0  # seconds the browser has to come back
CALLBACK_PATH = "/callback"


class SignInError(Exception):
    """Why a sign-in did not complete, in one line."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _port_of(client: OAuthClientInformationFull | None) -> int:
    for uri in (client.redirect_uris or []) if client is not None else []:
        parts = urlsplit(str(uri))
        if parts.hostname in ("127.0.0.1", "localhost") and parts.port:
            return parts.port
    return 0


class Callback:
    """A one-shot HTTP listener on loopback for the authorization server's redirect."""

    def __init__(self, port: int, server_name: str) -> None:
        self.port = port
        self.server_name = server_name
        self.result: asyncio.Future[AuthorizationCodeResult] = (
            asyncio.get_running_loop().create_future()
        )
        self._server: asyncio.Server | None = None

    async def open(self) -> None:
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError as exc:
            raise SignInError(
                f"cannot listen on 127.0.0.1:{self.port} for the sign-in's redirect "
                f"({exc.strerror or exc})"
            ) from None

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await within(reader.readline(), 10)).decode("latin-1")
            while (await within(reader.readline(), 10)) not in (b"\r\n", b"\n", b""):
                pass
            target = line.split(" ")[1] if line.count(" ") >= 2 else ""
            parts = urlsplit(target)
            if parts.path != CALLBACK_PATH:
                self._answer(writer, 404, "Not the sign-in callback.")
            else:
                self._answer(writer, 200, self._take(parse_qs(parts.query)))
            await writer.drain()
        except (TimeoutError, OSError, UnicodeError):
            pass
        finally:
            writer.close()

    def _take(self, query: dict[str, list[str]]) -> str:
        def one(key: str) -> str | None:
            values = query.get(key)
            return values[0] if values else None

        error, code = one("error"), one("code")
        if self.result.done():
            return "This sign-in is already complete; you can close this tab."
        if error:
            why = one("error_description") or error
            self.result.set_exception(SignInError(f"the authorization server said: {why}"))
            return f"Signing in to {self.server_name} failed: {why}"
        if not code:
            return "No authorization code in this address."
        self.result.set_result(
            AuthorizationCodeResult(code=code, state=one("state"), iss=one("iss"))
        )
        return f"Signed in to {self.server_name}. You can close this tab and go back to melgui."

    @staticmethod
    def _answer(writer: asyncio.StreamWriter, status: int, text: str) -> None:
        body = f"<!doctype html><title>melgui</title><p>{html.escape(text)}</p>".encode()
        reason = "OK" if status == 200 else "Not Found"
        head = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        writer.write(head.encode() + body)


class BrowserSignIn:
    """The OAuth side of one HTTP server: `auth()` goes on its httpx client.

    `interactive()` says whether a browser may open now; when it may not, a server that
    asks for a sign-in fails with `needed` set. `on_state` hears "opening the browser" and
    the address, so a view or stderr can show it (the address, when no browser opened).
    """

    def __init__(
        self,
        server_name: str,
        url: str,
        settings: OAuthSettings,
        *,
        interactive: Callable[[], bool],
        on_state: Callable[[str], None] = lambda text: None,
        on_note: Callable[[str], None] = lambda text: None,
        timeout: float = SIGN_IN_TIMEOUT,
    ) -> None:
        self.server_name = server_name
        self.url = url
        self.settings = settings
        self.store = KeptSignIn(url)
        self.interactive = interactive
        self.on_state = on_state
        self.on_note = on_note  # a line for the server's log
        self.timeout = timeout
        self.needed = False  # the server asked and no browser was allowed
        self.failure: str = ""  # why the last sign-in failed
        self._callback: Callback | None = None
        self._port = 0

    def signed_in(self) -> bool:
        return self.store.signed_in()

    def sign_out(self) -> None:
        self.store.forget()

    def auth(self) -> OAuthClientProvider:
        settings = self.settings
        stored = self.store.load().client
        port = settings.callback_port or _port_of(stored) or free_port()
        redirect = AnyUrl(f"http://127.0.0.1:{port}{CALLBACK_PATH}")
        if settings.client_id:
            self._preregister(redirect)
        metadata = OAuthClientMetadata(
            client_name="melgui",
            redirect_uris=[redirect],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=" ".join(settings.scopes) or None,
        )
        self._port = port
        return ServerProvider(
            self.store,
            settings,
            note=self.on_note,
            server_url=self.url,
            client_metadata=metadata,
            redirect_handler=self._open_browser,
            callback_handler=self._wait_for_redirect,
            client_metadata_url=settings.client_metadata_url or None,
        )

    def _preregister(self, redirect: AnyUrl) -> None:
        """A client the server's owner registered: its id (and secret) from the config."""
        settings = self.settings
        record = self.store.load()
        if record.client is None or record.client.client_id != settings.client_id:
            self.store.forget()  # another client's tokens are not this one's
        self.store.keep_client(
            OAuthClientInformationFull(
                client_id=settings.client_id,
                client_secret=settings.client_secret or None,
                redirect_uris=[redirect],
                token_endpoint_auth_method=auth_method(settings, record.server),
            )
        )

    async def _open_browser(self, address: str) -> None:
        self.needed = False
        self.failure = ""
        if not self.interactive():
            self.needed = True
            raise SignInError(f"{self.server_name} asks for a sign-in")
        callback = Callback(self._port, self.server_name)
        await callback.open()
        self._callback = callback
        self.on_state("signing in: finish in the browser")
        opened = await asyncio.to_thread(webbrowser.open, address)
        if not opened:
            self.on_state(f"signing in: no browser opened; open {address}")

    async def _wait_for_redirect(self) -> AuthorizationCodeResult:
        callback = self._callback
        if callback is None:
            raise SignInError("the sign-in did not start")
        try:
            return await within(asyncio.shield(callback.result), self.timeout)
        except TimeoutError:
            self.failure = f"the browser did not come back within {self.timeout:g} s"
            raise SignInError(self.failure) from None
        except SignInError as exc:
            self.failure = str(exc)
            raise
        finally:
            self._callback = None
            await callback.close()
