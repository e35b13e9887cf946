"""The rich parts of a result (an MCP server's images, audio, resources, structured
content), rendered in a QTextBrowser: images shown, the rest as labelled blocks."""

from __future__ import annotations

import base64
import binascii
import html

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QTextBrowser, QWidget

from melgui.core.protocol.tooling import ResultPart
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S
from melgui.ui.runtime.theme import Colors

MAX_IMAGE_WIDTH = 420
MAX_SHOWN_TEXT = 20_000


def _image(data: str) -> QImage | None:
    try:
        raw = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None
    image = QImage.fromData(raw)
    return None if image.isNull() else image


def _label(text: str, colors: Colors) -> str:
    style = f"color:{colors.muted}; margin:{SPACE_S}px 0 {SPACE_2XS}px 0"
    return f'<p style="{style}">{html.escape(text)}</p>'


def _pre(text: str, colors: Colors) -> str:
    shown = text if len(text) <= MAX_SHOWN_TEXT else text[:MAX_SHOWN_TEXT] + "\n[…]"
    return (
        f'<pre style="font-family:monospace; background-color:{colors.code_bg}; margin:0">'
        f"{html.escape(shown)}</pre>"
    )


class ResultPartsView(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.shown_images = 0

    def show_parts(self, parts: tuple[ResultPart, ...], colors: Colors) -> None:
        document = self.document()
        document.clear()
        self.shown_images = 0
        blocks: list[str] = []
        for index, part in enumerate(parts):
            blocks.append(self._block(index, part, colors, document))
        self.setHtml("".join(blocks))

    def _picture(self, index: int, part: ResultPart, document: QTextDocument) -> str | None:
        image = _image(part.data)
        if image is None:
            return None
        url = f"melgui-part://{index}"
        document.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), image)
        width = min(image.width() * (8 if image.width() < 32 else 1), MAX_IMAGE_WIDTH)
        self.shown_images += 1
        return f'<p><img src="{url}" width="{width}"></p>'

    def _block(self, index: int, part: ResultPart, colors: Colors, doc: QTextDocument) -> str:
        match part.kind:
            case "text":
                return _label("Text", colors) + _pre(part.text, colors)
            case "image":
                shown = self._picture(index, part, doc)
                label = _label(f"Image · {part.mime_type}", colors)
                return label + (shown or _pre("(the image data could not be decoded)", colors))
            case "audio":
                size = len(part.data) * 3 // 4
                return _label(f"Audio · {part.mime_type} · about {size:,} bytes", colors)
            case "resource_link":
                link = html.escape(part.uri)
                return _label(f"Resource link · {part.mime_type or 'no type'}", colors) + (
                    f'<p><a href="{link}">{link}</a> {html.escape(part.text)}</p>'
                )
            case "resource":
                label = _label(f"Embedded resource · {part.uri} · {part.mime_type}", colors)
                if part.data:
                    shown = self._picture(index, part, doc) if "image" in part.mime_type else None
                    size = len(part.data) * 3 // 4
                    return label + (shown or _pre(f"({size:,} bytes of binary data)", colors))
                return label + _pre(part.text, colors)
            case "structured":
                return _label("Structured content", colors) + _pre(part.text, colors)
