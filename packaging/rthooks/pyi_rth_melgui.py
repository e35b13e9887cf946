"""Runtime hook of the bundled app: run before melgui is imported."""

import os

# qasync picks the Qt binding from QT_API; the bundle holds PySide6 only.
os.environ["QT_API"] = "pyside6"
