"""Windows .ico and macOS .icns files built from PNG renderings (no Qt, no Pillow).

Both formats can hold PNG data directly: ICO since Windows Vista, ICNS since 10.7.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)

# ICNS entry type → pixel size of the PNG it holds (the @2x types reuse bigger renderings).
ICNS_TYPES: tuple[tuple[bytes, int], ...] = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"icp6", 64),
    (b"ic07", 128),
    (b"ic08", 256),
    (b"ic09", 512),
    (b"ic10", 1024),
    (b"ic11", 32),
    (b"ic12", 64),
    (b"ic13", 256),
    (b"ic14", 512),
)
ICNS_SIZES = tuple(sorted({size for _, size in ICNS_TYPES}))


def _need(pngs: Mapping[int, bytes], sizes: tuple[int, ...]) -> None:
    missing = [size for size in sizes if size not in pngs]
    if missing:
        raise ValueError(f"PNG renderings missing for sizes {missing}")


def ico_bytes(pngs: Mapping[int, bytes]) -> bytes:
    """An .ico holding one PNG per ICO_SIZES entry."""
    _need(pngs, ICO_SIZES)
    header = struct.pack("<HHH", 0, 1, len(ICO_SIZES))
    offset = len(header) + 16 * len(ICO_SIZES)
    entries, images = b"", b""
    for size in ICO_SIZES:
        png = pngs[size]
        side = 0 if size == 256 else size  # 0 means 256 in a one-byte field
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset)
        offset += len(png)
        images += png
    return header + entries + images


def icns_bytes(pngs: Mapping[int, bytes]) -> bytes:
    """An .icns holding a PNG for every ICNS_TYPES entry, 16 px to 1024 px (512@2x)."""
    _need(pngs, ICNS_SIZES)
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def ico_pngs(data: bytes) -> dict[int, bytes]:
    """The PNG held for each size in an .ico made by `ico_bytes`."""
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    if (reserved, kind) != (0, 1):
        raise ValueError("not an .ico file")
    pngs: dict[int, bytes] = {}
    for index in range(count):
        entry = data[6 + 16 * index : 22 + 16 * index]
        side, _, _, _, _, _, length, offset = struct.unpack("<BBBBHHII", entry)
        pngs[side or 256] = data[offset : offset + length]
    return pngs


def icns_pngs(data: bytes) -> dict[bytes, bytes]:
    """The PNG held under each entry type of an .icns made by `icns_bytes`."""
    if data[:4] != b"icns":
        raise ValueError("not an .icns file")
    pngs: dict[bytes, bytes] = {}
    position = 8
    while position + 8 <= len(data):
        kind = data[position : position + 4]
        (length,) = struct.unpack(">I", data[position + 4 : position + 8])
        if length < 8:
            raise ValueError("broken .icns entry")
        pngs[kind] = data[position + 8 : position + length]
        position += length
    return pngs
