"""Where the history database lives: the user data folder, or MELGUI_DATA_DIR."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

DATA_DIR_ENV = "MELGUI_DATA_DIR"
DATABASE_NAME = "history.sqlite3"


def data_dir() -> Path:
    """The folder for melgui's data: $MELGUI_DATA_DIR when set, else the platform's."""
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("melgui", appauthor=False))


def database_path(folder: Path | None = None) -> Path:
    """The history database file inside `folder` (default: data_dir())."""
    return (folder if folder is not None else data_dir()) / DATABASE_NAME


def canonical_folder(folder: str | os.PathLike[str]) -> str:
    """The key a project folder is stored under: absolute, symlinks resolved."""
    return str(Path(folder).expanduser().resolve())
