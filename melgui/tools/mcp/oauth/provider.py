"""The SDK's OAuth provider, with what melgui adds to it.

- It remembers across runs what the SDK keeps only within one: the token's expiry and the
  discovered metadata (so a later run refreshes an expired token at the authorization
  server's token endpoint instead of signing in again).
- It picks the grant from the authorization server's metadata and the server's `oauth`
  entry (grants.py): the browser's authorization code, client credentials, or an
  enterprise identity assertion. A client the owner registered authenticates the way the
  authorization server supports (secret in Basic or the body, or a signed assertion).
- A 2025-03-26 server (no protected-resource metadata) whose root metadata names an issuer
  on its own origin, under a path, is read as that spec defines its authorization
  server: the server's origin (the well-known address melgui read is built from it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.oauth2 import OAuthContext

from melgui.tools.mcp.oauth.grants import (
    ASSERTION_TYPE,
    JWT_BEARER,
    auth_method,
    check_issuer,
    client_assertion,
    flow_for,
    id_jag,
    origin_of,
)
from melgui.tools.mcp.oauth.settings import OAuthSettings
from melgui.tools.mcp.oauth.store import KeptSignIn

LEGACY_METADATA = "/.well-known/oauth-authorization-server"


class _Context(OAuthContext):
    """The SDK's context, adding a client assertion to every token request of a client
    that authenticates with its private key."""

    settings: OAuthSettings = OAuthSettings()

    def prepare_token_auth(
        self, data: dict[str, str], headers: dict[str, str] | None = None
    ) -> tuple[dict[str, str], dict[str, str]]:
        data, headers = super().prepare_token_auth(data, headers)
        client = self.client_info
        if client is not None and client.token_endpoint_auth_method == "private_key_jwt":
            data["client_id"] = client.client_id or ""
            data["client_assertion_type"] = ASSERTION_TYPE
            data["client_assertion"] = client_assertion(self.settings, self.oauth_metadata)
        return data, headers


class ServerProvider(OAuthClientProvider):
    def __init__(
        self,
        store: KeptSignIn,
        settings: OAuthSettings,
        *,
        note: Callable[[str], None] = lambda text: None,
        **options: Any,
    ) -> None:
        super().__init__(storage=store, **options)
        base = self.context
        self.context = _Context(
            server_url=base.server_url,
            client_metadata=base.client_metadata,
            storage=base.storage,
            redirect_handler=base.redirect_handler,
            callback_handler=base.callback_handler,
            client_metadata_url=base.client_metadata_url,
        )
        self.context.settings = settings
        self.store = store
        self.settings = settings
        self.note = note

    async def _initialize(self) -> None:
        await super()._initialize()
        record = self.store.load()
        context = self.context
        if context.current_tokens is not None:
            context.token_expiry_time = record.expires_at
        if context.oauth_metadata is None and record.server is not None:
            context.oauth_metadata = record.server
            context.protected_resource_metadata = record.resource
            if record.resource is not None and record.resource.authorization_servers:
                context.auth_server_url = str(record.resource.authorization_servers[0])

    def _select_authorization_server(self, advertised: list[str]) -> str:
        wanted = self.settings.issuer.rstrip("/")
        return next((s for s in advertised if s.rstrip("/") == wanted), advertised[0])

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        self.store.keep_discovery(
            self.context.oauth_metadata, self.context.protected_resource_metadata
        )

    async def _perform_authorization(self) -> httpx2.Request:
        context, settings = self.context, self.settings
        metadata = context.oauth_metadata
        client = context.client_info
        if client is not None and settings.client_id and client.client_id == settings.client_id:
            client.token_endpoint_auth_method = auth_method(settings, metadata)
        flow = flow_for(settings, metadata)
        if flow == "authorization_code":
            return await super()._perform_authorization()
        check_issuer(settings, metadata)
        data: dict[str, str] = {}
        if flow == "identity_assertion":
            audience = str(metadata.issuer) if metadata else origin_of(context.server_url)
            resource = context.get_resource_url()
            assertion = await id_jag(settings.identity_provider, audience, resource)
            data = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": resource}
            data["client_id"] = settings.client_id
        else:
            data = {"grant_type": "client_credentials"}
            if context.should_include_resource_param(context.protocol_version):
                data["resource"] = context.get_resource_url()
        if context.client_metadata.scope:
            data["scope"] = context.client_metadata.scope
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        data, headers = context.prepare_token_auth(data, headers)
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if outgoing is not request:
                    response = await self._legacy_metadata(outgoing, response)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    async def _legacy_metadata(
        self, sent: httpx2.Request, response: httpx2.Response
    ) -> httpx2.Response:
        """A 2025-03-26 server's root metadata, its issuer read as the server's origin when
        it names a path on that same origin (anything else is left for the SDK to judge)."""
        origin = origin_of(self.context.server_url)
        legacy = self.context.auth_server_url is None and str(sent.url) == origin + LEGACY_METADATA
        if not legacy or response.status_code != 200:
            return response
        try:
            metadata = json.loads(await response.aread())
        except ValueError:
            return response
        issuer = metadata.get("issuer") if isinstance(metadata, dict) else None
        if not isinstance(issuer, str) or issuer.rstrip("/") == origin:
            return response
        if origin_of(issuer) != origin:
            return response
        self.note(
            f"the server's 2025-03-26 authorization metadata names {issuer} as its issuer; "
            f"taken as {origin}, the authorization base that spec defines"
        )
        metadata["issuer"] = origin
        return httpx2.Response(200, json=metadata, request=sent)
