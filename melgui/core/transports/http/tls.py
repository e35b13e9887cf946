"""The TLS trust of every HTTP client melgui makes, loaded once, when first needed.

httpx builds a context and parses the whole certifi bundle (about 80 ms of CPU) for each
client it makes, before any connection and even for a server on plain http. Here one
context per process is shared, and its certificates load at its first TLS handshake.
What it trusts is what httpx's default would: `SSL_CERT_FILE` or `SSL_CERT_DIR` when the
client trusts the environment, else certifi's bundle.
"""

from __future__ import annotations

import functools
import os
import ssl
import sys
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


class _TrustOnFirstUse(ssl.SSLContext):
    """`ssl.create_default_context(cafile=…)` whose `load_verify_locations` waits for the
    first socket or BIO it wraps."""

    _trust_env: bool
    _lock: threading.Lock
    _loaded: bool

    @classmethod
    def for_clients(cls, trust_env: bool) -> _TrustOnFirstUse:
        context = cls(ssl.PROTOCOL_TLS_CLIENT)
        context.verify_mode = ssl.CERT_REQUIRED
        context.check_hostname = True
        keylog = os.environ.get("SSLKEYLOGFILE")
        if keylog and not sys.flags.ignore_environment:
            context.keylog_filename = keylog
        context._trust_env = trust_env
        context._lock = threading.Lock()
        context._loaded = False
        return context

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            if self._trust_env and os.environ.get("SSL_CERT_FILE"):
                self.load_verify_locations(cafile=os.environ["SSL_CERT_FILE"])
            elif self._trust_env and os.environ.get("SSL_CERT_DIR"):
                self.load_verify_locations(capath=os.environ["SSL_CERT_DIR"])
            else:
                import certifi

                self.load_verify_locations(cafile=certifi.where())
            self._loaded = True

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._load()
        return super().wrap_socket(*args, **kwargs)

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:
        self._load()
        return super().wrap_bio(*args, **kwargs)


@functools.cache
def shared_context(trust_env: bool = True) -> ssl.SSLContext:
    """The process's client context (one per `trust_env`, as httpx reads it)."""
    return _TrustOnFirstUse.for_clients(trust_env)


def async_client(*, trust_env: bool = True, **options: Any) -> httpx.AsyncClient:
    """`httpx.AsyncClient(**options)` with the shared context. httpx (about 10 MB) loads
    with the first client: a process that never speaks HTTP (a melgui host waiting for
    a window) never holds it."""
    import httpx

    return httpx.AsyncClient(verify=shared_context(trust_env), trust_env=trust_env, **options)
