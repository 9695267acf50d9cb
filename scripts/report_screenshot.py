"""Make ``docs/images/report-broken.png``: the HTML report of the seed sample, in headless Chromium.

    python scripts/report_screenshot.py          # from the repository root, with linkaudit installed

Runs ``linkaudit check sample_bins/broken --format html -o TMP/report.html`` and takes the first
screenful with the browser tests' own code (``tests/report_page.py``).  Needs Debian's ``chromium``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser import browser  # noqa: E402
from report_page import SCREENSHOT_SIZE, report_screenshot  # noqa: E402


def main() -> int:
    """Write the PNG; exit status 2 when chromium is missing."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("needs chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.html"
        subprocess.run(
            [sys.executable, "-m", "linkaudit", "check", "sample_bins/broken", "--format", "html", "-o", str(report)],
            cwd=ROOT, check=False,
        )  # fmt: skip
        with browser(chromium, *SCREENSHOT_SIZE) as b:
            png = report_screenshot(b, report)
    out = ROOT / "docs" / "images" / "report-broken.png"
    out.write_bytes(png)
    print(f"wrote {out.relative_to(ROOT)} ({len(png)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
