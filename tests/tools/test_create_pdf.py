"""create_pdf with the Qt floor (always) and Chromium (where installed); the text is checked."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from melgui.core.protocol.tooling import ToolError
from melgui.tools.context import ToolContext
from melgui.tools.pdf.create_pdf import CREATE_PDF_TOOL
from melgui.tools.pdf.engines import count_pdf_pages, find_chromium
from melgui.tools.pdf.html import build_document, looks_like_html
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

MARKDOWN = "# Quarterly Report\n\nSales grew **twelve** percent — über café.\n\n" + "\n\n".join(
    f"Section {i}: " + "lorem ipsum dolor " * 40 for i in range(40)
)


def pdf_text(path: Path) -> tuple[int, str]:
    reader = PdfReader(path)
    text = " ".join(page.extract_text() or "" for page in reader.pages)
    return len(reader.pages), " ".join(text.split())


@pytest.fixture
def qt_app(qapp: object) -> object:
    """pytest-qt's application, made on the main thread before the floor needs one."""
    return qapp


async def test_qt_floor_markdown(workspace: Workspace, qt_app: object) -> None:
    settings = ToolSettings(pdf_engines=("qt",))
    outcome = await CREATE_PDF_TOOL.run(
        ToolContext(workspace, settings), {"content": MARKDOWN, "output_path": "out/report.pdf"}
    )
    assert outcome.status == "ok"
    pages, text = pdf_text(workspace.root / "out" / "report.pdf")
    assert outcome.content.startswith(
        f"Created out/report.pdf with Qt's built-in PDF writer (the floor renderer): {pages} pages"
    )
    assert pages > 1
    assert "Quarterly Report" in text
    assert "Sales grew twelve percent — über café." in text
    assert "Section 39:" in text


async def test_qt_floor_html_and_title(workspace: Workspace, qt_app: object) -> None:
    html = "<html><head></head><body><h1>Hello HTML</h1><p>Second line</p></body></html>"
    outcome = await CREATE_PDF_TOOL.run(
        ToolContext(workspace, ToolSettings(pdf_engines=("qt",))),
        {"content": html, "output_path": "page.pdf", "title": "My Title"},
    )
    assert "1 page," in outcome.content
    reader = PdfReader(workspace.root / "page.pdf")
    assert reader.metadata is not None and reader.metadata.title == "My Title"
    assert "Hello HTML" in pdf_text(workspace.root / "page.pdf")[1]


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium/Chrome/Edge installed")
async def test_chromium(workspace: Workspace) -> None:
    secret = workspace.root.parent / "outside-secret.txt"
    secret.write_text("LEAKED-SECRET-CONTENT")
    content = MARKDOWN + f'\n\n<iframe src="{secret.as_uri()}"></iframe>\n\nThe end.'
    outcome = await CREATE_PDF_TOOL.run(
        ToolContext(workspace, ToolSettings(pdf_engines=("chromium",))),
        {"content": content, "output_path": "chrome.pdf"},
    )
    assert outcome.status == "ok", outcome.content
    pages, text = pdf_text(workspace.root / "chrome.pdf")
    assert outcome.content.startswith("Created chrome.pdf with Chromium (")
    assert f": {pages} pages," in outcome.content
    assert "Quarterly Report" in text and "über café" in text and "The end." in text
    assert "LEAKED-SECRET-CONTENT" not in text


@pytest.mark.skipif(
    shutil.which("wkhtmltopdf") is not None or importlib.util.find_spec("weasyprint") is not None,
    reason="the missing engines are installed here",
)
async def test_missing_engines_fall_through_to_the_floor(
    workspace: Workspace, qt_app: object
) -> None:
    outcome = await CREATE_PDF_TOOL.run(
        ToolContext(workspace, ToolSettings(pdf_engines=("wkhtmltopdf", "weasyprint", "qt"))),
        {"content": "fallback text", "output_path": "f.pdf"},
    )
    assert "with Qt's built-in PDF writer" in outcome.content
    assert (
        "Engines tried before it: wkhtmltopdf: not installed; WeasyPrint: not installed."
        in outcome.content
    )
    assert "fallback text" in pdf_text(workspace.root / "f.pdf")[1]


async def test_no_engine_left_is_an_error(workspace: Workspace) -> None:
    settings = ToolSettings(pdf_engines=("wkhtmltopdf",))
    if shutil.which("wkhtmltopdf"):
        pytest.skip("wkhtmltopdf is installed here")
    with pytest.raises(ToolError, match="no engine could render the PDF"):
        await CREATE_PDF_TOOL.run(
            ToolContext(workspace, settings), {"content": "x", "output_path": "x.pdf"}
        )
    assert not (workspace.root / "x.pdf").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"content": "x"}, "Missing required argument 'output_path'"),
        ({"content": "x", "output_path": "x.txt"}, "must name a .pdf file"),
        ({"content": "x", "output_path": "../x.pdf"}, "outside the project"),
        ({"content": 3, "output_path": "x.pdf"}, "'content' must be a string"),
    ],
)
async def test_bad_arguments(
    workspace: Workspace, arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await CREATE_PDF_TOOL.run(
            ToolContext(workspace, ToolSettings(pdf_engines=("qt",))), arguments
        )


def test_floor_works_without_an_application(tmp_path: Path) -> None:
    """A process with no Qt application (a CLI) still gets its PDF, offscreen."""
    script = (
        "import asyncio, sys\n"
        "from melgui.tools.pdf.create_pdf import CREATE_PDF_TOOL\n"
        "from melgui.tools.context import ToolContext\n"
        "from melgui.tools.settings import ToolSettings\n"
        "from melgui.tools.workspace import Workspace\n"
        "args = {'content': '# Headless render', 'output_path': 'h.pdf'}\n"
        "context = ToolContext(Workspace(sys.argv[1]), ToolSettings(pdf_engines=('qt',)))\n"
        "out = asyncio.run(CREATE_PDF_TOOL.run(context, args))\n"
        "print(out.content)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=90,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "with Qt's built-in PDF writer" in result.stdout
    assert "Headless render" in pdf_text(tmp_path / "h.pdf")[1]


def test_html_detection_and_csp() -> None:
    assert looks_like_html("<!DOCTYPE html><p>x</p>")
    assert looks_like_html("  <div>x</div>")
    assert not looks_like_html("# Title\n\n<b>inline</b> html in markdown")
    document = build_document("<html><head><title>T</title></head><body>x</body></html>", "T")
    assert document.index("Content-Security-Policy") < document.index("<title>T</title>")
    assert "default-src 'none'" in build_document("# md", "t")


def test_page_counting() -> None:
    assert count_pdf_pages(b"%PDF-1.4 /Type /Pages /Count 2 /Type /Page /Type /Page") == 2
    assert count_pdf_pages(b"%PDF-1.7 /Type/Pages/Count 7") == 7
