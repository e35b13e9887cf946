"""An HTTP server's OAuth sign-in, kept where melgui keeps API keys: the system keyring, or
where there is none the protected file (mode 0600), never the plain configuration.

One record per server URL holds the client registration (dynamic or pre-registered), the
tokens, and when the access token expires (an absolute time, so a later run knows to
refresh before it sends a stale token).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)

from melgui.core.config.secrets import delete_api_key, save_secret, stored_secret

PREFIX = "mcp-oauth:"


def secret_name(url: str) -> str:
    return PREFIX + url


@dataclass
class SignInRecord:
    client: OAuthClientInformationFull | None = None
    tokens: OAuthToken | None = None
    expires_at: float | None = None  # time.time() when the access token runs out
    # What discovery found, so a later run refreshes at the right token endpoint.
    server: OAuthMetadata | None = None
    resource: ProtectedResourceMetadata | None = None

    def to_json(self) -> str:
        data: dict[str, Any] = {"expires_at": self.expires_at}
        if self.client is not None:
            data["client"] = self.client.model_dump(mode="json", exclude_none=True)
        for key, model in (
            ("tokens", self.tokens),
            ("server", self.server),
            ("resource", self.resource),
        ):
            if model is not None:
                data[key] = model.model_dump(mode="json", exclude_none=True)
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> SignInRecord:
        try:
            data = json.loads(text)
            client, tokens, server, resource = (
                data.get(k) for k in ("client", "tokens", "server", "resource")
            )
            expires = data.get("expires_at")
            return cls(
                OAuthClientInformationFull.model_validate(client) if client else None,
                OAuthToken.model_validate(tokens) if tokens else None,
                float(expires) if isinstance(expires, int | float) else None,
                OAuthMetadata.model_validate(server) if server else None,
                ProtectedResourceMetadata.model_validate(resource) if resource else None,
            )
        except (ValueError, TypeError, AttributeError):  # a damaged record: sign in again
            return cls()


class KeptSignIn:
    """The SDK's TokenStorage for one server URL, read and written through secrets."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = ""  # a sentence saying where the last write went

    def load(self) -> SignInRecord:
        text = stored_secret(secret_name(self.url))
        return SignInRecord.from_json(text) if text else SignInRecord()

    def save(self, record: SignInRecord) -> None:
        self.where = save_secret(secret_name(self.url), record.to_json()).message

    def signed_in(self) -> bool:
        return self.load().tokens is not None

    def forget(self) -> None:
        """Sign out: the tokens and the registration go (a new sign-in registers again)."""
        delete_api_key(secret_name(self.url))

    # -- TokenStorage --------------------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        return self.load().tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        record = self.load()
        record.tokens = tokens
        record.expires_at = time.time() + tokens.expires_in if tokens.expires_in else None
        self.save(record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.load().client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.keep_client(client_info)

    def keep_discovery(
        self, server: OAuthMetadata | None, resource: ProtectedResourceMetadata | None
    ) -> None:
        record = self.load()
        record.server, record.resource = server, resource
        self.save(record)

    def keep_client(self, client_info: OAuthClientInformationFull) -> None:
        record = self.load()
        record.client = client_info
        self.save(record)
