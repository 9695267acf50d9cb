"""Opening a ``check --format html`` report in headless Chromium (``tests/browser.py``): shared by the
browser tests and ``scripts/report_screenshot.py``, which makes the screenshot in ``docs/images/``."""

from __future__ import annotations

from pathlib import Path

from browser import Browser

#: The page's script sets this when every graph is drawn and the table is filled.
READY = "document.body && document.body.dataset.ready === '1'"
#: The size of the committed screenshot, CSS pixels.
SCREENSHOT_SIZE = (1280, 900)


def open_report(b: Browser, report: Path) -> None:
    """Load ``report`` and wait until its script has drawn it (``RuntimeError`` after 60 s)."""
    b.open(report.resolve().as_uri(), READY)
    b.pump(0.3)


def report_screenshot(b: Browser, report: Path) -> bytes:
    """The PNG of the first screenful of ``report``, as the README shows it."""
    open_report(b, report)
    return b.screenshot(full_page=False)
