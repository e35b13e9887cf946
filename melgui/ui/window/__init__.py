"""The main window and its chrome: menus, toolbar, palette, status bar, layout, docks."""
