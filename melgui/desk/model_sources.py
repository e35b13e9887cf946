"""Where the Settings dialog finds models, done here so the window only asks: a
connection's model list ("Test connection"), the servers and model files already on
this computer, and downloads from the Hugging Face hub (on a thread)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.model_catalog import CatalogModel
from melgui.core.config.settings import Settings
from melgui.core.protocol.transport import DownloadProgress, FoundModelFile, FoundServer
from melgui.core.transports.connection import make_transport
from melgui.core.transports.discovery import (
    KNOWN_SERVERS,
    find_model_files,
    find_servers,
    list_models_text,
)
from melgui.core.transports.local.hub import (
    DownloadError,
    download,
    hub_available,
    model_path,
    models_dir,
)


async def list_connection_models(settings: Settings, api_key: str | None) -> tuple[list[str], str]:
    """The models `settings`' connection offers, asked once on a transport of its own
    (closed after): model ids, or ([], the error line)."""
    transport = make_transport(settings, api_key)
    try:
        return await list_models_text(transport)
    finally:
        await transport.aclose()


async def models_on_this_computer(
    servers: Iterable[tuple[str, int]] = KNOWN_SERVERS,
    folders: Mapping[str, list[Path]] | None = None,
) -> tuple[list[FoundServer], list[FoundModelFile]]:
    """The servers answering on their usual ports (`servers`: name, port) and the GGUF
    files in the usual folders (`folders`: by source), looked for at once (the files on
    a thread)."""
    found, files = await asyncio.gather(
        find_servers(servers), asyncio.to_thread(find_model_files, folders)
    )
    return found, files


@dataclass(frozen=True, slots=True)
class DownloadEnd:
    """How a download ended: the file (`path`), or None and the sentence saying why."""

    path: Path | None
    message: str = ""


class ModelDownloads:
    """The hub's models in one folder (`root`, melgui's models folder by default)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root

    @property
    def folder(self) -> Path:
        return self.root or models_dir()

    def downloaded(self, model: CatalogModel) -> Path | None:
        """The model's file when it is there, complete."""
        path = model_path(model, self.root)
        return path if path.is_file() else None

    def available(self) -> tuple[bool, str]:
        """Whether downloads can work here (huggingface_hub is installed), and if not why."""
        return hub_available()

    async def download(
        self,
        model: CatalogModel,
        *,
        on_progress: Callable[[DownloadProgress], None],
        cancel: threading.Event,
    ) -> DownloadEnd:
        """Download `model` on a thread; `on_progress` is called from that thread."""
        try:
            path = await asyncio.to_thread(
                download, model, on_progress=on_progress, cancel=cancel, root=self.root
            )
        except DownloadError as exc:  # DownloadCancelled too: the message says which
            return DownloadEnd(None, str(exc))
        return DownloadEnd(path)
