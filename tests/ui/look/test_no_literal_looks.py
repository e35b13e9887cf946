"""No widget hard-codes a colour or a pixel size: they come from the tokens module
(melgui/ui/runtime/look/tokens.py).

Scanned with Python's own parser, so comments never count and every string does (f-string
parts included): a "#rrggbb", rgb(), a named CSS colour or an "Npx" in a string, a
QColor or Qt.GlobalColor by name, and an integer literal given to a call that sets a
size, margin or spacing. 0 is no size; a literal that multiplies or divides is a count.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import melgui.ui

UI = Path(melgui.ui.__file__).parent
TOKENS = UI / "runtime" / "look" / "tokens.py"
HEX = re.compile(r"(?<![&\w])#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
FUNCTIONAL = re.compile(r"\brgba?\(|\bhsla?\(")
NAMED = re.compile(
    r"(?:color|background(?:-color)?|border[\w-]*)\s*:[^;\"'}]*?"
    r"\b(?:white|black|red|green|blue|gray|grey|orange|yellow|purple|pink)\b"
)
PIXELS = re.compile(r"(?<![\w{])[1-9]\d*(?:\.\d+)?px\b")
SIZE_CALLS = {
    "setContentsMargins",
    "setSpacing",
    "setHorizontalSpacing",
    "setVerticalSpacing",
    "setFixedWidth",
    "setFixedHeight",
    "setFixedSize",
    "setMinimumWidth",
    "setMinimumHeight",
    "setMinimumSize",
    "setMaximumWidth",
    "setMaximumHeight",
    "setMaximumSize",
    "resize",
    "setIconSize",
    "setCellPadding",
    "setCellSpacing",
    "setMargin",
    "setDocumentMargin",
    "setPixelSize",
    "setPointSize",
    "setPointSizeF",
    "setHandleWidth",
    "setIndent",
    "addSpacing",
    "setBorder",
}
NAMED_COLOUR_CALLS = {"QColor"}


def _literal_sizes(call: ast.Call) -> list[int]:
    """Integer literals among a call's arguments that are sizes (not counts)."""
    counts: set[int] = set()
    for node in ast.walk(call):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.FloorDiv | ast.Div):
            counts.update(id(side) for side in (node.left, node.right))
    found = []
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        for node in ast.walk(argument):
            if (
                isinstance(node, ast.Constant)
                and type(node.value) is int
                and node.value != 0
                and id(node) not in counts
            ):
                found.append(node.value)
    return found


def problems_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    where = path.relative_to(UI.parent.parent)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            for pattern, what in ((HEX, "colour"), (FUNCTIONAL, "colour"), (NAMED, "colour")):
                for match in pattern.finditer(text):
                    found.append(f"{where}:{node.lineno}: {what} {match.group(0)!r}")
            for match in PIXELS.finditer(text):
                found.append(f"{where}:{node.lineno}: pixel size {match.group(0)!r}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            sizes = _literal_sizes(node) if name in SIZE_CALLS else []
            if sizes:
                found.append(f"{where}:{node.lineno}: {name} given literal sizes {sizes}")
            if name in NAMED_COLOUR_CALLS and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    found.append(f"{where}:{node.lineno}: QColor({first.value!r})")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "GlobalColor"
            and node.attr != "transparent"
        ):
            found.append(f"{where}:{node.lineno}: Qt.GlobalColor.{node.attr}")
    return found


def test_no_colour_or_pixel_size_outside_the_tokens() -> None:
    found = []
    for path in sorted(UI.rglob("*.py")):
        if path != TOKENS:
            found += problems_in(path)
    assert not found, "use melgui/ui/runtime/look/tokens.py instead:\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for() -> None:
    sample = UI / "runtime" / "look" / "_scan_sample.py"
    sample.write_text(
        "w.setStyleSheet('color: #ff0000; margin: 4px')\n"
        "l.setContentsMargins(6, 0, 6, 0)\n"
        "c = QColor('white')\n"
        "p.fill(Qt.GlobalColor.white)\n"
        "t.setMinimumHeight(rows * 8)  # a count of rows: fine\n"
        "s = f'<span style=\"background:white\">{x}</span>'\n"
        "# a comment may say #ff0000 and 4px\n"
    )
    try:
        found = sorted(line.split(": ", 1)[1] for line in problems_in(sample))
    finally:
        sample.unlink()
    assert found == sorted(
        [
            "colour '#ff0000'",
            "pixel size '4px'",
            "setContentsMargins given literal sizes [6, 6]",
            "QColor('white')",
            "Qt.GlobalColor.white",
            "colour 'background:white'",
        ]
    )
