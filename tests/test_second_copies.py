"""A package holding several members of one name (``tar -r``, a zip written twice): installers keep
the last copy, which is staged and audited — the file counted audited, its findings reported — and
the earlier copies are one ``file-clash`` error of the package with itself naming the member, never
an ``unreadable-input`` that lists the audited file as unreadable (before: status "unreadable",
summary "0 audited", exit 2, with the error text saying "audited here")."""

from __future__ import annotations

import io
import json
import tarfile
import warnings
import zipfile
from pathlib import Path

import pytest
import zstandard

from linkaudit import AuditConfig, audit

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
BROKEN = (SAMPLES / "broken/libtorch_cuda.so").read_bytes()  # driver-link errors
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
NAME = "lib/libx.so"


def _tar_bytes(members: list[tuple[str, bytes]], mode: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:  # type: ignore[call-overload]
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _package(tmp_path: Path, kind: str, copies: list[bytes]) -> Path:
    members = [(NAME, data) for data in copies]
    if kind == "wheel":
        path = tmp_path / "dup-1.0-py3-none-linux_x86_64.whl"
        with zipfile.ZipFile(path, "w") as zf, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
            for name, data in members:
                zf.writestr(name, data)
        return path
    if kind == "conda":
        path = tmp_path / "dup-1.0-0.conda"
        index = ("info/index.json", json.dumps({"name": "dup", "version": "1.0", "build": "0"}).encode())
        zstd = zstandard.ZstdCompressor().compress
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
            zf.writestr("metadata.json", b'{"conda_pkg_format_version": 2}')
            zf.writestr("pkg-dup-1.0-0.tar.zst", zstd(_tar_bytes([*members, index], "w")))
            zf.writestr("info-dup-1.0-0.tar.zst", zstd(_tar_bytes([index], "w")))
        return path
    path = tmp_path / f"dup{kind}"
    path.write_bytes(_tar_bytes(members, {".tar": "w", ".tar.gz": "w:gz", ".tar.bz2": "w:bz2"}[kind]))
    return path


KINDS = [".tar", ".tar.gz", ".tar.bz2", "conda", "wheel"]


@pytest.mark.parametrize("loader", [True, False], ids=["loader", "no-loader"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("copies", [2, 3])
def test_the_last_copy_is_audited_and_the_earlier_ones_are_one_clash(
    tmp_path: Path, kind: str, copies: int, loader: bool
) -> None:
    package = _package(tmp_path, kind, [HELPER] * (copies - 1) + [BROKEN])
    config = AuditConfig() if loader else AuditConfig(target=None)
    report = audit([str(package)], config)
    member = f"{package}!{NAME}"
    assert [(f.path, f.status.value) for f in report.files] == [(member, "audited")]
    assert not [f for f in report.findings if f.rule == "unreadable-input"]
    assert any(f.rule == "driver-link" and f.file == member for f in report.findings)  # the last copy's
    clashes = [f for f in report.findings if f.rule == "file-clash"]
    assert [(f.file, f.severity.value) for f in clashes] == [(member, "error")]
    assert f"holds {copies} members named {NAME}" in clashes[0].message
    assert list(clashes[0].evidence["packages"]) == [str(package), str(package)]


def test_the_summary_counts_the_file_audited_and_the_exit_is_an_error_not_unreadable(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    package = _package(tmp_path, ".tar.gz", [HELPER, BROKEN])
    r = run_cli("check", "--no-config", "--no-cache", "--no-loader", "--format", "json", str(package))
    doc = json.loads(r.stdout)
    assert r.exit_code == 1, r.stdout
    assert doc["summary"]["audited"] == 1 and doc["summary"]["unreadable"] == 0
    assert "file-clash" in {f["rule"] for f in doc["findings"]}
