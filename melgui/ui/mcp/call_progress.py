"""An MCP call's progress on its card in the chat: a bar (when the server gives a total)
and the server's words, redrawn at each report, gone when the call ends."""

from __future__ import annotations

import html

from melgui.core.protocol.tools.mcp.asks import Progress
from melgui.ui.runtime.theme import Colors

BAR_CELLS = 20


def progress_html(progress: Progress, colors: Colors) -> str:
    fraction = progress.fraction
    bar = ""
    if fraction is not None:
        full = round(fraction * BAR_CELLS)
        bar = (
            f'<span style="color:{colors.pending}">{"█" * full}</span>'
            f'<span style="color:{colors.muted}">{"░" * (BAR_CELLS - full)}</span>'
            f"&nbsp;{round(fraction * 100)}%&nbsp;&nbsp;"
        )
    return (
        f'<br/><span style="font-family:monospace">{bar}</span>'
        f'<span style="color:{colors.muted}">{html.escape(progress.line())}</span>'
    )
