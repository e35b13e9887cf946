"""Downloading a model file from the Hugging Face hub into melgui's data folder.

`huggingface_hub` (the `local` extra) finds the file, its size and its SHA-256 (a HEAD
on the file's resolve URL, whose linked ETag is the LFS object's SHA-256), and its HTTP
session streams it (`hub_stream`, which also resumes by itself after a dropped
connection). melgui keeps the partial file as `<name>.part` beside the final one, so a
cancelled or interrupted download goes on from where it stopped the next time;
`hf_hub_download` would throw the partial file away. The file is hashed on a second
thread while it arrives, so the SHA-256 check costs no second read of it. The hub is
`HF_ENDPOINT` when set (tests point it at loopback), and the token is the person's own
(`HF_TOKEN` or `hf auth login`), needed only for gated models.

Blocking: call it from a thread. Progress and cancel go through plain callables.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.model_catalog import CatalogModel, size_text
from melgui.core.config.settings import data_dir
from melgui.core.protocol.transport import DownloadProgress

HUB_INSTALL_HINT = 'pip install "melgui[local]"'
SHA256 = re.compile(r"[0-9a-f]{64}")
# Progress is reported once per this many bytes; a cancel is seen at every read.
REPORT_EVERY = 1 << 20
METADATA_SECONDS = 10.0

ProgressCallback = Callable[[DownloadProgress], None]


class DownloadError(Exception):
    """The download stopped; the message is one line for people."""


class DownloadCancelled(DownloadError):
    """The person cancelled; the partial file is kept for a resume."""


def models_dir() -> Path:
    """Where downloaded models live: `<data dir>/models/<owner>/<repo>/<file>`."""
    return data_dir() / "models"


def model_path(model: CatalogModel, root: Path | None = None) -> Path:
    return (root or models_dir()) / model.repo / model.filename


def hub_available() -> tuple[bool, str]:
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        return False, f"Downloads need huggingface_hub; install it with: {HUB_INSTALL_HINT}"
    return True, ""


@dataclass(frozen=True, slots=True)
class _Remote:
    url: str
    size: int
    sha256: str


def _endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "").rstrip("/") or "https://huggingface.co"


def _remote(model: CatalogModel, endpoint: str) -> _Remote:
    """The file's download URL, size and SHA-256, or a DownloadError that says why not."""
    import httpx2
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    url = hf_hub_url(model.repo, model.filename, endpoint=endpoint)
    host = endpoint.split("://", 1)[-1]
    try:
        meta = get_hf_file_metadata(url, timeout=METADATA_SECONDS, endpoint=endpoint)
    except GatedRepoError as exc:
        raise DownloadError(_gated(model)) from exc
    except RepositoryNotFoundError as exc:
        raise DownloadError(f"{model.repo} is not on the hub (or is private).") from exc
    except EntryNotFoundError as exc:
        raise DownloadError(f"{model.filename} is no longer in {model.repo}.") from exc
    except OfflineModeIsEnabled as exc:
        raise DownloadError("Downloads are off: HF_HUB_OFFLINE is set.") from exc
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else 0
        if status in (401, 403):
            raise DownloadError(_gated(model)) from exc
        raise DownloadError(f"The hub answered {status} for {model.filename}.") from exc
    except (httpx2.TransportError, OSError) as exc:
        raise DownloadError(
            f"Cannot reach the Hugging Face hub ({host}): this computer looks offline. "
            "Connect to the internet and try again."
        ) from exc
    if meta.size is None or not meta.etag or SHA256.fullmatch(meta.etag) is None:
        raise DownloadError(
            f"The hub gave no size or SHA-256 for {model.filename}, so it cannot be checked."
        )
    return _Remote(meta.location, meta.size, meta.etag)


def _gated(model: CatalogModel) -> str:
    return (
        f"{model.repo} asks you to accept its licence first: open {model.page_url}, sign in "
        "and accept it, then sign in here with `hf auth login` (or set HF_TOKEN) and "
        "download again."
    )


def _check_space(folder: Path, needed: int) -> None:
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise DownloadError(
            f"Not enough disk space in {folder}: the download needs {size_text(needed)} "
            f"more and {size_text(free)} is free."
        )


def download(
    model: CatalogModel,
    *,
    on_progress: ProgressCallback = lambda _progress: None,
    cancel: threading.Event | None = None,
    root: Path | None = None,
) -> Path:
    """Download `model` into `root` (default `models_dir()`); return the file's path.

    A file already there is returned as it is. A partial file of the same version is
    resumed; one whose hub version changed is started again. The finished file must
    match the hub's SHA-256, or it is deleted.
    """
    ok, why = hub_available()
    if not ok:
        raise DownloadError(why)
    from huggingface_hub.utils import build_hf_headers

    from melgui.core.transports.local.hub_stream import PartFile, fetch

    cancel = cancel or threading.Event()
    final = model_path(model, root)
    if final.is_file():
        return final
    remote = _remote(model, _endpoint())
    final.parent.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    version = final.with_name(final.name + ".part.sha256")
    if not version.is_file() or version.read_text(encoding="utf-8").strip() != remote.sha256:
        part.unlink(missing_ok=True)
        version.write_text(remote.sha256, encoding="utf-8")
    have = part.stat().st_size if part.is_file() else 0
    if have > remote.size:
        part.unlink()
        have = 0
    _check_space(final.parent, remote.size - have)
    headers = build_hf_headers()
    headers["Accept-Encoding"] = "identity"
    reported = [-REPORT_EVERY]

    def arrived(done: int) -> None:
        if cancel.is_set():
            raise DownloadCancelled("Download cancelled; it resumes where it stopped.")
        if done - reported[0] >= REPORT_EVERY or done >= remote.size:
            reported[0] = done
            on_progress(DownloadProgress("downloading", done, remote.size))

    try:
        writer = PartFile(part)
        try:
            on_progress(DownloadProgress("downloading", writer.size, remote.size))
            fetch(remote.url, writer, remote.size, headers, arrived)
        except BaseException:
            writer.abandon()
            raise
        actual = writer.close()
    except DownloadError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise DownloadError(
                f"The disk filled up while downloading {model.filename}; free some space "
                "and download again: it resumes where it stopped."
            ) from exc
        raise DownloadError(f"The download of {model.filename} failed: {exc}") from exc
    except Exception as exc:  # the hub's HTTP errors and transport errors mid-file
        raise DownloadError(
            f"The download of {model.filename} stopped ({type(exc).__name__}: {exc}); "
            "download again to resume."
        ) from exc
    on_progress(DownloadProgress("checking", remote.size, remote.size))
    if actual != remote.sha256:
        part.unlink(missing_ok=True)
        version.unlink(missing_ok=True)
        raise DownloadError(
            f"{model.filename} arrived damaged (its SHA-256 is not the hub's), so it was "
            "deleted; download it again."
        )
    os.replace(part, final)
    version.unlink(missing_ok=True)
    return final
