"""The Qt window. Depends on melgui.core; nothing in core depends on it."""
