"""An MCP server that needs an OAuth sign-in, with its own authorization server, both on
loopback and both built from the SDK's server-side auth support.

    python -m tests.fakes.oauth_server --as-port A --rs-port B [--expires S] [--pre-redirect URI]

The authorization server (http://127.0.0.1:A) publishes its metadata, registers clients
dynamically (with --pre-redirect it also knows a pre-registered client, `melgui-pre` /
`pre-secret`), and
consents at once: /authorize redirects straight to the client's redirect URI with a code,
as a person clicking "Allow" would. The MCP server (http://127.0.0.1:B/mcp) publishes its
protected-resource metadata and answers 401 without a token. GET /test/events on the
authorization server lists what happened (registrations, authorizations, grants by type,
revocations), so tests can tell a refresh from a new sign-in; POST /test/expire makes
every access token run out now.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SCOPE = "files:read"
PRE_ID, PRE_SECRET = "melgui-pre", "pre-secret"


class InstantConsent:
    """An authorization server provider that says yes at once and keeps a diary."""

    def __init__(self, expires: int) -> None:
        self.expires = expires
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.events: list[dict[str, Any]] = []

    def preregister(self, redirect: str) -> None:
        self.clients[PRE_ID] = OAuthClientInformationFull(
            client_id=PRE_ID,
            client_secret=PRE_SECRET,
            redirect_uris=[AnyUrl(redirect)],
            token_endpoint_auth_method="client_secret_basic",
            scope=SCOPE,
        )

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id
        self.clients[client_info.client_id] = client_info
        self.events.append({"kind": "register", "client": client_info.client_id})

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.events.append(
            {"kind": "authorize", "client": client.client_id, "scopes": params.scopes}
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.expires + 1  # whole seconds: never early
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            expires_in=self.expires,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.events.append({"kind": "grant", "type": "authorization_code"})
        return self._issue(
            client.client_id or "", authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        self.events.append({"kind": "grant", "type": "refresh_token"})
        return self._issue(
            client.client_id or "", scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)
        self.events.append({"kind": "revoke"})


def authorization_server(provider: InstantConsent, issuer: str) -> Starlette:
    routes = create_auth_routes(
        provider=provider,
        issuer_url=AnyHttpUrl(issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )

    async def events(request: Request) -> JSONResponse:
        return JSONResponse(provider.events)

    async def expire(request: Request) -> JSONResponse:
        """Every access token runs out now (as time would make it)."""
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(provider.access)})

    routes.append(Route("/test/events", events, methods=["GET"]))
    routes.append(Route("/test/expire", expire, methods=["POST"]))
    return Starlette(routes=routes)


def resource_server(provider: InstantConsent, issuer: str, url: str) -> Starlette:
    server = MCPServer(
        "guarded",
        token_verifier=ProviderTokenVerifier(provider),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(url),
            required_scopes=[SCOPE],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    async def secret_files(ctx: Context) -> str:
        """The files only a signed-in person may list."""
        return "plans.md, budget.xlsx"

    return server.streamable_http_app()


async def serve(as_port: int, rs_port: int, expires: int, pre_redirect: str) -> None:
    issuer = f"http://127.0.0.1:{as_port}"
    url = f"http://127.0.0.1:{rs_port}/mcp"
    provider = InstantConsent(expires)
    if pre_redirect:
        provider.preregister(pre_redirect)
    servers = [
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        for app, port in (
            (authorization_server(provider, issuer), as_port),
            (resource_server(provider, issuer, url), rs_port),
        )
    ]
    await asyncio.gather(*(s.serve() for s in servers))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--as-port", type=int, required=True)
    parser.add_argument("--rs-port", type=int, required=True)
    parser.add_argument("--expires", type=int, default=3600)
    parser.add_argument("--pre-redirect", default="", help="the pre-registered client's URI")
    options = parser.parse_args()
    asyncio.run(serve(options.as_port, options.rs_port, options.expires, options.pre_redirect))


if __name__ == "__main__":
    main()
