"""``check --format html``: one self-contained file, checked as text and in headless Chromium.

In the browser (``tests/browser.py``, the DevTools protocol on a pipe): no console error, no
request whose scheme is not ``file:``/``data:``/``blob:`` (every request intercepted), the nodes
and edges of each load drawn, the table filtered to ``driver-link``, a node's details on a real
mouse click, a screenshot that is not blank.  Also the vendored layout library as recorded.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from pathlib import Path

import pytest
from tools import needs, require

from linkaudit.output import OutputFormat, renderer
from linkaudit.output.html import ASSETS, asset
from linkaudit.report import Finding, Report, Severity

ROOT = Path(__file__).resolve().parents[2]
DAGRE_SHA256 = "7f751ea7f1695a56c55845e4415b8ce7d65620b10a15bf1ea806f70af10f97f2"


def _report(run_cli, tmp_path: Path, *paths: str) -> tuple[Path, dict]:  # type: ignore[no-untyped-def,type-arg]
    out = tmp_path / "report.html"
    result = run_cli("check", *(str(ROOT / p) for p in paths), "--format", "html", "-o", str(out))
    assert result.exit_code in (0, 1), result.output
    page = out.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="linkaudit-data">(.*?)</script>', page, re.S)
    assert data is not None
    return out, json.loads(data.group(1))


def test_vendored_dagre_is_the_recorded_release() -> None:
    text = asset("dagre.min.js")
    assert hashlib.sha256(text.encode()).hexdigest() == DAGRE_SHA256
    assert 're="3.1.3"' in text and "3.1.3" in asset("README.md")
    assert "sourceMappingURL" not in text  # nothing for a browser to fetch
    assert set(ASSETS) <= {p.name for p in (ROOT / "linkaudit/output/assets").iterdir()}


def test_page_is_self_contained_and_escapes_names(tmp_path: Path) -> None:
    evil = "lib</script><img src=http://x>.so"
    report = Report((), (Finding("driver-link", Severity.ERROR, evil, evil, "m </script> <b>"),))
    page = renderer(OutputFormat.HTML)(report)
    assert page.count("</script>") == page.count("<script")  # no name closes a script
    assert "<img src=http" not in page and "http://x" in page
    # nothing outside the page: no src=/href= to another document, a CSP that forbids fetching
    assert not re.search(r'(src|href)="(?!#)', page)
    assert "default-src 'none'" in page


def test_broken_sample_data_links_findings_to_the_node(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _out, data = _report(run_cli, tmp_path, "sample_bins/broken")
    (graph,) = data["graphs"]
    kinds = {n["label"]: n["kind"] for n in graph["nodes"]}
    assert kinds == {"libtorch_cuda.so": "root", "libc.so.6": "outside", "ld-linux-x86-64.so.2": "outside",
                     "libcuda.so.1": "driver"}  # fmt: skip
    assert [(e["name"], e["failing"]) for e in graph["edges"] if e["failing"]] == [("libcuda.so.1", True)]
    assert {(f["rule"], f["node"]) for f in data["findings"]} == {("driver-link", "n0"), ("missing-provider", "n0")}


@needs("chromium")
def test_report_in_a_real_browser(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from browser import ALLOWED_SCHEMES, browser, png_colours
    from report_page import open_report

    out, data = _report(run_cli, tmp_path, "sample_bins/broken", "sample_bins/pe/driver", "sample_bins/macho/broken")
    with browser(require("chromium")) as b:
        open_report(b, out)
        assert b.errors == [] and b.blocked == []
        assert b.requests and all(u.startswith(ALLOWED_SCHEMES) for u in b.requests), b.requests
        for i, g in enumerate(data["graphs"]):  # no load here names more plugins than are shown
            drawn = b.evaluate(f"[...document.querySelectorAll('#g{i} g.node')].length")
            edges = b.evaluate(f"[...document.querySelectorAll('#g{i} path.edge')].length")
            failing = b.evaluate(f"[...document.querySelectorAll('#g{i} path.edge.failing')].length")
            # plus one node and one failing edge per missing-provider finding: the provider not linked
            x = sum(1 for f in data["findings"] if f["graph"] == i and "provider" in f)
            want = (len(g["nodes"]) + x, len(g["edges"]) + x, sum(e["failing"] for e in g["edges"]) + x)
            assert (drawn, edges, failing) == want
        assert b.evaluate("document.querySelector('#g0 g.k-expected text').textContent") == "libnvrtc.so*"
        rows = "[...document.querySelectorAll('#findings-table tbody tr')].filter(r => !r.hidden).length"
        total = b.evaluate(rows)
        b.evaluate("(s => { s.value = 'driver-link'; s.dispatchEvent(new Event('change')); })"
                   "(document.getElementById('f-rule'))")  # fmt: skip
        drivers = [f for f in data["findings"] if f["rule"] == "driver-link"]
        # one per file: the ELF, the Mach-O and the plain PE import (errors), the delay-load (a note)
        assert total == len(data["findings"]) == 6 and b.evaluate(rows) == len(drivers) == 4
        texts = b.evaluate("[...document.querySelectorAll('#findings-table tbody tr')].filter(r => !r.hidden)"
                           ".map(r => r.cells[1].textContent)")  # fmt: skip
        assert set(texts) == {"driver-link"}
        # a real click on the driver node of the first load: its details, with every place tried
        b.click("#g0 g.node.k-driver")
        details = b.evaluate("document.querySelector('#g0 .details').innerText")
        assert "libcuda.so.1" in details and "Every place tried" in details and "driver-absent" in details
        assert b.evaluate("document.querySelectorAll('#g0 g.node.selected').length") == 1
        b.click("#g0 g.node.k-expected")
        details = b.evaluate("document.querySelector('#g0 .details').innerText")
        assert "nvrtcCreateProgram" in details and "missing-provider" in details
        # collapsing by package keeps the root and draws one node per package (none here: same count)
        b.click("#g0 input.collapse")
        assert b.evaluate("document.querySelectorAll('#g0 g.node').length") == len(data["graphs"][0]["nodes"]) + 1
        png = b.screenshot()
        assert b.errors == [] and b.blocked == []
    assert png_colours(png) >= 16, "the screenshot is blank"


@needs("chromium")
def test_screenshot_check_can_fail(tmp_path: Path) -> None:
    """``png_colours`` does call a blank page blank."""
    from browser import browser, png_colours

    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><body style='background:#fff'></body>")
    with browser(require("chromium")) as b:
        b.open(blank.as_uri())
        assert png_colours(b.screenshot(full_page=False)) == 1


@pytest.mark.realwheel
@needs("chromium")
def test_torch_site_report(run_cli, torch_site: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from browser import browser
    from report_page import open_report

    site = torch_site
    out = tmp_path / "torch.html"
    result = run_cli("check", str(site), "--format", "html", "-o", str(out))
    assert result.exit_code in (0, 1), result.output
    assert out.stat().st_size < 400_000  # 214 KB on the torch 2.14.1 site
    with browser(require("chromium")) as b:
        open_report(b, out)
        assert b.errors == [] and b.blocked == []
        heads = b.evaluate("[...document.querySelectorAll('article.load h3')].map(h => h.textContent)")
        c = next(i for i, h in enumerate(heads) if "/_C." in h)
        assert "— 33 objects, 53 plugins named" in heads[c]
        shown = b.evaluate(f"document.querySelectorAll('#g{c} g.k-root, #g{c} g.k-library, #g{c} g.k-outside').length")
        assert shown == 33
        b.click(f"#g{c} input.collapse")
        packages = b.evaluate(f"document.querySelectorAll('#g{c} g.k-package').length")
        assert 5 <= packages < 33 and b.errors == []


def test_wheel_members_are_named_as_every_report_names_them(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = "sample_bins/wheels/dist/pkg-1.0-cp311-abi3-manylinux_2_17_x86_64.whl"
    _out, data = _report(run_cli, tmp_path, wheel)
    (graph,) = data["graphs"]
    assert graph["root"].endswith(".whl!pkg/mod.abi3.so")
    owned = {n["label"]: n["package"] for n in graph["nodes"]}
    # the wheel's own objects are the distribution's; libc is the system's, nobody's
    assert owned["mod.abi3.so"] == owned["libhelper.so"] == "pkg" and owned["libc.so.6"] is None
    # no staging directory leaks: a member is named WHEEL!member, whatever folder the checkout is in
    staging = re.compile(re.escape(tempfile.gettempdir()) + r"/linkaudit-")
    assert not any(staging.match(n["path"] or "") for n in graph["nodes"])
    assert all(n["path"].startswith(str(ROOT / wheel) + "!") for n in graph["nodes"] if n["package"] == "pkg")
