"""The PDF floor that always works: Qt's QTextDocument printed through QPdfWriter.

The only module of melgui.tools that touches Qt, and only inside its functions, so
importing it costs nothing and core stays Qt-free.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_APP: Any = None  # an application created here is kept alive for the process


def ensure_gui_application() -> None:
    """Qt needs an application object to lay out text; create an offscreen one if none.

    Call on the main thread. In the app the QApplication already exists; in a CLI or a
    test none does, and an offscreen one needs no display.
    """
    global _APP
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication

    if QGuiApplication.instance() is not None:
        return
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("the Qt PDF floor needs an application created on the main thread")
    # A widgets application, so code that later needs widgets still works in-process.
    _APP = QApplication(["melgui-pdf", "-platform", "offscreen"])


def render_html_to_pdf(html: str, out_path: str, title: str) -> None:
    """Write `html` as an A4 PDF at `out_path`.

    Resources other than `data:` URLs are never loaded.
    """
    from PySide6.QtCore import QMarginsF, QUrl
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter, QTextDocument

    class _SealedDocument(QTextDocument):
        def loadResource(self, kind: int, name: QUrl | str) -> Any:
            if QUrl(name).scheme() == "data":
                return super().loadResource(kind, name)
            return None

    writer = QPdfWriter(out_path)
    writer.setTitle(title)
    writer.setCreator("melgui")
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter)
    document = _SealedDocument()
    document.setHtml(html)
    document.print_(writer)
    del writer  # closes the file


def start_render(
    html: str, out_path: str, title: str, on_done: Callable[[BaseException | None], None]
) -> Any:
    """Render on a QThread (whose event dispatcher text layout needs); returns the thread.

    `on_done` is called on that thread when the file is written (None) or failed. The
    caller keeps the returned thread and `wait()`s on it before dropping it.
    """
    from PySide6.QtCore import QThread

    class _RenderThread(QThread):
        def run(self) -> None:
            error: BaseException | None = None
            try:
                render_html_to_pdf(html, out_path, title)
            except Exception as exc:  # reported to the caller, never lost on this thread
                error = exc
            on_done(error)

    thread = _RenderThread()
    thread.start()
    return thread
