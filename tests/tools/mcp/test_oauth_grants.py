"""How a sign-in picks its grant and authenticates a client the owner registered, what the
`oauth` entry accepts, and the 2025-03-26 issuer reading. The flows themselves run end to
end in tests/conformance (client credentials with a secret and with a key, the enterprise
identity assertion, a pre-registered client, CIMD, the legacy metadata)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata

from melgui.tools.mcp.config import ConfigError, parse_server
from melgui.tools.mcp.oauth.grants import auth_method, check_issuer, client_assertion, flow_for
from melgui.tools.mcp.oauth.provider import ServerProvider
from melgui.tools.mcp.oauth.settings import IdentityProvider, OAuthSettings, parse_oauth
from melgui.tools.mcp.oauth.store import KeptSignIn

ISSUER = "https://auth.example"


def metadata(**fields: object) -> OAuthMetadata:
    return OAuthMetadata.model_validate(
        {
            "issuer": ISSUER,
            "authorization_endpoint": ISSUER + "/authorize",
            "token_endpoint": ISSUER + "/token",
            **fields,
        }
    )


def test_the_grant_follows_what_the_server_offers_and_what_melgui_holds() -> None:
    own = OAuthSettings(client_id="c", client_secret="s")
    machine_only = metadata(grant_types_supported=["client_credentials"])
    both = metadata(grant_types_supported=["authorization_code", "client_credentials"])
    assert flow_for(own, machine_only) == "client_credentials"
    assert flow_for(own, both) == "authorization_code"  # a person's sign-in where offered
    assert flow_for(OAuthSettings(), machine_only) == "authorization_code"  # nothing to use
    asked = OAuthSettings(client_id="c", client_secret="s", grant="client_credentials")
    assert flow_for(asked, both) == "client_credentials"
    assert flow_for(own, metadata()) == "authorization_code"  # RFC 8414's default
    idp = IdentityProvider(token_endpoint="https://idp/token", id_token="t")
    enterprise = OAuthSettings(client_id="c", client_secret="s", identity_provider=idp)
    bearer = metadata(grant_types_supported=["urn:ietf:params:oauth:grant-type:jwt-bearer"])
    assert flow_for(enterprise, bearer) == "identity_assertion"
    assert flow_for(enterprise, machine_only) == "client_credentials"  # its own secret


def test_a_registered_client_authenticates_as_the_server_supports() -> None:
    secret = OAuthSettings(client_id="c", client_secret="s")
    assert auth_method(secret, None) == "client_secret_basic"
    post_only = metadata(token_endpoint_auth_methods_supported=["client_secret_post"])
    assert auth_method(secret, post_only) == "client_secret_post"
    assert auth_method(OAuthSettings(client_id="c"), None) == "none"
    assert auth_method(OAuthSettings(client_id="c", private_key="k"), None) == "private_key_jwt"


def test_the_client_assertion_is_signed_for_the_authorization_server() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    settings = OAuthSettings(client_id="robot", private_key=pem)
    server = metadata(token_endpoint_auth_signing_alg_values_supported=["ES256"])
    token = client_assertion(settings, server)
    claims = jwt.decode(token, key.public_key(), algorithms=["ES256"], audience=ISSUER)
    assert claims["iss"] == claims["sub"] == "robot"
    assert claims["exp"] - claims["iat"] == 300


def test_credentials_go_only_to_the_configured_issuer() -> None:
    check_issuer(OAuthSettings(issuer=ISSUER + "/"), metadata())
    with pytest.raises(Exception, match="not the configured issuer https://elsewhere"):
        check_issuer(OAuthSettings(issuer="https://elsewhere"), metadata())


def test_the_oauth_entry_is_read_and_its_mistakes_named(tmp_path: Path) -> None:
    key_file = tmp_path / "key.pem"
    key_file.write_text("-----BEGIN PRIVATE KEY-----\nabc\n", encoding="utf-8")
    read = parse_oauth(
        {
            "clientId": "c",
            "privateKey": str(key_file),
            "identityProvider": {"issuer": "https://idp", "idToken": "${env:ID_TOKEN}"},
        }
    )
    resolved = read.resolved(lambda text: "the-id-token" if text == "${env:ID_TOKEN}" else text)
    assert resolved.private_key.startswith("-----BEGIN PRIVATE KEY-----")
    assert resolved.identity_provider.id_token == "the-id-token"
    assert "the-id-token" in resolved.secrets()
    with pytest.raises(ConfigError, match=r"oauth\.grant must be"):
        parse_server(
            "s", {"url": "https://x/mcp", "oauth": {"grant": "implicit"}}, scope="user", source="f"
        )
    with pytest.raises(ConfigError, match=r"oauth\.clientId is needed"):
        parse_server(
            "s", {"url": "https://x/mcp", "oauth": {"privateKey": "k"}}, scope="user", source="f"
        )
    with pytest.raises(ConfigError, match="identityProvider needs idToken"):
        parse_server(
            "s",
            {"url": "https://x/mcp", "oauth": {"identityProvider": {}}},
            scope="user",
            source="f",
        )
    missing = OAuthSettings(private_key=str(tmp_path / "absent.pem"))
    with pytest.raises(ValueError, match="cannot read"):
        missing.resolved(lambda text: text)


def _legacy_reading(issuer: str, tmp_path: Path) -> tuple[str, list[str]]:
    notes: list[str] = []
    provider = ServerProvider(
        KeptSignIn("http://127.0.0.1:9/mcp"),
        OAuthSettings(),
        note=notes.append,
        server_url="http://127.0.0.1:9/mcp",
        client_metadata=OAuthClientMetadata(redirect_uris=None),
    )
    sent = httpx2.Request("GET", "http://127.0.0.1:9/.well-known/oauth-authorization-server")
    answer = httpx2.Response(200, json={"issuer": issuer, "token_endpoint": issuer}, request=sent)
    read = asyncio.run(provider._legacy_metadata(sent, answer))
    return str(read.json()["issuer"]), notes


def test_a_2025_03_26_servers_issuer_on_its_own_origin_is_read_as_that_origin(
    tmp_path: Path,
) -> None:
    issuer, notes = _legacy_reading("http://127.0.0.1:9/oauth", tmp_path)
    assert issuer == "http://127.0.0.1:9"
    assert "names http://127.0.0.1:9/oauth as its issuer" in notes[0]
    # Another origin is not the server's to speak for: left for the SDK to refuse.
    issuer, notes = _legacy_reading("http://127.0.0.1:10/oauth", tmp_path)
    assert issuer == "http://127.0.0.1:10/oauth" and notes == []
