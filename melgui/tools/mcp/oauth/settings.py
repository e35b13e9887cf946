"""A server's `oauth` entry in mcp.json: how melgui signs in to it.

    "oauth": false                      never sign in (a token in `headers`, or none)
    "oauth": {
      "clientId": "...", "clientSecret": "${keyring:NAME}",   a client the owner registered
      "privateKey": "-----BEGIN ..." or a file,  "signingAlgorithm": "ES256",
                                        private_key_jwt client authentication (RFC 7523)
      "issuer": "https://auth.example",   the authorization server those credentials belong to
      "grant": "client_credentials",      never open a browser (a machine's own credentials)
      "identityProvider": {"tokenEndpoint" or "issuer", "clientId", "clientSecret",
                           "idToken"},    enterprise-managed sign-in (an ID token exchanged)
      "clientMetadataUrl": "https://...", a client ID metadata document melgui is known by
      "scopes": [...], "callbackPort": 8765}

Without a client of its own melgui registers itself where the server allows. Secrets may be
`${keyring:NAME}` / `${env:NAME}` references, resolved only when the server starts.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Grant = Literal["", "authorization_code", "client_credentials"]
_GRANTS: tuple[Grant, ...] = ("", "authorization_code", "client_credentials")


@dataclass(frozen=True)
class IdentityProvider:
    """The enterprise identity provider whose ID token is exchanged for an ID-JAG (SEP-990)."""

    token_endpoint: str = ""
    issuer: str = ""  # where its token endpoint is found, when not given
    client_id: str = ""
    client_secret: str = ""
    id_token: str = ""

    def __bool__(self) -> bool:
        return bool(self.id_token and (self.token_endpoint or self.issuer))


@dataclass(frozen=True)
class OAuthSettings:
    enabled: bool = True
    client_id: str = ""
    client_secret: str = ""  # may be a ${keyring:…} reference until the server starts
    scopes: tuple[str, ...] = ()
    callback_port: int = 0
    client_metadata_url: str = ""  # an https URL used as client_id where the server allows
    private_key: str = ""  # PEM text or a file's path (a reference until the server starts)
    signing_algorithm: str = ""
    issuer: str = ""
    grant: Grant = ""  # "": the one the authorization server offers
    identity_provider: IdentityProvider = IdentityProvider()

    def resolved(self, resolve: Callable[[str], str]) -> OAuthSettings:
        """Its secrets with their references replaced, and a key file read."""
        key = resolve(self.private_key)
        if key and not key.lstrip().startswith("-----BEGIN"):
            path = os.path.expanduser(key)
            try:
                with open(path, encoding="utf-8") as file:
                    key = file.read()
            except OSError as exc:
                raise ValueError(f"oauth.privateKey: cannot read {path} ({exc.strerror})") from None
        idp = self.identity_provider
        return dataclasses.replace(
            self,
            client_secret=resolve(self.client_secret),
            private_key=key,
            identity_provider=dataclasses.replace(
                idp, client_secret=resolve(idp.client_secret), id_token=resolve(idp.id_token)
            ),
        )

    def secrets(self) -> list[str]:
        """What a log must never show."""
        idp = self.identity_provider
        found = [self.client_secret, self.private_key, idp.client_secret, idp.id_token]
        return [text for text in found if text]


def _text(value: dict[str, Any], key: str, where: str) -> str:
    found = value.get(key, "")
    if not isinstance(found, str):
        raise ValueError(f"{where}.{key} must be text")
    return found


def _identity_provider(value: Any) -> IdentityProvider:
    if value is None:
        return IdentityProvider()
    if not isinstance(value, dict):
        raise ValueError("oauth.identityProvider must be an object")
    keys = ("tokenEndpoint", "issuer", "clientId", "clientSecret", "idToken")
    endpoint, issuer, client, secret, token = (
        _text(value, key, "oauth.identityProvider") for key in keys
    )
    found = IdentityProvider(endpoint, issuer, client, secret, token)
    if not found:
        raise ValueError("oauth.identityProvider needs idToken and tokenEndpoint (or issuer)")
    return found


def parse_oauth(value: Any) -> OAuthSettings:
    """`true`/`false` or the object above; raises ValueError saying what is wrong."""
    if isinstance(value, bool):
        return OAuthSettings(enabled=value)
    if not isinstance(value, dict):
        raise ValueError("oauth must be false or an object")
    scopes = value.get("scopes") or []
    if isinstance(scopes, str):
        scopes = scopes.split()
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise ValueError("oauth.scopes must be a list of text")
    port = value.get("callbackPort", 0)
    if not isinstance(port, int) or not 0 <= port < 65536:
        raise ValueError("oauth.callbackPort must be a port number")
    keys = ("clientId", "clientSecret", "clientMetadataUrl", "privateKey", "signingAlgorithm")
    client_id, secret, metadata_url, key, algorithm = (_text(value, k, "oauth") for k in keys)
    named = _text(value, "grant", "oauth")
    grant = next((g for g in _GRANTS if g == named), None)
    if grant is None:
        raise ValueError('oauth.grant must be "authorization_code" or "client_credentials"')
    if (key or grant == "client_credentials") and not client_id:
        raise ValueError("oauth.clientId is needed with a privateKey or client_credentials")
    return OAuthSettings(
        enabled=True,
        client_id=client_id,
        client_secret=secret,
        scopes=tuple(scopes),
        callback_port=port,
        client_metadata_url=metadata_url,
        private_key=key,
        signing_algorithm=algorithm,
        issuer=_text(value, "issuer", "oauth"),
        grant=grant,
        identity_provider=_identity_provider(value.get("identityProvider")),
    )
