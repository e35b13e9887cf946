"""Downloading a model through huggingface_hub from a loopback hub (`HF_ENDPOINT`)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.config.model_catalog import GB, CatalogModel, models_that_fit
from melgui.core.protocol.transport import DownloadProgress
from melgui.core.transports.discovery import find_model_files
from melgui.core.transports.local.hub import (
    DownloadCancelled,
    DownloadError,
    download,
    model_path,
)
from melgui.core.transports.local.model import default_model_path
from tests.fakes.hub import HubLike, file_sha256

pytest.importorskip("huggingface_hub")

MODEL = CatalogModel(
    "SmolLM2 135M",
    "melgui-test/SmolLM2-GGUF",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "Apache-2.0",
    "https://www.apache.org/licenses/LICENSE-2.0",
    98_000_000,
    300_000_000,
    "the shipped model, served by the loopback hub",
)
MB = 1 << 20


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped GGUF when installed, else a 24 MB file that starts like one."""
    shipped = default_model_path()
    if shipped:
        return Path(shipped)
    path = tmp_path_factory.mktemp("gguf") / MODEL.filename
    with path.open("wb") as handle:
        handle.write(b"GGUF" + bytes(range(256)) * (24 * MB // 256))
    return path


@pytest.fixture
def hub(gguf: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubLike]:
    with HubLike({MODEL.repo: {MODEL.filename: gguf}}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # no person's token
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield server


def test_a_download_lands_checked_in_the_models_folder_and_is_found_there(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    root = tmp_path / "models"
    seen: list[DownloadProgress] = []
    path = download(MODEL, on_progress=seen.append, root=root)
    assert path == model_path(MODEL, root)
    assert file_sha256(path) == file_sha256(gguf)
    size = gguf.stat().st_size
    assert seen[-1] == DownloadProgress("checking", size, size)
    assert max(p.done for p in seen if p.stage == "downloading") == size
    assert not list(path.parent.glob("*.part*"))
    found = find_model_files({"melgui": [root]})
    assert [(f.name, f.path) for f in found] == [
        (f"{MODEL.repo}/{MODEL.filename}", str(path.resolve()))
    ]


def test_a_connection_dropped_mid_file_is_resumed_with_a_range_request(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    hub.drop_after = 5 * MB + 123
    path = download(MODEL, root=tmp_path)
    assert file_sha256(path) == file_sha256(gguf)
    ranges = [r for method, _path, r in hub.file_requests() if method == "GET"]
    assert ranges[0] == ""
    resumed_at = int(ranges[1].removeprefix("bytes=").removesuffix("-"))
    assert 0 < resumed_at <= 5 * MB + 123  # the bytes that arrived are not fetched again


def test_a_cancelled_download_resumes_where_it_stopped(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    hub.chunk_pause = 0.001
    cancel = threading.Event()

    def cancel_past_4_mb(progress: DownloadProgress) -> None:
        if progress.done > 4 * MB:
            cancel.set()

    with pytest.raises(DownloadCancelled):
        download(MODEL, on_progress=cancel_past_4_mb, cancel=cancel, root=tmp_path)
    part = model_path(MODEL, tmp_path).with_name(MODEL.filename + ".part")
    kept = part.stat().st_size
    assert kept > 4 * MB
    assert not model_path(MODEL, tmp_path).exists()
    hub.chunk_pause = 0.0
    hub.requests.clear()
    path = download(MODEL, root=tmp_path)
    assert file_sha256(path) == file_sha256(gguf)
    assert [r for method, _p, r in hub.file_requests() if method == "GET"] == [f"bytes={kept}-"]


def test_a_hub_that_ignores_the_resume_range_sends_the_file_again_and_it_checks_out(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    final = model_path(MODEL, tmp_path)
    final.parent.mkdir(parents=True)
    final.with_name(MODEL.filename + ".part").write_bytes(b"bytes of an earlier try" * 1000)
    final.with_name(MODEL.filename + ".part.sha256").write_text(file_sha256(gguf))
    hub.ignore_range = True
    path = download(MODEL, root=tmp_path)
    assert file_sha256(path) == file_sha256(gguf)
    assert [r for method, _p, r in hub.file_requests() if method == "GET"] == ["bytes=23000-"]


def test_a_body_without_a_length_is_read_through_httpx_and_checks_out(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    hub.chunked = True  # no Content-Length: the connection is not read directly
    seen: list[DownloadProgress] = []
    path = download(MODEL, on_progress=seen.append, root=tmp_path)
    assert file_sha256(path) == file_sha256(gguf)
    assert max(p.done for p in seen if p.stage == "downloading") == gguf.stat().st_size


def test_a_file_whose_checksum_is_not_the_hubs_is_deleted(hub: HubLike, tmp_path: Path) -> None:
    hub.sha256 = "0" * 64
    with pytest.raises(DownloadError, match="damaged"):
        download(MODEL, root=tmp_path)
    assert list(model_path(MODEL, tmp_path).parent.iterdir()) == []


@contextlib.contextmanager
def _tmpfs(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_disk_too_small_is_refused_before_anything_is_downloaded(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    with (
        _tmpfs(tmp_path / "small", "4m") as small,
        pytest.raises(DownloadError, match="Not enough disk space"),
    ):
        download(MODEL, root=small)
    assert [method for method, _p, _r in hub.file_requests()] == ["HEAD"]


def test_a_disk_that_fills_up_mid_file_says_so_and_keeps_the_part(
    hub: HubLike, gguf: Path, tmp_path: Path
) -> None:
    room = gguf.stat().st_size // MB + 8
    with _tmpfs(tmp_path / "disk", f"{room}m") as disk:
        filler = disk / "another program's file"

        def fill_the_disk(progress: DownloadProgress) -> None:
            if progress.done > 2 * MB and not filler.exists():
                with filler.open("wb") as handle, contextlib.suppress(OSError):
                    while True:
                        handle.write(bytes(MB))
                        handle.flush()

        with pytest.raises(DownloadError, match="disk filled up"):
            download(MODEL, on_progress=fill_the_disk, root=disk)
        part = model_path(MODEL, disk).with_name(MODEL.filename + ".part")
        assert part.stat().st_size >= 2 * MB  # what arrived before the disk filled


def test_a_gated_model_says_where_to_accept_its_licence(hub: HubLike, tmp_path: Path) -> None:
    hub.gated = True
    with pytest.raises(DownloadError) as raised:
        download(MODEL, root=tmp_path)
    assert MODEL.page_url in str(raised.value)
    assert "accept" in str(raised.value)


def test_no_network_is_a_clear_offline_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with pytest.raises(DownloadError, match="offline"):
        download(MODEL, root=tmp_path)


def test_the_list_is_filtered_by_this_machines_memory() -> None:
    fits, too_big = models_that_fit(3 * GB)
    assert fits and too_big
    assert all(m.ram_bytes <= 3 * GB for m in fits)
    assert all(m.ram_bytes > 3 * GB for m in too_big)
    assert models_that_fit(0)[1] == []  # unknown memory hides nothing
