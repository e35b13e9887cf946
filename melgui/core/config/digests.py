"""sha256 of short texts (a folder's path made into a name), without OpenSSL.

`hashlib` loads OpenSSL's library, about 4 MB resident, for its first digest. A melgui
host waiting with a window's session open names that session's folders (its checkpoint
and worktree folders) but hashes nothing else: there the digest comes from Python's own
sha256, which `hashlib` itself falls back to without OpenSSL. The digest is the same.
Large data (files, blobs) still goes through `hashlib`, OpenSSL's being faster.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def _builtin_sha256() -> Callable[[bytes], Any]:
    for name in ("_sha2", "_sha256"):  # Python 3.12 and later, 3.11
        try:
            module: Any = importlib.import_module(name)
        except ImportError:
            continue
        return module.sha256
    import hashlib  # a Python built without its own: OpenSSL's then

    return hashlib.sha256


_sha256 = _builtin_sha256()


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of `data` (meant for short texts: see above)."""
    return str(_sha256(data).hexdigest())
