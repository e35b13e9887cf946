"""A checked box shows a tick (Lucide's `check`, drawn by the stylesheet) on the accent,
not a filled square, in both themes: on a QCheckBox, in a list's checkable row and in a
menu's checked entry (where Fusion drew a tick already: that one guards against a rule that
would fill it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyleOptionButton,
    QStyleOptionViewItem,
)
from pytestqt.qtbot import QtBot

from melgui.ui.runtime.look.tokens import DARK, LIGHT, Colors
from melgui.ui.runtime.theme import apply_theme


@pytest.fixture
def themed(qapp: QApplication) -> Iterator[QApplication]:
    yield qapp
    apply_theme(qapp, "light")  # other tests expect the default


def colours_in(image: QImage, rect: QRect) -> list[QColor]:
    return [
        image.pixelColor(x, y)
        for x in range(rect.left(), rect.right() + 1)
        for y in range(rect.top(), rect.bottom() + 1)
    ]


def near(colour: QColor, hex_colour: str, slack: int = 40) -> bool:
    other = QColor(hex_colour)
    return all(
        abs(a - b) <= slack
        for a, b in (
            (colour.red(), other.red()),
            (colour.green(), other.green()),
            (colour.blue(), other.blue()),
        )
    )


def assert_a_tick_on_the_accent(image: QImage, rect: QRect, colors: Colors, tick: str) -> None:
    pixels = colours_in(image, rect)
    on_accent = sum(near(p, colors.accent, 12) for p in pixels)
    ticked = sum(near(p, tick) for p in pixels)
    assert on_accent > len(pixels) // 4  # the box is filled with the accent
    assert ticked >= 6  # and the tick's stroke is drawn across it


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_a_checked_box_shows_a_tick(themed: QApplication, qtbot: QtBot, colors: Colors) -> None:
    apply_theme(themed, colors.name)
    checked, unchecked = QCheckBox("Checked"), QCheckBox("Not")
    checked.setChecked(True)
    for box in (checked, unchecked):
        qtbot.addWidget(box)
        box.show()
    option = QStyleOptionButton()
    checked.initStyleOption(option)
    element = QStyle.SubElement.SE_CheckBoxIndicator
    indicator = checked.style().subElementRect(element, option, checked)
    image = checked.grab().toImage()
    assert_a_tick_on_the_accent(image, indicator, colors, colors.on_accent)
    blank = colours_in(unchecked.grab().toImage(), indicator.adjusted(2, 2, -2, -2))
    assert not any(near(p, colors.accent, 12) for p in blank)  # no tick, no fill


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_a_checked_row_in_a_list_shows_a_tick(
    themed: QApplication, qtbot: QtBot, colors: Colors
) -> None:
    apply_theme(themed, colors.name)
    rows = QListWidget()
    qtbot.addWidget(rows)
    item = QListWidgetItem("Adopt this rule", rows)
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
    item.setCheckState(Qt.CheckState.Checked)
    rows.show()
    option = QStyleOptionViewItem()
    option.initFrom(rows.viewport())
    option.rect = rows.visualItemRect(item)
    option.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    option.checkState = Qt.CheckState.Checked
    indicator = rows.style().subElementRect(
        QStyle.SubElement.SE_ItemViewItemCheckIndicator, option, rows.viewport()
    )
    image = rows.viewport().grab().toImage()
    assert_a_tick_on_the_accent(image, indicator, colors, colors.on_accent)


@pytest.mark.parametrize("colors", [LIGHT, DARK], ids=["light", "dark"])
def test_a_checked_menu_entry_shows_a_tick_in_the_text_colour(
    themed: QApplication, qtbot: QtBot, colors: Colors
) -> None:
    apply_theme(themed, colors.name)
    menu = QMenu()
    qtbot.addWidget(menu)
    on, off = menu.addAction("assistant"), menu.addAction("worker")
    for action in (on, off):
        action.setCheckable(True)
    on.setChecked(True)
    menu.popup(QPoint(0, 0))
    image = menu.grab().toImage()

    def ink(entry: QRect) -> int:
        left = QRect(entry.left(), entry.top(), entry.height(), entry.height())
        return sum(near(p, colors.text, 60) for p in colours_in(image, left))

    assert ink(menu.actionGeometry(on)) >= 6 and ink(menu.actionGeometry(off)) == 0
    menu.close()
