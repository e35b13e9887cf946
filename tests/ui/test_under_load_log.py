"""under_load writes its log into a folder that does not exist yet (it made none and
failed with FileNotFoundError)."""

from __future__ import annotations

from pathlib import Path

from tests.ui import under_load


def test_the_log_goes_into_a_new_folder(tmp_path: Path) -> None:
    log = tmp_path / "some" / "new" / "dir" / "file.log"
    assert under_load.main(["--runs", "0", "--hog", "0", "--log", str(log)]) == 0
    assert "0 runs of `python -m pytest -q tests/ui`" in log.read_text()
