"""Hostile package metadata built by hand (the breaker's round of issue 13): WHEEL tag sets that
multiply, markers nested thousands deep, megabyte lines, binary garbage in METADATA / WHEEL /
RECORD, RECORD rows leaving the site.  Each wheel is audited — its library still read, a named
result, never a hang or a traceback — and what it costs is counted, not timed."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.packages.metadata import MAX_WHEEL_TAGS, wheel_tags

HELPER = (Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()
TAG = b"Wheel-Version: 1.0\nTag: cp311-cp311-manylinux_2_17_x86_64\n"


def _wheel(path: Path, meta: bytes = b"", wheel: bytes = TAG, record: bytes = b"demo/libhelper.so,,\n") -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/libhelper.so", HELPER)
        zf.writestr("demo-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n" + meta)
        zf.writestr("demo-1.0.dist-info/WHEEL", wheel)
        zf.writestr("demo-1.0.dist-info/RECORD", record)
    return path


def _dotted(prefix: str, n: int) -> str:
    return ".".join(f"{prefix}{i}" for i in range(n))


def test_a_compressed_tag_set_is_sized_before_it_is_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 x 300 x 300 names in one Tag line spell 27 million tags (17 KB of WHEEL: a hang past
    120 s, then MemoryError): passed over unexpanded; lines within the budget still read."""
    from packaging import tags

    made = [0]
    real = tags.parse_tag

    def counting(text: str) -> frozenset[tags.Tag]:
        out = real(text)
        made[0] += len(out)
        return out

    monkeypatch.setattr(tags, "parse_tag", counting)
    huge = f"Tag: {_dotted('cp3', 300)}-{_dotted('abi', 300)}-{_dotted('manylinux_2_', 300)}\n"
    text = "Wheel-Version: 1.0\n" + huge + "Tag: cp311-cp311-manylinux_2_28_x86_64\n"
    assert {str(t) for t in wheel_tags(text)} == {"cp311-cp311-manylinux_2_28_x86_64"}
    many = "".join(f"Tag: cp311-cp311-manylinux_2_{i}_x86_64\n" for i in range(100_000))
    assert len(wheel_tags(many)) == MAX_WHEEL_TAGS
    assert made[0] <= 1 + MAX_WHEEL_TAGS


HOSTILE = {
    "tag-product": {
        "wheel": f"Wheel-Version: 1.0\nTag: {_dotted('cp3', 300)}-{_dotted('a', 300)}-{_dotted('m', 300)}\n".encode()
    },
    "deep-marker": {"meta": b"Requires-Dist: a ; " + b"(" * 5000 + b'os_name == "posix"' + b")" * 5000 + b"\n"},
    "megabyte-line": {"meta": b"Requires-Dist: " + b"a" * 4_000_000 + b"\n"},  # within MAX_METADATA: parsed
    "many-extras-requested": {
        "meta": b"".join(
            b"Requires-Dist: d%d[%s]\n" % (i, b",".join(b"x%d" % j for j in range(50))) for i in range(5000)
        )
    },
    "binary-garbage": {
        "meta": b"\xff\xfe\x00garbage\x00" * 1000,
        "wheel": b"\xff\x00" * 100,
        "record": b"\x00\xff," * 1000,
    },
    "record-rows": {"record": b'"' * 100_000 + b"\n" + b"a,b,c,d,e,f\n" * 10 + b"../../etc/passwd,,\n/abs,,\n"},
}


@pytest.mark.parametrize("shape", HOSTILE)
def test_hostile_metadata_still_audits_the_wheel(tmp_path: Path, shape: str) -> None:
    whl = _wheel(tmp_path / "demo-1.0-py3-none-any.whl", **HOSTILE[shape])  # type: ignore[arg-type]
    report = audit([str(whl)])
    assert (f"{whl}!demo/libhelper.so", "audited") in [(f.path, f.status.value) for f in report.files]
    # a Tag line past the budget is said, never dropped in silence (tests/test_wheel_tag_lines_named.py)
    named = [f"{whl}!demo-1.0.dist-info/WHEEL"] if shape == "tag-product" else []
    assert [f.file for f in report.findings if f.rule == "unreadable-input"] == named


@pytest.mark.parametrize("kind", ["wheel", "conda"])
def test_a_zip_member_with_an_empty_name_is_refused_by_name(tmp_path: Path, kind: str) -> None:
    """Found by ``fuzz_conda`` on its first run (``fuzz/crashers/conda/``): zipfile's
    ``ZipInfo.is_dir()`` raises IndexError on an empty name — exit 3, the other inputs lost.
    Now refused, the package's other members staged, in every zip kind."""
    import zstandard

    path = tmp_path / ("demo-1.0-py3-none-any.whl" if kind == "wheel" else "demo-1.0-0.conda")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo(""), b"x")
        if kind == "wheel":
            zf.writestr("demo/libhelper.so", HELPER)
        else:
            import io
            import tarfile

            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tf:
                info = tarfile.TarInfo("lib/libhelper.so")
                info.size = len(HELPER)
                tf.addfile(info, io.BytesIO(HELPER))
            zf.writestr("pkg-demo-1.0-0.tar.zst", zstandard.ZstdCompressor().compress(buf.getvalue()))
    report = audit([str(path)])
    status = {f.path: (f.status.value, f.error) for f in report.files}
    member = "demo/libhelper.so" if kind == "wheel" else "lib/libhelper.so"
    assert status[f"{path}!{member}"][0] == "audited"
    assert status[f"{path}!(empty name)"] == ("unreadable", "a member with an empty name: never written")


def test_wheel_tag_lines_spelling_one_tag_again_count_against_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """6,500 Tag lines each expanding to 4,080 spellings of one tag: every expansion counts against
    MAX_WHEEL_TAGS, the tag spelled again too, so the first line is expanded and no other (before:
    the distinct count stayed 1, every line was expanded, 48 s; stop 27's hostile round 3)."""
    import packaging.tags

    from linkaudit.packages.metadata import wheel_tags

    calls = []
    real = packaging.tags.parse_tag

    def counted(tag: str):  # type: ignore[no-untyped-def]
        calls.append(tag)
        return real(tag)

    monkeypatch.setattr(packaging.tags, "parse_tag", counted)
    line = "Tag: " + "-".join(
        [".".join(["cp312"] * 15), ".".join(["cp312"] * 16), ".".join(["manylinux_2_17_x86_64"] * 17)]
    )
    tags = wheel_tags("\n".join([line] * 200))
    assert len(calls) == 1 and [str(t) for t in tags] == ["cp312-cp312-manylinux_2_17_x86_64"]
