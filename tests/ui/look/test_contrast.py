"""Every text colour of both themes meets WCAG AA (4.5:1) on the surfaces it is drawn on."""

from __future__ import annotations

import pytest

from melgui.ui.runtime.look.tokens import DARK, LIGHT, Colors

AA = 4.5


def luminance(hex_colour: str) -> float:
    """WCAG 2.x relative luminance of "#rrggbb"."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground: str, background: str) -> float:
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def pairs(c: Colors) -> list[tuple[str, str, str, str]]:
    """(what, foreground, background) for each text colour on each surface it meets."""
    surfaces = {
        "window": c.window,
        "base": c.base,
        "surface": c.surface,
        "card_bg": c.card_bg,
        "user_bubble": c.user_bubble,
        "code_bg": c.code_bg,
        "accent_soft": c.accent_soft,
    }
    found = []
    for text in ("text", "muted", "accent", "ok", "error", "warn", "pending"):
        for where, background in surfaces.items():
            found.append((text, where, getattr(c, text), background))
    for status in ("ok", "error", "warn", "pending"):  # a pill: the word on its own tint
        found.append((status, f"{status}_bg", getattr(c, status), getattr(c, f"{status}_bg")))
    found += [
        ("muted", "muted_bg", c.muted, c.muted_bg),
        ("text", "muted_bg", c.text, c.muted_bg),
        ("text", "code_header", c.text, c.code_header),
        ("muted", "code_header", c.muted, c.code_header),
        ("text", "diff_add", c.text, c.diff_add),
        ("text", "diff_del", c.text, c.diff_del),
        ("output_text", "output_bg", c.output_text, c.output_bg),
        ("on_accent", "accent", c.on_accent, c.accent),
        ("on_accent", "badge", c.on_accent, c.badge),
    ]
    return found


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_every_text_colour_meets_aa_on_its_surfaces(colors: Colors) -> None:
    failing = [
        f"{text} {fg} on {where} {bg}: {contrast(fg, bg):.2f}"
        for text, where, fg, bg in pairs(colors)
        if contrast(fg, bg) < AA
    ]
    assert not failing, "\n".join(failing)


def test_the_contrast_formula_is_wcags() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # famously just short
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1.0)
