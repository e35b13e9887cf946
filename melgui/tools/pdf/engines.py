"""External PDF engines: Chromium/Chrome/Edge headless, wkhtmltopdf, WeasyPrint.

Each renders an HTML file into a PDF file in a private temp folder; the tool copies the
result into the project itself. A missing or failing engine raises PdfEngineError and
the next one is tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import os
import re
import shutil
import signal
from pathlib import Path
from typing import Any

from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import start_group

CHROMIUM_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "microsoft-edge",
    "microsoft-edge-stable",
)


class PdfEngineError(Exception):
    """This engine could not make the PDF; the message says why in a few words."""


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def count_pdf_pages(data: bytes) -> int:
    """Pages of a PDF: its /Type /Page objects, else the page tree's /Count."""
    pages = len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))
    if pages:
        return pages
    counts = [int(value) for value in re.findall(rb"/Count\s+(\d+)", data)]
    return max(counts, default=0)


async def _run_isolated(argv: list[str], workdir: Path, timeout: float) -> tuple[int, str]:
    """Run an engine in its own process group with a private HOME; kill the group on timeout."""
    log_path = workdir / "engine.log"
    env = dict(os.environ)
    env.update(
        {
            "HOME": str(workdir),
            "XDG_CONFIG_HOME": str(workdir / "config"),
            "XDG_CACHE_HOME": str(workdir / "cache"),
        }
    )
    with open(log_path, "wb") as log:
        try:
            proc = await start_group(argv, cwd=workdir, env=env, output=log)
        except OSError as exc:
            raise PdfEngineError(f"cannot start: {exc.strerror or exc}") from None
    try:
        returncode = await within(asyncio.shield(proc.wait()), timeout)
    except TimeoutError:
        raise PdfEngineError(f"timed out after {timeout:g} s") from None
    finally:
        # Browsers leave helper processes behind; the whole group goes.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        await asyncio.shield(proc.wait())
    log_bytes = await asyncio.to_thread(log_path.read_bytes)
    log_text = log_bytes[-2000:].decode("utf-8", errors="replace")
    return returncode, log_text


def checked_pdf(out: Path, returncode: int, log: str) -> bytes:
    """The PDF an engine wrote, or PdfEngineError with the last line of its log."""
    data = out.read_bytes() if out.exists() else b""
    if not data.startswith(b"%PDF"):
        last = next((line for line in reversed(log.splitlines()) if line.strip()), "")
        raise PdfEngineError(
            f"no PDF produced (exit {returncode}{': ' + last[:200] if last else ''})"
        )
    return data


async def render_chromium(html_file: Path, out: Path, timeout: float) -> tuple[bytes, str]:
    binary = find_chromium()
    if binary is None:
        raise PdfEngineError("not installed")
    workdir = html_file.parent
    argv = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--no-pdf-header-footer",
        f"--user-data-dir={workdir / 'profile'}",
        f"--print-to-pdf={out}",
        html_file.as_uri(),
    ]
    returncode, log = await _run_isolated(argv, workdir, timeout)
    return await asyncio.to_thread(checked_pdf, out, returncode, log), f"Chromium ({binary})"


async def render_wkhtmltopdf(
    html_file: Path, out: Path, title: str, timeout: float
) -> tuple[bytes, str]:
    binary = shutil.which("wkhtmltopdf")
    if binary is None:
        raise PdfEngineError("not installed")
    argv = [
        binary,
        "--quiet",
        "--encoding",
        "utf-8",
        "--title",
        title,
        "--disable-local-file-access",
        "--allow",
        str(html_file.parent),
        str(html_file),
        str(out),
    ]
    returncode, log = await _run_isolated(argv, html_file.parent, timeout)
    data = await asyncio.to_thread(checked_pdf, out, returncode, log)
    return data, f"wkhtmltopdf ({binary})"


def _deny_fetch(url: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    raise ValueError(f"create_pdf loads no external resources ({url[:60]})")


def _weasyprint_write(html: str, out: Path) -> None:
    weasyprint: Any = importlib.import_module("weasyprint")
    weasyprint.HTML(string=html, url_fetcher=_deny_fetch).write_pdf(target=str(out))


async def render_weasyprint(html: str, out: Path) -> tuple[bytes, str]:
    if importlib.util.find_spec("weasyprint") is None:
        raise PdfEngineError("not installed")
    try:
        await asyncio.to_thread(_weasyprint_write, html, out)
    except Exception as exc:  # an optional library: any failure just moves to the next engine
        raise PdfEngineError(f"failed: {type(exc).__name__}: {str(exc)[:200]}") from None
    return await asyncio.to_thread(checked_pdf, out, 0, ""), "WeasyPrint"
