"""A browser stand-in for `$BROWSER`: opens the address it is given and follows every
redirect (to the authorization server, then back to the app's loopback callback), as a
person's browser does after they click "Allow". Each address opened is appended to the
file `$MELGUI_TEST_BROWSER_LOG` when that is set.

    python -m tests.fakes.browser URL
"""

from __future__ import annotations

import os
import sys
import urllib.request


def main() -> int:
    url = sys.argv[1]
    log = os.environ.get("MELGUI_TEST_BROWSER_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(url + "\n")
    with urllib.request.urlopen(url, timeout=30) as page:  # follows redirects
        page.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
