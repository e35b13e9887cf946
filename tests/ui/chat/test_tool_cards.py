"""The inline card of a call: name, summary, status in its colour, a link to the inspector."""

from __future__ import annotations

from typing import get_args

import pytest

from melgui.core.protocol.call_life import CallPhase
from melgui.ui.chat.blocks.tool_cards import card_html, status_color
from melgui.ui.runtime.theme import DARK, LIGHT


@pytest.mark.parametrize(
    ("status", "role"),
    [
        ("ok", "ok"),
        ("error", "error"),
        ("interrupted", "error"),
        ("denied", "warn"),
        ("cancelled", "warn"),
        ("waiting", "pending"),
        ("requested", "muted"),
        ("running", "muted"),
    ],
)
def test_each_status_has_its_theme_colour(status: CallPhase, role: str) -> None:
    assert status_color(status, LIGHT) == getattr(LIGHT, role)
    assert status_color(status, DARK) == getattr(DARK, role)


def test_every_status_is_coloured() -> None:
    assert {status_color(s, LIGHT) for s in get_args(CallPhase)} == {
        LIGHT.ok,
        LIGHT.error,
        LIGHT.warn,
        LIGHT.pending,
        LIGHT.muted,
    }


def test_a_finished_card_links_the_call_and_shows_its_duration() -> None:
    assert card_html("c 1/x", "read_file", "a.py", "ok", LIGHT, 0.25) == (
        '<a href="call:c%201%2Fx" style="text-decoration:none; color:#1d1d1f">'
        "<b>read_file</b></a>"
        '&nbsp;&nbsp;<span style="color:#6b6b73; font-family:monospace">a.py</span>'
        '&nbsp;&nbsp;<span style="color:#1a7f37">✓ done · 250 ms</span>'
        '&nbsp;&nbsp;<a href="call:c%201%2Fx" style="font-size:small">inspect</a>'
    )


@pytest.mark.parametrize("status", ["waiting", "requested", "running"])
def test_an_unfinished_card_shows_no_duration(status: CallPhase) -> None:
    card = card_html("c1", "run_command", "make", status, LIGHT, 0.25)
    assert "250 ms" not in card


def test_names_and_summaries_are_escaped() -> None:
    card = card_html("c1", "<b>x</b>", "<make> & run", "waiting", LIGHT)
    assert "<b>&lt;b&gt;x&lt;/b&gt;</b>" in card
    assert ">&lt;make&gt; &amp; run</span>" in card
    assert '<span style="color:#b35900">◆ waiting for approval</span>' in card
