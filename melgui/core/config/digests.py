"""sha256 and sha1 of short texts (a folder's path made into a name, a checkpoint's
commit object), without OpenSSL.

`hashlib` loads OpenSSL's library, about 4 MB resident, for its first digest. A melgui
host waiting with a window's session open names that session's folders (its checkpoint
and worktree folders) and writes the folder's first checkpoint commit, but hashes
nothing else: there the digest comes from Python's own sha256 and sha1, which `hashlib`
itself falls back to without OpenSSL. The digest is the same. Large data (files, blobs)
still goes through `hashlib`, OpenSSL's being faster.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def _builtin(names: tuple[str, ...], attribute: str) -> Callable[[bytes], Any]:
    for name in names:
        try:
            module: Any = importlib.import_module(name)
        except ImportError:
            continue
        return getattr(module, attribute)
    import hashlib  # a Python built without its own: OpenSSL's then

    return getattr(hashlib, attribute)


_sha256 = _builtin(("_sha2", "_sha256"), "sha256")  # Python 3.12 and later, 3.11
_sha1 = _builtin(("_sha1",), "sha1")


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of `data` (meant for short texts: see above)."""
    return str(_sha256(data).hexdigest())


def sha1_hex(data: bytes) -> str:
    """The hex sha1 of `data` (meant for short texts: see above), as git names objects."""
    return str(_sha1(data).hexdigest())
