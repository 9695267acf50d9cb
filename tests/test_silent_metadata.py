"""Package metadata that cannot be read is said, never passed over in silence (hostile round 40): a
wheel's ``.dist-info/WHEEL`` padded past its size limit (10 KB compressed) made ``wheel-tag-mismatch``
vanish without a word; so did an oversized or corrupt METADATA or RECORD, a ``conda-meta`` record
that is not JSON, a lone conda package's ``info/index.json`` that is not.  Each is now an
``unreadable-input`` error naming the member or file and why; everything else is still audited."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.packages.metadata import MAX_METADATA, MAX_RECORD

HELPER = (Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()
WHEEL = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-macosx_11_0_arm64\n"
LIMITS = {"WHEEL": MAX_METADATA, "METADATA": MAX_METADATA, "RECORD": MAX_RECORD}


def _wheel(path: Path, big: str | None = None, corrupt: str | None = None) -> Path:
    """demo's wheel (its WHEEL's tag disagrees with its name); ``big``: that .dist-info file padded one
    byte past its limit; ``corrupt``: that file (100 KB, stored) with its last byte changed."""
    texts = {"METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", "WHEEL": WHEEL, "RECORD": ""}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/libhelper.so", HELPER)
        for base, text in texts.items():
            if base == big:
                text += "X" * (LIMITS[base] + 1 - len(text))
            if base == corrupt:
                text += "X" * 100_000
            method = zipfile.ZIP_STORED if base == corrupt else zipfile.ZIP_DEFLATED
            zf.writestr(f"demo-1.0.dist-info/{base}", text, compress_type=method)
    if corrupt is not None:
        data = bytearray(path.read_bytes())
        at = data.index(b"X" * 100_000) + 99_999
        data[at] = ord("Y")  # the CRC-32 no longer matches: found only by reading to the end
        path.write_bytes(bytes(data))
    return path


def _unreadable(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.file: f.message for f in report.findings if f.rule == "unreadable-input"}


def test_a_readable_wheel_is_judged_for_its_tags(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl")
    report = audit([str(whl)])
    assert any(f.rule == "wheel-tag-mismatch" for f in report.findings) and not _unreadable(report)


@pytest.mark.parametrize("base", ["WHEEL", "METADATA", "RECORD"])
def test_a_dist_info_file_past_its_limit_is_named_and_the_rest_audited(tmp_path: Path, base: str) -> None:
    whl = _wheel(tmp_path / "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", big=base)
    report = audit([str(whl)])
    assert _unreadable(report) == {
        f"{whl}!demo-1.0.dist-info/{base}": f"{LIMITS[base] + 1:,} bytes, past the limit of {LIMITS[base]:,} "
        f"bytes a .dist-info/{base} is read to: not read"
    }
    assert (f"{whl}!demo/libhelper.so", "audited") in [(f.path, f.status.value) for f in report.files]


@pytest.mark.parametrize("base", ["WHEEL", "METADATA", "RECORD"])
def test_a_corrupt_dist_info_file_is_named(tmp_path: Path, base: str) -> None:
    whl = _wheel(tmp_path / "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", corrupt=base)
    report = audit([str(whl)])
    (message,) = _unreadable(report).values()
    assert list(_unreadable(report)) == [f"{whl}!demo-1.0.dist-info/{base}"]
    assert message.startswith("cannot be decompressed: Bad CRC-32"), message


def _conda_record(meta: Path, name: str, files: list[str]) -> None:
    record = {"name": name, "version": "1.0", "build": "0", "subdir": "linux-64", "depends": [], "files": files}
    (meta / f"{name}-1.0-0.json").write_text(json.dumps(record))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"name": "bad",\n "files": [}', "not JSON: Expecting value: line 2 column 12 (char 27)"),
        ("[1, 2]", 'not a conda package record: a JSON object with a "name" string'),
        (None, f"{MAX_RECORD + 1:,} bytes, past the limit of {MAX_RECORD:,} bytes a conda-meta record is read to"),
    ],
)
def test_a_conda_meta_record_that_cannot_be_read_is_named(tmp_path: Path, text: str | None, reason: str) -> None:
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "conda-meta").mkdir()
    (prefix / "lib/libhelper.so").write_bytes(HELPER)
    _conda_record(prefix / "conda-meta", "helper", ["lib/libhelper.so"])
    bad = prefix / "conda-meta/bad-1.0-0.json"
    if text is None:
        with open(bad, "wb") as fh:  # sparse: 64 MiB of nothing on disk
            fh.truncate(MAX_RECORD + 1)
    else:
        bad.write_text(text)
    report = audit([str(prefix / "lib")])
    assert _unreadable(report) == {str(bad): reason + (": not read" if text is None else "")}
    assert (str(prefix / "lib/libhelper.so"), "audited") in [(f.path, f.status.value) for f in report.files]


def test_an_installed_dist_info_file_past_its_limit_is_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "demo-1.0.dist-info"
    (site / "demo").mkdir(parents=True)
    info.mkdir()
    (site / "demo/libhelper.so").write_bytes(HELPER)
    (info / "WHEEL").write_text(WHEEL)
    (info / "RECORD").write_text("demo/libhelper.so,,\n")
    with open(info / "METADATA", "wb") as fh:
        fh.truncate(MAX_METADATA + 1)
    report = audit([str(site / "demo")])
    assert _unreadable(report) == {
        str(info / "METADATA"): f"{MAX_METADATA + 1:,} bytes, past the limit of {MAX_METADATA:,} bytes a "
        ".dist-info/METADATA is read to: not read"
    }


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b'{"name": "demo",', "not JSON: Expecting property name enclosed in double quotes: line 1 column 17 (char 16)"),
        (b'{"version": "1.0"}', 'not a conda package record: a JSON object with a "name" string'),
        (b"{}" + b" " * MAX_METADATA, f"{MAX_METADATA + 2:,} bytes, past the limit of {MAX_METADATA:,} bytes a conda "
         "info/index.json is read to: not read"),
    ],
)  # fmt: skip
def test_a_conda_package_index_that_cannot_be_read_is_named(tmp_path: Path, text: bytes, reason: str) -> None:
    path = tmp_path / "demo-1.0-0.tar.bz2"
    with tarfile.open(path, "w:bz2") as tf:
        for name, data in (("lib/libhelper.so", HELPER), ("info/index.json", text)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    report = audit([str(path)])
    assert _unreadable(report) == {f"{path}!info/index.json": reason}
    assert (f"{path}!lib/libhelper.so", "audited") in [(f.path, f.status.value) for f in report.files]


def test_a_prefix_whose_only_record_is_not_json_is_named(tmp_path: Path) -> None:
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "conda-meta").mkdir()
    (prefix / "lib/libhelper.so").write_bytes(HELPER)
    (prefix / "conda-meta/helper-1.0-0.json").write_text("{")
    report = audit([str(prefix / "lib")])
    assert list(_unreadable(report)) == [str(prefix / "conda-meta/helper-1.0-0.json")]
    assert (str(prefix / "lib/libhelper.so"), "audited") in [(f.path, f.status.value) for f in report.files]
