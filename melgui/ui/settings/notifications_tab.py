"""Settings → Signals: each way melgui gets your attention, on or off."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from melgui.core.config.settings import Settings

TOGGLES: tuple[tuple[str, str], ...] = (
    ("signal_desktop", "Desktop notification (click it to show the pane or approval)"),
    ("signal_taskbar", "Taskbar urgency hint"),
    ("signal_badges", "Badge on the pane's header and tab until you look"),
    ("signal_approval_count", "Count of waiting approvals under the chat"),
    ("signal_turn_end", "Also when an agent finishes or fails a turn"),
    ("signal_bell", "Also when a terminal pane rings its bell"),
)


class SignalsTab(QWidget):
    """One checkbox per signal; `values()` gives the settings fields they set."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        note = QLabel(
            "When an agent waits for your approval (or ends a turn, or a terminal rings) "
            "while its pane or the window is not in front:",
            self,
        )
        note.setWordWrap(True)
        layout.addWidget(note)
        self.boxes: dict[str, QCheckBox] = {}
        for field, text in TOGGLES:
            box = QCheckBox(text, self)
            box.setObjectName(field)
            box.setChecked(bool(getattr(settings, field)))
            layout.addWidget(box)
            self.boxes[field] = box
        layout.addStretch(1)

    def values(self) -> dict[str, bool]:
        return {field: box.isChecked() for field, box in self.boxes.items()}
