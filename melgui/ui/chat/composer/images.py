"""Images pasted or dropped into the prompt box, made fit to send.

PNG, JPEG and WebP are taken. An image is scaled so its long side is at most
MAX_SIDE pixels and its file at most MAX_BYTES (what vision models take without
shrinking it again); one already within both is sent as it is.
"""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QImage, QImageReader, QPixmap

from melgui.core.protocol.content import ImagePart

MAX_SIDE = 1568
MAX_BYTES = 5 * 1024 * 1024
FORMATS = {b"png": "image/png", b"jpeg": "image/jpeg", b"jpg": "image/jpeg", b"webp": "image/webp"}
SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


class ImageError(ValueError):
    """The data is not an image melgui can send; the message says why."""


def image_from_bytes(data: bytes, name: str = "image") -> ImagePart:
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    kind = bytes(reader.format().data()).lower()
    if kind not in FORMATS:
        raise ImageError(f"{name}: only PNG, JPEG and WebP images can be attached")
    size = reader.size()
    if len(data) <= MAX_BYTES and max(size.width(), size.height()) <= MAX_SIDE:
        return ImagePart(FORMATS[kind], data, name)
    image = reader.read()
    if image.isNull():
        raise ImageError(f"{name}: the image cannot be read ({reader.errorString()})")
    return fit_image(image, name, keep_png=kind == b"png")


def fit_image(image: QImage, name: str = "pasted.png", *, keep_png: bool = True) -> ImagePart:
    """Scale and encode `image` within MAX_SIDE and MAX_BYTES (PNG when it fits, else JPEG)."""
    if image.isNull():
        raise ImageError(f"{name}: the image is empty")
    if max(image.width(), image.height()) > MAX_SIDE:
        image = image.scaled(
            QSize(MAX_SIDE, MAX_SIDE),
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    if keep_png:
        data = _encode(image, "PNG")
        if len(data) <= MAX_BYTES:
            return ImagePart("image/png", data, name)
    flat = image.convertToFormat(QImage.Format.Format_RGB888)
    while True:
        for quality in (90, 80, 65, 50):
            data = _encode(flat, "JPEG", quality)
            if len(data) <= MAX_BYTES:
                return ImagePart("image/jpeg", data, _renamed(name, ".jpg"))
        flat = flat.scaled(
            flat.width() * 3 // 4,
            flat.height() * 3 // 4,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )


def thumbnail(part: ImagePart, side: int = 48) -> QPixmap:
    pixmap = QPixmap()
    pixmap.loadFromData(part.data)
    return pixmap.scaled(
        side, side, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )


def image_size(part: ImagePart) -> QSize:
    buffer = QBuffer()
    buffer.setData(QByteArray(part.data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    return QImageReader(buffer).size()


def _encode(image: QImage, kind: str, quality: int = -1) -> bytes:
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, kind, quality)  # type: ignore[call-overload]  # str works; stubs say bytes
    buffer.close()
    return bytes(array.data())


def _renamed(name: str, suffix: str) -> str:
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return stem + suffix
