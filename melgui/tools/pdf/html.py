"""create_pdf's input as one self-contained HTML document, whatever engine renders it.

Markdown is converted; HTML is kept. Either way a Content-Security-Policy comes first,
so a page cannot pull in local files or anything from the network while it renders.
"""

from __future__ import annotations

import html
import re

_HTML_START = re.compile(
    r"\s*(?:<!--.*?-->\s*)*<(?:!doctype|html|head|body|div|p|h[1-6]|table|ul|ol|section|"
    r"article|main|header|pre|span|style|meta|title|br|img|blockquote)\b",
    re.IGNORECASE | re.DOTALL,
)
CSP = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'; img-src data:; font-src data:\">"
)
_CHARSET = '<meta charset="utf-8">'
_STYLE = """<style>
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 11pt;
       line-height: 1.4; margin: 0; color: #111; }
h1, h2, h3 { line-height: 1.2; }
pre, code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 9.5pt; }
pre { background: #f4f4f4; padding: 6pt; white-space: pre-wrap; }
table { border-collapse: collapse; }
th, td { border: 1px solid #999; padding: 3pt 6pt; }
</style>"""


def looks_like_html(content: str) -> bool:
    return _HTML_START.match(content) is not None


def markdown_to_html(text: str) -> str:
    import markdown  # only when a PDF is made: not in every start of melgui exec

    return markdown.markdown(text, extensions=["extra", "sane_lists"], output_format="html")


def build_document(content: str, title: str) -> str:
    """A complete HTML page for `content` (Markdown or HTML) with `title`."""
    safe_title = html.escape(title)
    if looks_like_html(content):
        head_tag = re.search(r"<head\b[^>]*>", content, re.IGNORECASE)
        if head_tag is not None:
            at = head_tag.end()
            extra = (
                _CHARSET
                + CSP
                + ("" if re.search(r"<title\b", content, re.I) else f"<title>{safe_title}</title>")
            )
            return content[:at] + extra + content[at:]
        # A meta before everything still lands in the parsed document's head.
        return f"{_CHARSET}{CSP}<title>{safe_title}</title>{content}"
    body = markdown_to_html(content)
    head = f"{_CHARSET}{CSP}<title>{safe_title}</title>{_STYLE}"
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"
