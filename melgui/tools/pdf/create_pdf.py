"""create_pdf: Markdown or HTML to a PDF in the project, by the best engine that works.

Order: Chromium/Chrome/Edge, wkhtmltopdf, WeasyPrint, then Qt's own PDF writer, which
always works. The result names the engine and the page count.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.pdf import CREATE_PDF
from melgui.tools.context import ToolContext
from melgui.tools.pdf import floor as pdf_floor
from melgui.tools.pdf.engines import (
    PdfEngineError,
    checked_pdf,
    count_pdf_pages,
    render_chromium,
    render_weasyprint,
    render_wkhtmltopdf,
)
from melgui.tools.settings import PdfEngineName
from melgui.tools.workspace import write_bytes_confined

_LABELS: dict[PdfEngineName, str] = {
    "chromium": "Chromium",
    "wkhtmltopdf": "wkhtmltopdf",
    "weasyprint": "WeasyPrint",
    "qt": "Qt",
}


async def _render_qt(html: str, out: Path, title: str) -> tuple[bytes, str]:
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[BaseException | None] = loop.create_future()

    def on_done(error: BaseException | None) -> None:
        loop.call_soon_threadsafe(finished.set_result, error)

    try:
        if threading.current_thread() is threading.main_thread():
            pdf_floor.ensure_gui_application()
        thread = pdf_floor.start_render(html, str(out), title, on_done)
    except (ImportError, RuntimeError) as exc:
        raise PdfEngineError(f"unavailable: {exc}") from None
    try:
        error = await asyncio.shield(finished)
    finally:
        # A render cannot be interrupted; the thread is kept until it has ended.
        await asyncio.to_thread(thread.wait)
    if error is not None:
        raise PdfEngineError(f"failed: {type(error).__name__}: {error}")
    data = await asyncio.to_thread(checked_pdf, out, 0, "")
    return data, "Qt's built-in PDF writer (the floor renderer)"


async def _render(
    engine: PdfEngineName, html: str, title: str, workdir: Path, timeout: float
) -> tuple[bytes, str]:
    html_file = workdir / "document.html"
    out = workdir / f"{engine}.pdf"
    if engine == "chromium":
        return await render_chromium(html_file, out, timeout)
    if engine == "wkhtmltopdf":
        return await render_wkhtmltopdf(html_file, out, title, timeout)
    if engine == "weasyprint":
        return await render_weasyprint(html, out)
    return await _render_qt(html, out, title)


def _prepare(workdir: Path, html: str) -> None:
    (workdir / "document.html").write_text(html, encoding="utf-8")


@dataclass(frozen=True, slots=True)
class CreatePdfInput:
    content: str
    output_path: str
    title: str = ""

    def __post_init__(self) -> None:
        if not self.output_path.lower().endswith(".pdf"):
            raise ToolError(f"output_path must name a .pdf file, got {self.output_path!r}.")


async def create_pdf(context: ToolContext, given: CreatePdfInput) -> ToolOutcome:
    workspace, settings = context.workspace, context.settings
    content, output_path = given.content, given.output_path
    destination = await asyncio.to_thread(workspace.writable_file, output_path, "output_path")
    title = given.title.strip() or destination.stem
    # With the first PDF: the stdlib's html (its entity table, 0.5 MB) is not held by a
    # process that makes none.
    from melgui.tools.pdf.html import build_document

    html = build_document(content, title)
    workdir = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="melgui-pdf-"))
    failures: list[str] = []
    try:
        await asyncio.to_thread(_prepare, workdir, html)
        for engine in settings.pdf_engines:
            try:
                data, label = await _render(engine, html, title, workdir, settings.pdf_timeout)
            except PdfEngineError as exc:
                failures.append(f"{_LABELS[engine]}: {exc}")
                continue
            break
        else:
            raise ToolError(
                "create_pdf failed: no engine could render the PDF (" + "; ".join(failures) + ")."
            )
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, True)
    try:
        await asyncio.to_thread(write_bytes_confined, workspace, destination, data)
    except OSError as exc:
        raise ToolError(f"Cannot write {output_path!r}: {exc.strerror or exc}.") from None
    pages = count_pdf_pages(data)
    text = (
        f"Created {workspace.display(destination)} with {label}: "
        f"{pages} page{'' if pages == 1 else 's'}, {len(data):,} bytes."
    )
    if failures:
        text += " Engines tried before it: " + "; ".join(failures) + "."
    return ToolOutcome(text)


CREATE_PDF_TOOL = Tool(CREATE_PDF, CreatePdfInput, create_pdf)
