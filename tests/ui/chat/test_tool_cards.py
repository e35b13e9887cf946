"""The inline card of a call: one line with an icon for its kind, what it did in words, a
status pill in its colour, a button to the side panel; unfolded, the change or output."""

from __future__ import annotations

from typing import get_args

import pytest

from melgui.core.protocol.call_life import CallPhase
from melgui.ui.chat.blocks.tool_cards import card_html, icon_img, pill, status_color
from melgui.ui.runtime.look.icons import GLYPHS
from melgui.ui.runtime.look.tokens import ICON_S
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


def test_a_finished_card_is_one_line_that_unfolds_and_links_the_call() -> None:
    card = card_html("c 1/x", "read_file", "a.py", "ok", LIGHT, 0.25)
    assert card == (
        f'<a href="card:c%201%2Fx" style="text-decoration:none; color:{LIGHT.text}">'
        f"{icon_img('chevron-right', LIGHT.muted, ICON_S, '', 'file-text')}&nbsp;&nbsp;"
        '<b>Read</b>&nbsp;<span style="font-family:monospace">a.py</span></a>&nbsp;&nbsp;'
        f"{pill('done · 250 ms', LIGHT.ok, LIGHT.ok_bg)}&nbsp;&nbsp;"
        f'<a href="call:c%201%2Fx" style="text-decoration:none">'
        f"{icon_img('panel-right', LIGHT.muted, ICON_S, 'Open in the side panel')}</a>"
    )
    assert "<br>" not in card and "<p" not in card  # one line


def test_an_edit_says_what_it_did_and_how_many_lines_it_adds_and_removes() -> None:
    arguments = {"path": "calc/ops.py", "old_string": "a = 1", "new_string": "a = 2\nb = 3"}
    waiting = card_html("e1", "edit_file", "calc/ops.py", "waiting", LIGHT, arguments=arguments)
    assert "<b>Edit</b>" in waiting and "+2 −1" in waiting
    done = card_html("e1", "edit_file", "calc/ops.py", "ok", LIGHT, arguments=arguments)
    assert "<b>Edited</b>" in done and "calc/ops.py" in done


def test_a_failed_command_says_its_exit_code_on_a_red_tint() -> None:
    card = card_html("r1", "run_command", "pytest -q", "ok", LIGHT, 2.0, exit_code=1)
    assert "<b>Ran</b>" in card and pill("exit 1 · 2.0 s", LIGHT.error, LIGHT.error_bg) in card
    assert "done" not in card


def test_the_unfolded_part_shows_only_when_unfolded() -> None:
    folded = card_html("c1", "read_file", "a.py", "ok", LIGHT, body_html="<pre>x</pre>")
    unfolded = card_html(
        "c1", "read_file", "a.py", "ok", LIGHT, body_html="<pre>x</pre>", expanded=True
    )
    assert "<pre>x</pre>" not in folded and unfolded.endswith("<pre>x</pre>")
    down, right = (f"&#x{GLYPHS[name]:X};" for name in ("chevron-down", "chevron-right"))
    assert down in unfolded and right in folded


@pytest.mark.parametrize("status", ["waiting", "requested", "running"])
def test_an_unfinished_card_shows_no_duration(status: CallPhase) -> None:
    card = card_html("c1", "run_command", "make", status, LIGHT, 0.25)
    assert "250 ms" not in card


def test_names_and_summaries_are_escaped() -> None:
    card = card_html("c1", "<b>x</b>", "<make> & run", "waiting", LIGHT)
    assert "<b>&lt;b&gt;x&lt;/b&gt;</b>" in card
    assert ">&lt;make&gt; &amp; run</span>" in card
    assert pill("waiting for approval", LIGHT.pending, LIGHT.pending_bg) in card
