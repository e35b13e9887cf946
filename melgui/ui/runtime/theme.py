"""Light and dark colours, as one small value the views read, and the Qt palette for each."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from melgui.core.config.settings import Theme
from melgui.ui.runtime.focus_style import FocusRingStyle


@dataclass(frozen=True, slots=True)
class Colors:
    name: Theme
    window: str
    base: str
    text: str
    muted: str
    border: str
    accent: str
    user_bubble: str
    code_bg: str
    code_header: str
    card_bg: str
    ok: str
    error: str
    warn: str
    pending: str
    pygments_style: str


LIGHT = Colors(
    name="light",
    window="#f3f3f5",
    base="#ffffff",
    text="#1d1d1f",
    muted="#6b6b73",
    border="#d4d4da",
    accent="#2f6fdf",
    user_bubble="#e8f0fe",
    code_bg="#f6f8fa",
    code_header="#eaeef2",
    card_bg="#fafafa",
    ok="#1a7f37",
    error="#c62828",
    warn="#9a6700",
    pending="#b35900",
    pygments_style="default",
)

DARK = Colors(
    name="dark",
    window="#202124",
    base="#17181a",
    text="#e6e6e6",
    muted="#9a9aa3",
    border="#3a3b40",
    accent="#7aa7ff",
    user_bubble="#263246",
    code_bg="#24262b",
    code_header="#2e3138",
    card_bg="#1f2023",
    ok="#56d364",
    error="#ff7b72",
    warn="#e3b341",
    pending="#ffa657",
    pygments_style="monokai",
)


def system_is_dark() -> bool:
    """The desktop's colour scheme says dark (Qt 6.5+; light when it does not say)."""
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return callable(scheme) and scheme() == Qt.ColorScheme.Dark


def follow_system_scheme(theme: Callable[[], Theme], redraw: Callable[[], None]) -> None:
    """Call `redraw` when the desktop's colour scheme changes while `theme()` is "system"."""
    hints = QGuiApplication.styleHints()
    changed = getattr(hints, "colorSchemeChanged", None)  # Qt 6.5+
    if changed is None:
        return

    def on_change(_scheme: object) -> None:
        with contextlib.suppress(RuntimeError):  # the window may be gone already
            if theme() == "system":
                redraw()

    changed.connect(on_change)


def colors_for(theme: Theme) -> Colors:
    if theme == "system":
        return DARK if system_is_dark() else LIGHT
    return DARK if theme == "dark" else LIGHT


def theme_the_app(theme: Theme) -> Colors:
    """Apply `theme` to the running QApplication (if there is one); returns its colours."""
    app = QApplication.instance()
    return apply_theme(app, theme) if isinstance(app, QApplication) else colors_for(theme)


def apply_theme(app: QApplication, theme: Theme) -> Colors:
    """Set the Fusion style (with clear focus rings) and a palette for `theme`; returns
    its colours."""
    colors = colors_for(theme)
    app.setStyle(FocusRingStyle(colors.accent))
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: colors.window,
        QPalette.ColorRole.WindowText: colors.text,
        QPalette.ColorRole.Base: colors.base,
        QPalette.ColorRole.AlternateBase: colors.card_bg,
        QPalette.ColorRole.Text: colors.text,
        QPalette.ColorRole.Button: colors.window,
        QPalette.ColorRole.ButtonText: colors.text,
        QPalette.ColorRole.ToolTipBase: colors.base,
        QPalette.ColorRole.ToolTipText: colors.text,
        QPalette.ColorRole.PlaceholderText: colors.muted,
        QPalette.ColorRole.Highlight: colors.accent,
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: colors.accent,
        QPalette.ColorRole.Mid: colors.border,
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    palette.setColor(
        QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(colors.muted)
    )
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(colors.muted))
    app.setPalette(palette)
    return colors
