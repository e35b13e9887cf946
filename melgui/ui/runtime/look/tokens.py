"""The design tokens: every colour, size, radius and type size the UI uses, in one place.

Widgets never write a colour or a pixel size of their own (tests/ui/look scans
`melgui/ui` for them): they read these, through `Colors` for what changes with the
theme. Spacing is on an 8-point grid (with 2 and 4 for hairline gaps); the type scale
has a 14–16 px body at a 1.5 line height; corners are 6–8 px; one accent colour on
neutral surfaces, hairline dividers, and muted status pills (text on a tint of itself).
Every text colour meets WCAG AA (4.5:1) on the surfaces it is drawn on, in both themes
(tests/ui/look/test_contrast.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from melgui.core.config.settings import Theme

# --- spacing: an 8-point grid -----------------------------------------------------------
SPACE_2XS = 2  # between a hairline and what it frames
SPACE_XS = 4
SPACE_S = 8
SPACE_M = 12
SPACE_L = 16
SPACE_XL = 24
SPACE_2XL = 32
SPACE_3XL = 48

# --- type: pixel sizes and the line height ----------------------------------------------
TYPE_META = 12  # timestamps, status words, hints
TYPE_UI = 13  # controls and chrome
TYPE_BODY = 15  # the conversation's text
TYPE_CODE = 13  # monospace blocks
TYPE_TITLE = 17  # a card's or a page's title
TYPE_DISPLAY = 22  # the welcome screen's line
LINE_HEIGHT = 150  # percent of the font's height, for body text
WEIGHT_MEDIUM = 500
WEIGHT_SEMIBOLD = 600

# --- shape ------------------------------------------------------------------------------
RADIUS_S = 6  # buttons, fields, pills
RADIUS_M = 8  # cards, the composer, blocks
HAIRLINE = 1  # dividers and card borders
FOCUS_RING = 2  # the keyboard focus outline

# --- sizes of things --------------------------------------------------------------------
ICON = 16  # an icon in a button or a card's line
ICON_S = 14  # an icon inside text
CONTROL_H = 32  # buttons and fields
CHIP_H = 26  # the composer's chips
CHIP_TEXT_MAX = 200  # a chip's words, cut short with … beyond this
CHAT_COLUMN_MAX = 760  # the chat's text column, centred when there is more room
CHAT_COLUMN_MIN = 480  # the chat never gets narrower than this
SPLITTER_HANDLE = 8  # wide enough to hit
METER_W = 120  # the context meter's bar
SIDEBAR_W = 180  # Settings' categories
NOTE_MAX_H = 120  # a short scrolled text (a test result, a copy box)
COPY_BOX_MAX_H = 90
RULE_MATCHES_MAX_H = 110
ROW_H = 8  # a table's rows are counted in these, beyond the font's height
PANE_HEADER_DOT = 6  # the state dot's radius in a pane's header
TERMINAL_MIN_PT = 9  # a terminal's smallest readable point size, and its zoom floor
TERMINAL_ZOOM_MIN_PT = 6

# --- default sizes of windows and dialogs (width, height) --------------------------------
WINDOW_DEFAULT = (1280, 820)
WINDOW_MIN = (720, 480)
DIALOG_S = (520, 560)
DIALOG_M = (760, 520)
DIALOG_L = (820, 560)
DIALOG_XL = (1040, 660)
DIALOG_LOG = (760, 480)
DIALOG_METER = (640, 480)
DIALOG_SETTINGS = (820, 620)
DIALOG_PREVIEW = (720, 520)
PALETTE_MIN_W = 520
PALETTE_H = 380


@dataclass(frozen=True, slots=True)
class Colors:
    """The colours of one theme. `text`, `muted`, `accent` and the status colours are
    text colours; `*_bg` are the tints they sit on."""

    name: Theme
    window: str  # the chrome behind panels
    base: str  # the conversation, fields, lists
    surface: str  # raised things: cards, the composer
    text: str
    muted: str
    border: str  # hairlines
    accent: str
    on_accent: str  # text on the accent (the send button)
    accent_soft: str  # selections and hovered rows: a tint of the accent
    user_bubble: str  # the person's turn
    code_bg: str
    code_header: str
    card_bg: str
    output_bg: str  # command output: a dark monospace block in both themes
    output_text: str
    ok: str
    ok_bg: str
    error: str
    error_bg: str
    warn: str
    warn_bg: str
    pending: str
    pending_bg: str
    muted_bg: str  # a neutral pill
    diff_add: str  # tinted lines of a diff
    diff_del: str
    badge: str  # a count badge's fill (text on it: on_accent)
    pygments_style: str


LIGHT = Colors(
    name="light",
    window="#f6f6f7",
    base="#ffffff",
    surface="#ffffff",
    text="#1c1d1f",
    muted="#5e6069",
    border="#e2e2e6",
    accent="#2858c8",
    on_accent="#ffffff",
    accent_soft="#dde7fb",
    user_bubble="#eff1f5",
    code_bg="#f5f6f8",
    code_header="#ebedf0",
    card_bg="#fbfbfc",
    output_bg="#1e1f23",
    output_text="#d9dae0",
    ok="#1a7437",
    ok_bg="#e3f3e7",
    error="#b42323",
    error_bg="#fbe9e8",
    warn="#855900",
    warn_bg="#fbf1d9",
    pending="#a04c00",
    pending_bg="#fcecdd",
    muted_bg="#eeeff2",
    diff_add="#e6f6ea",
    diff_del="#fbeaea",
    badge="#b24a08",
    pygments_style="default",
)

DARK = Colors(
    name="dark",
    window="#1b1c1f",
    base="#141517",
    surface="#1f2024",
    text="#e7e7ea",
    muted="#a2a4ad",
    border="#303237",
    accent="#7fa8ff",
    on_accent="#0c1426",
    accent_soft="#26344f",
    user_bubble="#24272d",
    code_bg="#1e2024",
    code_header="#2a2d33",
    card_bg="#1a1b1e",
    output_bg="#0e0f11",
    output_text="#d9dae0",
    ok="#5fcf76",
    ok_bg="#15291b",
    error="#ff8a80",
    error_bg="#3a1c1c",
    warn="#e3b341",
    warn_bg="#31290f",
    pending="#ffa95e",
    pending_bg="#35240f",
    muted_bg="#2a2c31",
    diff_add="#14301d",
    diff_del="#3d1a1a",
    badge="#ffa95e",
    pygments_style="monokai",
)

# The xterm 16-colour palette (a terminal's programs pick these by number), and the
# terminal's own colours: the same in both themes, as terminals are.
TERMINAL_ANSI = (
    "#000000",
    "#cd0000",
    "#00cd00",
    "#cdcd00",
    "#0000ee",
    "#cd00cd",
    "#00cdcd",
    "#e5e5e5",
    "#7f7f7f",
    "#ff0000",
    "#00ff00",
    "#ffff00",
    "#5c5cff",
    "#ff00ff",
    "#00ffff",
    "#ffffff",
)
TERMINAL_FG = "#d8d8d8"
TERMINAL_BG = "#1b1c1f"
TERMINAL_SELECTION = "#3d5a8a"
TERMINAL_CURSOR = "#ffffff"
TERMINAL_SEARCH_HIT = "#e3b341"
