"""melgui's look: the design tokens, the stylesheet and palette made from them, the
bundled font and icons."""
