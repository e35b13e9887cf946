"""What a review found, as the changes view shows it: a finding on a file's line, and a
finding placed on a hunk of the diff (melgui.desk.review asks the model and reads them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "note"]
# The project's own review prompt, relative to the folder reviewed: read where that folder
# is (here by melgui.desk.review, on a remote machine by its host).
CUSTOM_PROMPT = ".melgui/review.md"


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    line: int
    severity: Severity
    text: str


@dataclass(frozen=True, slots=True)
class Comment:
    """A finding placed on a hunk: the file's index in the diff, the hunk's index."""

    finding: Finding
    file: int
    hunk: int
    header: str  # the hunk's "@@ … @@" line
