"""A user message's attachments in the transcript: image thumbnails and file lines."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QImage, QTextDocument

from melgui.core.protocol.content import ImagePart, Part
from melgui.ui.runtime.theme import Colors

IMAGE_SCHEME = "melgui-image"
SHOWN_SIDE = 320


def parts_html(document: QTextDocument, parts: tuple[Part, ...], colors: Colors) -> str:
    """HTML to put under the message text; images become document resources once."""
    pieces: list[str] = []
    for part in parts:
        if isinstance(part, ImagePart):
            url = f"{IMAGE_SCHEME}:{part.sha256}"
            image = QImage.fromData(part.data)
            if image.isNull():
                pieces.append(_line(f"[image {part.name} cannot be shown]", colors))
                continue
            if max(image.width(), image.height()) > SHOWN_SIDE:
                image = image.scaled(
                    SHOWN_SIDE,
                    SHOWN_SIDE,
                    Qt.AspectRatioMode.KeepAspectRatio,
                    Qt.TransformationMode.SmoothTransformation,
                )
            document.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), image)
            pieces.append(f'<img src="{url}" width="{image.width()}" height="{image.height()}">')
        else:
            note = f" ({part.note})" if part.note else ""
            kind = "folder" if part.kind == "folder" else "file"
            pieces.append(_line(f"Attached {kind}: @{part.path}{note}", colors))
    return "<br>".join(pieces)


def _line(text: str, colors: Colors) -> str:
    return f'<span style="color:{colors.muted}">{html.escape(text)}</span>'
