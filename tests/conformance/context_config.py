"""The mcp.json melgui exec is given for the server a conformance scenario started.

    python -m tests.conformance.context_config URL > mcp.json

The suite hands a scenario's credentials to its client in MCP_CONFORMANCE_CONTEXT (a
pre-registered client's id and secret, a private key, an identity provider's ID token).
They go into the server's ordinary `oauth` entry through one fixed mapping, the same for
every scenario; the scenario's name, which the context also carries, is not read. A key
the mapping does not know stops the run, so a new suite version's keys are seen.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

KEYS: dict[str, tuple[str, ...]] = {
    "client_id": ("clientId",),
    "client_secret": ("clientSecret",),
    "private_key_pem": ("privateKey",),
    "signing_algorithm": ("signingAlgorithm",),
    "idp_client_id": ("identityProvider", "clientId"),
    "idp_id_token": ("identityProvider", "idToken"),
    "idp_issuer": ("identityProvider", "issuer"),
    "idp_token_endpoint": ("identityProvider", "tokenEndpoint"),
}
# The client ID metadata document the suite's authorization servers know melgui by, as the
# SDKs' conformance clients give it for every scenario; melgui uses it only where an
# authorization server says it takes such documents.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


def oauth_entry(context: dict[str, Any]) -> dict[str, Any]:
    oauth: dict[str, Any] = {"clientMetadataUrl": CLIENT_METADATA_URL}
    for key, value in context.items():
        if key == "name":
            continue
        if key not in KEYS:
            raise SystemExit(f"context_config: no mapping for the context's {key!r}")
        *parents, leaf = KEYS[key]
        target = oauth
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return oauth


def main() -> None:
    url = sys.argv[1]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    entry = {"url": url, "oauth": oauth_entry(context)}
    json.dump({"mcpServers": {"remote": entry}}, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
