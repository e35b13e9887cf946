"""Failures become one clear line and what to do."""

from __future__ import annotations

import pytest

from melgui.ui.chat.failure_text import explain_failure


@pytest.mark.parametrize(
    ("message", "status", "start", "action"),
    [
        ("invalid key", 401, "The server refused the API key", "Settings"),
        ("no credit left", 402, "The quota or credit is used up", "quota"),
        ("slow down", 429, "The server is rate limiting", "wait"),
        ("no such model", 404, "The server has no such endpoint", "model"),
        ("boom", 503, "The server failed (HTTP 503)", "later"),
        (
            "Cannot connect to http://127.0.0.1:9: connection refused",
            None,
            "Cannot reach",
            "running",
        ),
        ("No relay URL is set: open Settings → Connection.", None, "No relay URL", "Settings"),
        ("weird", None, "The turn failed: weird", "send again"),
    ],
)
def test_explanations(message: str, status: int | None, start: str, action: str) -> None:
    explained = explain_failure(message, status)
    assert explained.text.startswith(start)
    assert action in explained.action
    assert "\n" not in explained.text
