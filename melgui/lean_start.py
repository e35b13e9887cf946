"""What a one-turn process (`melgui exec`) leaves out of its start and its end (the
melgui host leaves out the same unused modules: melgui/host/main.py).

- Modules its libraries import but it never uses: httpx's command line (rich, click,
  pygments), httpcore's trio support, and, off macOS, keyring's macOS backend, which
  asks ctypes for macOS libraries and so runs `ldconfig` and `gcc` on Linux. Each is
  marked absent, which the importing library already handles as "not installed".
- A system call per streamed token: under PYTHONUNBUFFERED (common in containers) each
  write to stdout was one, a tenth of a 20,000-token turn's CPU. The answer's printer
  flushes what arrived together once the loop has handled it, so it shows as promptly.
- The garbage collector's passes over what lives until the process ends: the start's
  objects (modules, classes, compiled patterns) are made permanent once imported, and
  again at the end, so the interpreter's shutdown does not walk them all several times.
- The interpreter's teardown (every module and object freed one by one, 17 ms of CPU):
  once the run is over the process ends as the teardown would have ended it (threads
  joined, exit functions run, stdout and stderr flushed), then without freeing.
- Compiling the dataclasses' methods: `dataclasses` writes each class's `__init__`,
  `__repr__`, `__eq__`, … as text and compiles it at every start, some 1,350 compiles
  and a third of exec's imports (78 of 240 ms of CPU). Their code objects are kept in
  the user's cache, keyed by that text, so a start compiles only what is new; the code
  is what compiling the text gives, so the classes are the same.

The melgui host also imports asyncio without `ssl` (asyncio_without_ssl): asyncio
imports it only to offer TLS, and with it OpenSSL's libraries, about 4.5 MB resident
in a host that waits for a window and speaks no TLS until a session reaches a server.
And it runs `secrets` on first use (secrets_on_first_use): pydantic (2.14 and later)
imports it with its types, which every model's class loads, and `secrets` imports
`hmac`, `hmac` OpenSSL's `_hashlib`: about 3.5 MB resident for a comparison pydantic
makes only when two secret values are compared.
"""

from __future__ import annotations

import atexit
import dataclasses
import gc
import io
import marshal
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

UNUSED = ("httpx._main", "trio")
UNUSED_OFF_MACOS = ("keyring.backends.macOS.api",)


def skip_unused_imports() -> None:
    for name in (*UNUSED, *(UNUSED_OFF_MACOS if sys.platform != "darwin" else ())):
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]


def asyncio_without_ssl() -> None:
    """Import asyncio as if `ssl` were absent (it then leaves TLS out); the first import
    of `ssl` afterwards, by anything (httpx, with a session's first client), gives it to
    the asyncio modules that went without, as importing it themselves would have."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    before = set(sys.modules)
    sys.modules["ssl"] = None  # type: ignore[assignment]
    try:
        import asyncio  # noqa: F401
    finally:
        del sys.modules["ssl"]
    went_without = [name for name in sys.modules if name not in before]
    sys.meta_path.insert(0, _SslForAsyncio(went_without))


class _SslForAsyncio(MetaPathFinder):
    """Finds `ssl` as the other finders do, its loader then handing it to the modules
    that were imported without it."""

    def __init__(self, modules: list[str]) -> None:
        self.modules = modules

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname != "ssl":
            return None
        sys.meta_path.remove(self)  # once: the finders below find the real module
        for finder in sys.meta_path:
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _ThenGiveSsl(spec.loader, self.modules)
                return spec
        return None


class _Wrapping(Loader):
    """A module's own loader, wrapped: the module is created by it and, once this
    wrapper's `exec_module` has it, names it as its loader again."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def hand_back(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader


class _ThenGiveSsl(_Wrapping):
    def __init__(self, loader: Loader, modules: list[str]) -> None:
        super().__init__(loader)
        self.modules = modules

    def exec_module(self, module: ModuleType) -> None:
        self.hand_back(module)
        self.loader.exec_module(module)
        for name in self.modules:
            importer = sys.modules.get(name)
            if importer is not None and "ssl" in vars(importer) and vars(importer)["ssl"] is None:
                vars(importer)["ssl"] = module
        sslproto = sys.modules.get("asyncio.sslproto")
        if sslproto is not None and not hasattr(sslproto, "SSLAgainErrors"):
            # What the module defines for itself when it has ssl.
            vars(sslproto)["SSLAgainErrors"] = (module.SSLWantReadError, module.SSLSyscallError)


def secrets_on_first_use() -> None:
    """Let the first import of `secrets` give a module that runs its code when first
    asked for anything it defines (under a lock: one thread runs it, others wait),
    as the standard library's LazyLoader does. Nothing once `secrets` is imported."""
    if "secrets" not in sys.modules:
        sys.meta_path.insert(0, _OnFirstUse("secrets"))


class _OnFirstUse(MetaPathFinder):
    """Finds `name` as the other finders do, once; its module runs on first use."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RunOnFirstUse(spec.loader)
                return spec
        return None


class _RunOnFirstUse(_Wrapping):
    def exec_module(self, module: ModuleType) -> None:
        self.hand_back(module)
        vars(module)["_melgui_run"] = (self.loader, threading.RLock())
        module.__class__ = _NotRunYet


class _NotRunYet(ModuleType):
    """A module whose code has not run: asking it for a name it does not have (all but
    what the import system set) runs it first."""

    def __getattr__(self, name: str) -> Any:
        run = vars(self).get("_melgui_run")
        if run is None:  # run meanwhile, by another thread
            return object.__getattribute__(self, name)
        loader, lock = run
        with lock:
            if "_melgui_run" in vars(self):
                loader.exec_module(self)
                del vars(self)["_melgui_run"]
                self.__class__ = ModuleType  # type: ignore[assignment]
        return object.__getattribute__(self, name)


def give_back_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's malloc_trim). What imports
    and a burst of requests freed stays resident otherwise: glibc gives back only what
    is free at the heap's top. Nothing where the C library has no malloc_trim."""
    global _malloc_trim
    if _malloc_trim is None:
        import ctypes  # with the first call: a process that never waits does without

        _malloc_trim = getattr(ctypes.CDLL(None), "malloc_trim", None) or False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None  # None: not looked up yet; False: this C library has none


@contextmanager
def imported_once() -> Iterator[None]:
    """Import inside: no collection runs while modules load (they make no garbage), and
    what they made is left out of every later collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def before_exit() -> None:
    """The run is over and closed: what is left is freed by the exit, not collected; the
    code compiled for new dataclasses is kept for the next start."""
    gc.freeze()
    compiled = getattr(dataclasses, "exec", None)
    if isinstance(compiled, CompiledOnce):
        del dataclasses.exec  # type: ignore[attr-defined]
        compiled.save()


class CompiledOnce:
    """`exec` for `dataclasses`: a text's code compiled once, kept in `path` (see above)."""

    HEADER = b"melgui dataclass code 1\n" + MAGIC_NUMBER
    MAX_KEPT = 5000  # texts kept; past it, only those of the last start

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known = self._load()
        self.used: set[str] = set()
        self.new = 0

    def _load(self) -> dict[str, CodeType]:
        try:
            data = self.path.read_bytes()
        except OSError:
            return {}
        if not data.startswith(self.HEADER):
            return {}
        try:
            known = marshal.loads(data[len(self.HEADER) :])
        except (EOFError, ValueError, TypeError):
            return {}
        if not isinstance(known, dict) or not all(
            type(key) is str and type(code) is CodeType for key, code in known.items()
        ):
            return {}
        return known

    def __call__(self, source: Any, *args: Any, **kwargs: Any) -> None:
        if type(source) is str:
            self.used.add(source)
            code = self.known.get(source)
            if code is None:
                code = self.known[source] = compile(source, "<string>", "exec")
                self.new += 1
            source = code
        exec(source, *args, **kwargs)

    def save(self) -> None:
        """Write the code kept, when this start compiled any (a failure: compiled again)."""
        if not self.new:
            return
        known = self.known
        if len(known) > self.MAX_KEPT:
            known = {text: code for text, code in known.items() if text in self.used}
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(self.HEADER + marshal.dumps(known))
            os.replace(temporary, self.path)
        except (OSError, ValueError):
            temporary.unlink(missing_ok=True)


def compile_dataclasses_once() -> None:
    """Let `dataclasses` compile a method's text only when no earlier start did."""
    import platformdirs  # the store imports it too

    name = f"dataclass-code.{sys.implementation.cache_tag}"
    path = Path(platformdirs.user_cache_dir("melgui", appauthor=False)) / name
    dataclasses.exec = CompiledOnce(path)  # type: ignore[attr-defined]


def buffer_stdout() -> None:
    """stdout written through a buffer even under PYTHONUNBUFFERED (see above)."""
    if isinstance(sys.stdout, io.TextIOWrapper) and sys.stdout.write_through:
        sys.stdout.reconfigure(write_through=False)


def end_process(code: int) -> int:
    """End the process with `code` after what the interpreter's exit does before its
    teardown, in its order. Returns `code` instead when any of it fails: the ordinary
    exit then does the rest and says what went wrong, as it would have."""
    try:
        getattr(threading, "_shutdown")()  # noqa: B009  # the interpreter's own first step
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:
        return code
    os._exit(code)
