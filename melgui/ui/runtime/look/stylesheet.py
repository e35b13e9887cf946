"""The one application stylesheet, made from the tokens for a theme's colours.

Flat chrome on neutral surfaces: hairline dividers instead of bevels, 6 px corners on
controls, one accent for focus, selection and the primary button, and thin scroll bars.
Widgets ask for a variant by a dynamic property, never by a style of their own:
`role="primary"` (the accent button), `role="chip"` (the composer's chips),
`role="card"` (a raised, rounded frame), `role="muted"` and `role="title"` (labels).
Images come from the Lucide icons tinted for the theme (`icon_file`): a checked box's
tick, a menu entry's check and a chip's chevron.
"""

from __future__ import annotations

from melgui.ui.runtime.look.icons import icon_file
from melgui.ui.runtime.look.tokens import (
    CHIP_H,
    FOCUS_RING,
    HAIRLINE,
    ICON_S,
    RADIUS_M,
    RADIUS_S,
    SPACE_2XL,
    SPACE_2XS,
    SPACE_L,
    SPACE_M,
    SPACE_S,
    SPACE_XS,
    TYPE_DISPLAY,
    TYPE_META,
    TYPE_TITLE,
    Colors,
)


def px(value: int) -> str:
    return f"{value}px"


def stylesheet(c: Colors) -> str:
    line = f"{px(HAIRLINE)} solid {c.border}"
    ring = f"{px(HAIRLINE)} solid {c.accent}"
    pad = f"{px(SPACE_XS)} {px(SPACE_M)}"
    tick = f"url({icon_file('check', c.on_accent)})"  # on a checked box's accent fill
    menu_tick = f"url({icon_file('check', c.text)})"
    chevron = f"url({icon_file('chevron-down', c.muted)})"
    return f"""
QMainWindow::separator {{ background: {c.window}; width: {px(SPACE_XS)}; height: {px(SPACE_XS)}; }}
QToolBar {{ background: {c.window}; border: none; border-bottom: {line};
    padding: {px(SPACE_XS)} {px(SPACE_S)}; spacing: {px(SPACE_S)}; }}
QToolBar#sidePanelStrip {{ border: none; border-left: {line}; padding: {px(SPACE_XS)} 0;
    spacing: {px(SPACE_XS)}; }}
QFrame#sidePanelOver {{ background: {c.window}; border-left: {line}; }}
QToolBar#sidePanelStrip QToolButton, QToolBar#historyStrip QToolButton {{
    padding: {px(SPACE_XS)}; border-radius: {px(RADIUS_S)}; }}
QToolBar#historyStrip {{ border: none; border-right: {line}; padding: 0; }}
QFrame#historyOver {{ background: {c.window}; border-right: {line}; }}
QStatusBar {{ background: {c.window}; border-top: {line}; color: {c.muted}; }}
QStatusBar QLabel {{ color: {c.muted}; }}
QDockWidget {{ titlebar-close-icon: none; titlebar-normal-icon: none; }}
QDockWidget::title {{ background: {c.window}; padding: {px(SPACE_S)} {px(SPACE_M)};
    border-bottom: {line}; text-align: left; }}
QPushButton {{ background: {c.surface}; color: {c.text}; border: {line};
    border-radius: {px(RADIUS_S)}; padding: {pad}; min-height: {px(CHIP_H - 2 * SPACE_XS)}; }}
QPushButton:hover {{ background: {c.muted_bg}; }}
QPushButton:pressed {{ background: {c.accent_soft}; }}
QPushButton:focus {{ border: {px(FOCUS_RING)} solid {c.accent}; }}
QPushButton:disabled {{ color: {c.muted}; background: {c.window}; }}
QPushButton[role="primary"] {{ background: {c.accent}; color: {c.on_accent};
    border: {px(HAIRLINE)} solid {c.accent}; }}
QPushButton[role="primary"]:hover {{ background: {c.accent}; }}
QPushButton[role="primary"]:focus {{ border: {px(FOCUS_RING)} solid {c.text}; }}
QPushButton[role="chip"], QToolButton[role="chip"] {{ background: {c.muted_bg}; color: {c.text};
    border: none; border-radius: {px(CHIP_H // 2)}; padding: {px(SPACE_2XS)} {px(SPACE_S)};
    min-height: {px(CHIP_H - 2 * SPACE_2XS)}; }}
QToolButton[role="chip"] {{ padding-right: {px(ICON_S + SPACE_S)}; }}
QPushButton[role="chip"]:hover, QToolButton[role="chip"]:hover {{ background: {c.accent_soft}; }}
QToolButton[role="chip"]:focus {{ border: {ring}; }}
QPushButton[role="link"] {{ background: transparent; border: none; color: {c.accent};
    padding: {px(SPACE_2XS)} {px(SPACE_XS)}; }}
QToolButton {{ background: transparent; border: {px(HAIRLINE)} solid transparent;
    border-radius: {px(RADIUS_S)}; padding: {px(SPACE_XS)}; color: {c.text}; }}
QToolButton:hover {{ background: {c.muted_bg}; }}
QToolButton:pressed, QToolButton:checked {{ background: {c.accent_soft}; }}
QToolButton:focus {{ border: {ring}; }}
QToolButton::menu-indicator {{ image: none; width: 0; }}
QToolButton[role="chip"]::menu-indicator {{ image: {chevron}; width: {px(ICON_S)};
    height: {px(ICON_S)}; subcontrol-origin: padding; subcontrol-position: center right;
    right: {px(SPACE_XS)}; }}
QLineEdit, QComboBox, QSpinBox, QDoubleSpinBox {{ background: {c.base}; color: {c.text};
    border: {line}; border-radius: {px(RADIUS_S)}; padding: {px(SPACE_XS)} {px(SPACE_S)};
    selection-background-color: {c.accent_soft}; selection-color: {c.text}; }}
QLineEdit:focus, QComboBox:focus, QSpinBox:focus, QDoubleSpinBox:focus {{ border: {ring}; }}
QComboBox::drop-down {{ border: none; width: {px(SPACE_L + SPACE_XS)}; }}
QComboBox QAbstractItemView {{ background: {c.surface}; border: {line};
    selection-background-color: {c.accent_soft}; selection-color: {c.text}; }}
.QPlainTextEdit, .QTextEdit, .QTextBrowser {{ background: {c.base}; color: {c.text};
    border: {line}; border-radius: {px(RADIUS_S)};
    selection-background-color: {c.accent_soft}; selection-color: {c.text}; }}
QListView, QTreeView, QTableView, QListWidget, QTreeWidget, QTableWidget {{
    background: {c.base}; color: {c.text}; border: {line}; border-radius: {px(RADIUS_S)};
    selection-background-color: {c.accent_soft}; selection-color: {c.text};
    alternate-background-color: {c.card_bg}; outline: none; }}
QListView::item, QTreeView::item {{ padding: {px(SPACE_XS)} {px(SPACE_S)};
    border-radius: {px(RADIUS_S)}; }}
QListView::item:selected, QTreeView::item:selected {{ background: {c.accent_soft};
    color: {c.text}; }}
QListView::item:hover, QTreeView::item:hover {{ background: {c.muted_bg}; }}
QHeaderView::section {{ background: {c.window}; color: {c.muted}; border: none;
    border-bottom: {line}; padding: {px(SPACE_XS)} {px(SPACE_S)}; }}
QTabWidget::pane {{ border: none; border-top: {line}; }}
QTabBar::tab {{ background: transparent; color: {c.muted}; border: none;
    border-bottom: {px(FOCUS_RING)} solid transparent; padding: {px(SPACE_S)} {px(SPACE_M)}; }}
QTabBar::tab:selected {{ color: {c.text}; border-bottom: {px(FOCUS_RING)} solid {c.accent}; }}
QTabBar::tab:hover {{ color: {c.text}; }}
QTabBar#sidePanelTabs::tab {{ padding: {px(SPACE_S)} {px(SPACE_S)}; }}
QMenu {{ background: {c.surface}; color: {c.text}; border: {line}; padding: {px(SPACE_XS)}; }}
QMenu::item {{ padding: {px(SPACE_XS)} {px(SPACE_L)}; border-radius: {px(RADIUS_S)}; }}
QMenu::item:selected {{ background: {c.accent_soft}; color: {c.text}; }}
QMenu::indicator {{ width: {px(ICON_S)}; height: {px(ICON_S)}; left: {px(SPACE_XS)}; }}
QMenu::indicator:checked {{ image: {menu_tick}; }}
QMenu::separator {{ height: {px(HAIRLINE)}; background: {c.border}; margin: {px(SPACE_XS)} 0; }}
QMenuBar {{ background: {c.window}; color: {c.text}; }}
QMenuBar::item:selected {{ background: {c.muted_bg}; border-radius: {px(RADIUS_S)}; }}
QToolTip {{ background: {c.surface}; color: {c.text}; border: {line};
    padding: {px(SPACE_XS)} {px(SPACE_S)}; }}
QProgressBar {{ background: {c.muted_bg}; border: none; border-radius: {px(RADIUS_S)};
    color: {c.text}; text-align: center; }}
QProgressBar::chunk {{ background: {c.accent}; border-radius: {px(RADIUS_S)}; }}
QScrollBar:vertical {{ background: transparent; width: {px(SPACE_M)}; margin: 0; }}
QScrollBar:horizontal {{ background: transparent; height: {px(SPACE_M)}; margin: 0; }}
QScrollBar::handle {{ background: {c.border}; border-radius: {px(SPACE_XS)};
    margin: {px(SPACE_2XS)}; min-height: {px(SPACE_2XL)}; min-width: {px(SPACE_2XL)}; }}
QScrollBar::handle:hover {{ background: {c.muted}; }}
QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; }}
QScrollBar::add-page, QScrollBar::sub-page {{ background: transparent; }}
QCheckBox, QRadioButton {{ spacing: {px(SPACE_S)}; }}
QCheckBox::indicator, QRadioButton::indicator, QAbstractItemView::indicator {{
    width: {px(ICON_S)}; height: {px(ICON_S)};
    border: {px(HAIRLINE)} solid {c.muted}; background: {c.base}; }}
QCheckBox::indicator, QAbstractItemView::indicator {{ border-radius: {px(RADIUS_S // 2)}; }}
QRadioButton::indicator {{ border-radius: {px(ICON_S // 2 + HAIRLINE)}; }}
QCheckBox::indicator:checked, QAbstractItemView::indicator:checked {{ background: {c.accent};
    border: {px(HAIRLINE)} solid {c.accent}; image: {tick}; }}
QCheckBox::indicator:checked:disabled, QAbstractItemView::indicator:checked:disabled {{
    background: {c.muted}; border-color: {c.muted}; }}
QRadioButton::indicator:checked {{ border: {px(FOCUS_RING + 1)} solid {c.base};
    background: {c.accent}; border-radius: {px(ICON_S // 2 + FOCUS_RING + 1)}; }}
QCheckBox::indicator:disabled, QRadioButton::indicator:disabled {{ border-color: {c.border}; }}
QGroupBox {{ border: {line}; border-radius: {px(RADIUS_M)}; margin-top: {px(SPACE_L)};
    padding: {px(SPACE_M)} {px(SPACE_S)} {px(SPACE_S)} {px(SPACE_S)}; }}
QGroupBox::title {{ subcontrol-origin: margin; left: {px(SPACE_S)}; color: {c.muted}; }}
QPlainTextEdit[role="bare"] {{ border: none; background: transparent; }}
QPushButton[role="send"] {{ border-radius: {px(RADIUS_M)}; background: {c.accent_soft};
    border: {px(FOCUS_RING)} solid transparent; padding: 0; }}
QPushButton[role="send"]:hover {{ background: {c.muted_bg}; }}
QPushButton[role="send"]:focus {{ border: {px(FOCUS_RING)} solid {c.accent}; }}
QPushButton[role="send"]:disabled {{ background: {c.muted_bg}; }}
QPushButton[role="suggestion"] {{ text-align: left; padding: {px(SPACE_S)} {px(SPACE_M)};
    border-radius: {px(RADIUS_M)}; background: {c.surface}; }}
QPushButton[role="suggestion"]:hover {{ background: {c.accent_soft}; }}
QFrame[role="card"] {{ background: {c.surface}; border: {line}; border-radius: {px(RADIUS_M)}; }}
QLabel[role="muted"] {{ color: {c.muted}; }}
QLabel[role="meta"] {{ color: {c.muted}; font-size: {px(TYPE_META)}; }}
QLabel[role="title"] {{ color: {c.text}; font-size: {px(TYPE_TITLE)}; font-weight: 600; }}
QLabel[role="error"] {{ color: {c.error}; }}
QLabel[role="display"] {{ color: {c.text}; font-size: {px(TYPE_DISPLAY)}; font-weight: 600; }}
"""
