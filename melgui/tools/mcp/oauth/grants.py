"""Which grant a sign-in uses, and the pieces of the ones without a browser.

The authorization server's metadata says which grants it offers; the server's `oauth`
entry says what melgui holds (a secret, a private key, an identity provider's ID token):

- an identity provider's ID token, and a server that takes jwt-bearer grants: the
  enterprise-managed flow (SEP-990): the ID token is exchanged at the identity provider
  for an ID-JAG (RFC 8693), which the authorization server takes as the grant (RFC 7523);
- the client's own secret or key, and a server that offers client credentials but no
  authorization code (or `"grant": "client_credentials"`): the client credentials grant;
- otherwise the authorization code with PKCE, in the person's browser.
"""

from __future__ import annotations

import time
import uuid
from typing import Literal
from urllib.parse import urlsplit

import httpx2
import jwt
from mcp.client.auth import OAuthFlowError, OAuthTokenError
from mcp.shared.auth import OAuthMetadata

from melgui.tools.mcp.oauth.settings import IdentityProvider, OAuthSettings

Flow = Literal["authorization_code", "client_credentials", "identity_assertion"]
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFETIME = 300  # seconds a client assertion is good for


def flow_for(settings: OAuthSettings, metadata: OAuthMetadata | None) -> Flow:
    # RFC 8414: metadata without grant_types_supported offers the authorization code.
    offered = set(metadata.grant_types_supported or ()) if metadata else set()
    if settings.identity_provider and (not offered or JWT_BEARER in offered):
        return "identity_assertion"
    own = bool(settings.client_id and (settings.client_secret or settings.private_key))
    machine = "client_credentials" in offered and "authorization_code" not in offered
    if own and (settings.grant == "client_credentials" or (machine and not settings.grant)):
        return "client_credentials"
    return "authorization_code"


def auth_method(settings: OAuthSettings, metadata: OAuthMetadata | None) -> str:
    """How a client the owner registered authenticates at the token endpoint."""
    if settings.private_key:
        return "private_key_jwt"
    if not settings.client_secret:
        return "none"
    # RFC 8414: without a list, client_secret_basic is the one supported.
    supported = (metadata.token_endpoint_auth_methods_supported if metadata else None) or []
    if supported and "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def client_assertion(settings: OAuthSettings, metadata: OAuthMetadata | None) -> str:
    """A signed JWT proving the client is the key's holder (RFC 7523 §2.2), for the
    authorization server named as its audience."""
    if metadata is None:
        raise OAuthFlowError("no authorization server metadata to address the client assertion to")
    offered = metadata.token_endpoint_auth_signing_alg_values_supported or []
    algorithm = settings.signing_algorithm or (offered[0] if offered else "RS256")
    now = int(time.time())
    claims = {
        "iss": settings.client_id,
        "sub": settings.client_id,
        "aud": str(metadata.issuer),
        "iat": now,
        "exp": now + ASSERTION_LIFETIME,
        "jti": str(uuid.uuid4()),
    }
    try:
        return jwt.encode(claims, settings.private_key, algorithm=algorithm)
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise OAuthFlowError(f"cannot sign the client assertion with {algorithm}: {exc}") from None


def check_issuer(settings: OAuthSettings, metadata: OAuthMetadata | None) -> None:
    """Credentials go only to the authorization server they were issued by, when named."""
    if not settings.issuer:
        return
    found = str(metadata.issuer).rstrip("/") if metadata else ""
    if found != settings.issuer.rstrip("/"):
        raise OAuthFlowError(
            f"the server's authorization server is {found or 'unknown'}, not the configured "
            f"issuer {settings.issuer}; melgui does not send its credentials there"
        )


async def _idp_token_endpoint(idp: IdentityProvider, http: httpx2.AsyncClient) -> str:
    if idp.token_endpoint:
        return idp.token_endpoint
    found = await http.get(idp.issuer.rstrip("/") + "/.well-known/openid-configuration")
    endpoint = found.json().get("token_endpoint") if found.status_code == 200 else None
    if not isinstance(endpoint, str):
        raise OAuthTokenError(f"the identity provider {idp.issuer} names no token endpoint")
    return endpoint


async def id_jag(idp: IdentityProvider, audience: str, resource: str) -> str:
    """The person's ID token exchanged at their identity provider for an identity assertion
    grant (ID-JAG) for this authorization server and resource (SEP-990, RFC 8693)."""
    data = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "subject_token": idp.id_token,
        "subject_token_type": ID_TOKEN,
        "audience": audience,
        "resource": resource,
    }
    if idp.client_id:
        data["client_id"] = idp.client_id
    if idp.client_secret:
        data["client_secret"] = idp.client_secret
    async with httpx2.AsyncClient(timeout=30.0) as http:
        try:
            answer = await http.post(await _idp_token_endpoint(idp, http), data=data)
        except httpx2.HTTPError as exc:
            raise OAuthTokenError(f"the identity provider could not be reached: {exc}") from None
    try:
        body = answer.json()
    except ValueError:
        body = {}
    token = body.get("access_token") if isinstance(body, dict) else None
    if answer.status_code != 200 or not isinstance(token, str):
        why = body.get("error_description") or body.get("error") if isinstance(body, dict) else ""
        raise OAuthTokenError(
            f"the identity provider refused the token exchange ({answer.status_code}"
            f"{': ' + str(why) if why else ''})"
        )
    return token


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
