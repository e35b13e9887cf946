"""What a key press sends to a program, as an xterm would send it."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QKeySequence

_Key = Qt.Key
_Mod = Qt.KeyboardModifier

# Cursor keys: ESC [ x normally, ESC O x in application cursor mode (DECCKM).
_CURSOR = {_Key.Key_Up: "A", _Key.Key_Down: "B", _Key.Key_Right: "C", _Key.Key_Left: "D"}
_HOME_END = {_Key.Key_Home: "H", _Key.Key_End: "F"}
_TILDE = {
    _Key.Key_Insert: 2,
    _Key.Key_Delete: 3,
    _Key.Key_PageUp: 5,
    _Key.Key_PageDown: 6,
    _Key.Key_F5: 15,
    _Key.Key_F6: 17,
    _Key.Key_F7: 18,
    _Key.Key_F8: 19,
    _Key.Key_F9: 20,
    _Key.Key_F10: 21,
    _Key.Key_F11: 23,
    _Key.Key_F12: 24,
}
_SS3_F = {_Key.Key_F1: "P", _Key.Key_F2: "Q", _Key.Key_F3: "R", _Key.Key_F4: "S"}
_PLAIN = {
    _Key.Key_Return: b"\r",
    _Key.Key_Enter: b"\r",
    _Key.Key_Tab: b"\t",
    _Key.Key_Backtab: b"\x1b[Z",
    _Key.Key_Backspace: b"\x7f",
    _Key.Key_Escape: b"\x1b",
}


def _modifier_code(mods: Qt.KeyboardModifier) -> int:
    """xterm's 1 + shift + 2*alt + 4*ctrl, or 0 when no modifier applies."""
    code = 0
    if mods & _Mod.ShiftModifier:
        code |= 1
    if mods & _Mod.AltModifier:
        code |= 2
    if mods & _Mod.ControlModifier:
        code |= 4
    return code + 1 if code else 0


def key_bytes(key: int, mods: Qt.KeyboardModifier, text: str, app_cursor: bool) -> bytes:
    """Bytes for one key press; b"" when the key sends nothing."""
    mod = _modifier_code(mods & ~_Mod.KeypadModifier)
    try:
        qkey: Qt.Key | None = _Key(key)
    except ValueError:
        qkey = None
    if qkey in _CURSOR or qkey in _HOME_END:
        final = _CURSOR.get(qkey) or _HOME_END[qkey]
        if mod:
            return f"\x1b[1;{mod}{final}".encode()
        return f"\x1bO{final}".encode() if app_cursor else f"\x1b[{final}".encode()
    if qkey in _TILDE:
        number = _TILDE[qkey]
        return f"\x1b[{number};{mod}~".encode() if mod else f"\x1b[{number}~".encode()
    if qkey in _SS3_F:
        final = _SS3_F[qkey]
        return f"\x1b[1;{mod}{final}".encode() if mod else f"\x1bO{final}".encode()
    if qkey == _Key.Key_Tab and mods & _Mod.ShiftModifier:
        return b"\x1b[Z"
    if qkey in _PLAIN:
        sent = _PLAIN[qkey]
        return b"\x1b" + sent if mods & _Mod.AltModifier else sent
    ctrl = bool(mods & _Mod.ControlModifier)
    if ctrl and _Key.Key_A <= key <= _Key.Key_Z:
        code = bytes([key - _Key.Key_A + 1])
        return b"\x1b" + code if mods & _Mod.AltModifier else code
    if ctrl:
        special = {
            _Key.Key_Space: b"\x00",
            _Key.Key_At: b"\x00",
            _Key.Key_BracketLeft: b"\x1b",
            _Key.Key_Backslash: b"\x1c",
            _Key.Key_BracketRight: b"\x1d",
            _Key.Key_AsciiCircum: b"\x1e",
            _Key.Key_Underscore: b"\x1f",
            _Key.Key_Question: b"\x7f",
        }
        if qkey in special:
            return special[qkey]
    if text:
        encoded = text.encode("utf-8", "replace")
        return b"\x1b" + encoded if mods & _Mod.AltModifier else encoded
    return b""


def paste_bytes(text: str, bracketed: bool) -> bytes:
    """Clipboard text as typed input: newlines as Enter, wrapped when the program asks."""
    body = text.replace("\r\n", "\r").replace("\n", "\r").encode("utf-8", "replace")
    if bracketed:
        return b"\x1b[200~" + body.replace(b"\x1b[201~", b"") + b"\x1b[201~"
    return body


class ReservedKeys:
    """The few window shortcuts a focused terminal lets through (back to the chat, next
    pane, the palette, …); every other key goes to the program, Esc and Tab included."""

    def __init__(self) -> None:
        self._keys: list[QKeySequence] = []

    def set(self, sequences: Iterable[QKeySequence]) -> None:
        self._keys = [sequence for sequence in sequences if not sequence.isEmpty()]

    def matches(self, event: QKeyEvent) -> bool:
        pressed = QKeySequence(event.keyCombination())
        return any(pressed == sequence for sequence in self._keys)


RESERVED_KEYS = ReservedKeys()
