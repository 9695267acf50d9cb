"""``library-not-found`` once per missing library per installation: every object that needs it is a
requester of the one finding (with the chain from each root), the first by path names the file, so
that the fingerprint (JSON, SARIF, baseline) is the same from run to run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from output.schema import validate_report

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.output import OutputFormat, renderer
from linkaudit.output.sarif import report_to_sarif

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
MODULE = SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so"  # NEEDs libhelper.so (RUNPATH $ORIGIN/lib)
MEMBERS = ["pkg/mod.cpython-311-x86_64-linux-gnu.so", "pkg/b/mod.cpython-311-x86_64-linux-gnu.so", "pkg/a/_x.so"]


def _site(tmp_path: Path) -> Path:
    """A site of one distribution whose three objects all NEED libhelper.so, which nothing installed ships
    (``pkg/a/_x.so`` is no extension module: loaded alone, as a dlopen, it sorts first by path)."""
    site = tmp_path / "site"
    for member in MEMBERS:
        (site / member).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MODULE, site / member)
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n")
    (info / "RECORD").write_text("".join(f"{m},,\n" for m in [*MEMBERS, "pkg-1.0.dist-info/RECORD"]))
    return site


def test_one_finding_lists_every_requester_and_each_chain(tmp_path: Path) -> None:
    site = _site(tmp_path)
    config = AuditConfig(target=TargetEnvironment(system_dirs=("/nonexistent",)))
    report = audit([str(site / "pkg")], config)
    (missing,) = [f for f in report.findings if f.rule == "library-not-found"]
    assert missing.subject == "libhelper.so" and missing.severity.value == "error"
    requesters = missing.evidence["requesters"]
    # those an import root reaches first, each by path; the first names the file
    assert [Path(r["file"]).relative_to(site).as_posix() for r in requesters] == [MEMBERS[1], MEMBERS[0], MEMBERS[2]]
    assert missing.file == requesters[0]["file"] and missing.evidence["would_fail"].startswith("ImportError")
    assert all(r["chain"][-1] == "libhelper.so" for r in requesters)
    assert [r["reached"] for r in requesters] == [True, True, False]  # pkg/a/_x.so: no import root, a dlopen
    assert {root["root"] for root in missing.evidence["roots"]} == {r["file"] for r in requesters}
    assert "also needed by 2 more: mod.cpython-311-x86_64-linux-gnu.so, _x.so" in (missing.message)
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))
    # the same fingerprint on a second run
    again = audit([str(site / "pkg")], config)
    first = report_to_sarif(report, [str(site / "pkg")])["runs"][0]["results"]
    second = report_to_sarif(again, [str(site / "pkg")])["runs"][0]["results"]
    prints = [r["partialFingerprints"] for r in first if r["ruleId"] == "library-not-found"]
    assert len(prints) == 1 and prints == [
        r["partialFingerprints"] for r in second if r["ruleId"] == "library-not-found"
    ]
