"""An MCP server's secrets are hidden in its logs in every form a server may echo them:
plain, JSON-escaped and URL-encoded, as melgui's own key is in the wire log."""

from __future__ import annotations

import json

from melgui.tools.mcp.protocol_log import MASK, LineLog, Redactor

SECRET = "tok-Secret/0123456789"


def test_a_secret_is_hidden_plain_escaped_and_encoded() -> None:
    log = LineLog(Redactor([SECRET]))
    escaped = json.dumps(SECRET)[1:-1].replace("-", "\\u002d").replace("/", "\\/")
    encoded = SECRET.replace("-", "%2D").replace("/", "%2F")
    log.add(f"plain {SECRET} escaped {escaped} encoded {encoded}")
    [line] = log.lines
    assert SECRET not in line and escaped not in line and encoded not in line
    assert line.count(MASK) == 3
