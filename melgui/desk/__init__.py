"""The Qt-free assembly of one project folder at work (`melgui.desk.desk.Desk`): the
live connection, the workspace tools, approval rules, sessions, and what closing would
lose. The window and `melgui exec` are both built on it."""
