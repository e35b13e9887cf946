"""Keys as an xterm sends them, and typing into a real terminal pane."""

from __future__ import annotations

from PySide6.QtCore import Qt

from melgui.ui.panes.terminal.keys import key_bytes, paste_bytes

K = Qt.Key
M = Qt.KeyboardModifier


def test_cursor_keys_follow_application_mode() -> None:
    assert key_bytes(K.Key_Up, M.NoModifier, "", False) == b"\x1b[A"
    assert key_bytes(K.Key_Left, M.NoModifier, "", True) == b"\x1bOD"
    assert key_bytes(K.Key_Right, M.ControlModifier, "", False) == b"\x1b[1;5C"
    assert key_bytes(K.Key_Home, M.NoModifier, "", False) == b"\x1b[H"
    assert key_bytes(K.Key_End, M.NoModifier, "", True) == b"\x1bOF"


def test_control_and_editing_keys() -> None:
    assert key_bytes(K.Key_C, M.ControlModifier, "\x03", False) == b"\x03"
    assert key_bytes(K.Key_D, M.ControlModifier, "\x04", False) == b"\x04"
    assert key_bytes(K.Key_Tab, M.NoModifier, "\t", False) == b"\t"
    assert key_bytes(K.Key_Backtab, M.ShiftModifier, "", False) == b"\x1b[Z"
    assert key_bytes(K.Key_Return, M.NoModifier, "\r", False) == b"\r"
    assert key_bytes(K.Key_Backspace, M.NoModifier, "\x08", False) == b"\x7f"
    assert key_bytes(K.Key_Delete, M.NoModifier, "", False) == b"\x1b[3~"
    assert key_bytes(K.Key_PageUp, M.NoModifier, "", False) == b"\x1b[5~"
    assert key_bytes(K.Key_F1, M.NoModifier, "", False) == b"\x1bOP"
    assert key_bytes(K.Key_B, M.AltModifier, "b", False) == b"\x1bb"
    assert key_bytes(K.Key_Eacute, M.NoModifier, "é", False) == "é".encode()
    assert key_bytes(K.Key_Shift, M.ShiftModifier, "", False) == b""


def test_paste_turns_newlines_into_enter_and_brackets_when_asked() -> None:
    assert paste_bytes("a\nb\r\nc", False) == b"a\rb\rc"
    assert paste_bytes("x\x1b[201~y", True) == b"\x1b[200~xy\x1b[201~"
