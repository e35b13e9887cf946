"""The knobs of the workspace tools, one small frozen value the app builds from its config."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SearchEngine = Literal["auto", "ripgrep", "python"]
PdfEngineName = Literal["chromium", "wkhtmltopdf", "weasyprint", "qt"]

ALL_PDF_ENGINES: tuple[PdfEngineName, ...] = ("chromium", "wkhtmltopdf", "weasyprint", "qt")


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """Limits and providers for the workspace tools."""

    command_timeout: float = 120.0
    """Seconds before run_command kills the command's whole process group."""
    command_output_cap: int = 32_000
    """Bytes of command output kept (half from the start, half from the end)."""
    read_default_lines: int = 2000
    """Lines read_file returns when the model gives no limit."""
    read_max_bytes: int = 100_000
    """Bytes of text read_file returns at most in one call."""
    read_max_line_chars: int = 2000
    """Characters of one line read_file shows; the rest is summarized."""
    edit_max_bytes: int = 20_000_000
    """Largest file edit_file and the diff previews will load."""
    list_max_entries: int = 500
    """Entries list_dir shows at most."""
    grep_max_matches: int = 200
    """Matching lines grep returns at most."""
    grep_max_line_chars: int = 300
    """Characters of a matching line grep shows."""
    find_max_results: int = 500
    """Paths find_files returns at most."""
    search_timeout: float = 30.0
    """Seconds a grep or find_files may run (the pure-Python engine can meet slow regexes)."""
    search_engine: SearchEngine = "auto"
    """ripgrep when it is installed ("auto"), or force one engine."""
    searxng_url: str | None = None
    """Base URL of a SearXNG instance with its JSON API enabled; None: web search is off."""
    web_search_max_results: int = 8
    """Hits web_search returns."""
    web_search_timeout: float = 20.0
    """Seconds one web search may take."""
    pdf_engines: tuple[PdfEngineName, ...] = ALL_PDF_ENGINES
    """PDF engines to try, in order; "qt" is the floor that always works."""
    pdf_timeout: float = 90.0
    """Seconds an external PDF engine may run."""
    sandbox_commands: bool = False
    """Run run_command in the bubblewrap sandbox (melgui.tools.commands.sandbox)."""
    sandbox_network: bool = False
    """Sandboxed commands may use the network."""
    sandbox_hidden: tuple[str, ...] = ()
    """Folders a sandboxed command cannot see (melgui's config, data, keyring, bus)."""
