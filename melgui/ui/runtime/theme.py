"""The theme in force: light or dark (or the desktop's), applied to the whole app as the
tokens' palette, stylesheet and font (melgui/ui/runtime/look)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from melgui.core.config.settings import Theme
from melgui.ui.runtime.focus_style import FocusRingStyle
from melgui.ui.runtime.look.fonts import ui_font
from melgui.ui.runtime.look.stylesheet import stylesheet
from melgui.ui.runtime.look.tokens import DARK, LIGHT, Colors

__all__ = ["DARK", "LIGHT", "Colors", "apply_theme", "colors_for", "theme_the_app"]


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
    """Set the Fusion style (with clear focus rings), the palette, font and stylesheet
    for `theme`; returns its colours."""
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
        QPalette.ColorRole.Highlight: colors.accent_soft,
        QPalette.ColorRole.HighlightedText: colors.text,
        QPalette.ColorRole.Link: colors.accent,
        QPalette.ColorRole.Mid: colors.border,
        QPalette.ColorRole.Light: colors.surface,
        QPalette.ColorRole.Midlight: colors.border,
        QPalette.ColorRole.Dark: colors.border,
        QPalette.ColorRole.Accent: colors.accent,
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    palette.setColor(
        QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(colors.muted)
    )
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(colors.muted))
    app.setPalette(palette)
    app.setFont(ui_font())
    app.setStyleSheet(stylesheet(colors))
    return colors
