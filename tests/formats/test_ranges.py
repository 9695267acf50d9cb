"""The sparse byte source and the read plan: every ELF file of sample_bins read from the ranges
kept while it streams past gives the record read from the whole file, and a read outside the
kept ranges is an InputError naming the member, never zeros."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from linkaudit.cache.codec import encode_binary
from linkaudit.errors import InputError
from linkaudit.formats import read_bytes, read_path, sniff
from linkaudit.formats.plan import head_plan, merge, missing_after
from linkaudit.formats.ranges import MissingRange, RangeBytes
from linkaudit.packages import limits
from linkaudit.packages.staging import Budget, Inflated
from linkaudit.packages.stream import stream_member

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def _elf_samples() -> list[Path]:
    out = []
    for path in sorted(SAMPLES.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.read_bytes()[:4] == b"\x7fELF":
            out.append(path)
    return out


def _same(a: list, b: list) -> bool:  # type: ignore[type-arg]
    return [encode_binary(x) for x in a] == [encode_binary(x) for x in b]


def _stream(data: bytes, label: str = "pkg.whl!lib/x.so") -> RangeBytes | None:
    counter = Inflated(Budget(), None, cap=len(data))
    return stream_member(lambda: io.BytesIO(data), label, len(data), counter)


def test_range_bytes_reads_kept_bytes_and_names_the_member_outside_them() -> None:
    src = RangeBytes("w.whl!lib/a.so", 100, [(10, b"0123456789"), (20, b"abcdef"), (60, b"xyz\0tail")])
    assert src[10:26] == b"0123456789abcdef"  # two adjoining ranges
    assert src[12] == ord("2") and len(src) == 100
    assert src.find(b"\0", 60) == 63 and src.find(b"yz", 60, 68) == 61
    assert src.view(20, 6)[1:3] == b"bc"
    assert src.covers(10, 16) and not src.covers(10, 17) and not src.covers(0, 1)
    for bad in (lambda: src[0:11], lambda: src[26], lambda: src.find(b"\0", 20), lambda: src.view(50, 20)[0:5]):
        with pytest.raises(MissingRange) as caught:
            bad()
        assert caught.value.path == "w.whl!lib/a.so" and isinstance(caught.value, InputError)
    assert src[200:300] == b""  # past the end: empty, as bytes slicing gives


def test_merge_joins_overlapping_and_touching_ranges_and_clips() -> None:
    assert merge([(10, 5), (0, 3), (3, 2), (12, 10), (90, 50)], 100) == [(0, 5), (10, 12), (90, 10)]


@pytest.mark.parametrize("path", _elf_samples(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_read_from_its_kept_ranges_is_the_whole_file_record(path: Path) -> None:
    data = path.read_bytes()
    src = _stream(data)
    if src is None:  # no plan: a relocatable object, a file whose headers make none
        assert head_plan(data[:65536], len(data)) is None
        return
    assert missing_after(src) == []  # the second pass kept what the first did not foresee
    assert _outcome(lambda: read_bytes(str(path), src)) == _outcome(lambda: read_path(str(path)))
    assert src.kept <= len(data)


def _outcome(read):  # type: ignore[no-untyped-def]
    """The records read (as JSON), or the reason and offset of the InputError raised."""
    try:
        return [encode_binary(b) for b in read()]
    except InputError as exc:
        return (exc.reason, exc.offset)


def test_a_dynstr_at_the_end_is_kept_by_the_second_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every PT_LOAD too large to keep whole, .dynsym and .dynstr are only found through the
    section headers: the second pass keeps them, and the record is the same."""
    path = SAMPLES / "fixed/libtorch_cuda.so"
    data = path.read_bytes()
    monkeypatch.setattr("linkaudit.formats.plan.KEEP_SEGMENT", 0)
    monkeypatch.setattr("linkaudit.formats.plan.HEAD", 1024)
    monkeypatch.setattr("linkaudit.formats.plan.NAMES_GUESS", 0)
    monkeypatch.setattr("linkaudit.packages.stream.HEAD", 1024)
    first = RangeBytes("x", len(data), [(o, data[o : o + n]) for o, n in head_plan(data[:1024], len(data)) or []])
    assert missing_after(first)  # the plan from the headers alone misses tables
    src = _stream(data)
    assert src is not None and _same(read_bytes(str(path), src), read_path(str(path)))


def test_a_member_corrupt_past_its_head_is_a_decompression_error(tmp_path: Path) -> None:
    data = (SAMPLES / "fixed/libtorch_cuda.so").read_bytes()
    whl = tmp_path / "w.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("lib/x.so", data)
    raw = bytearray(whl.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    whl.write_bytes(bytes(raw))
    with zipfile.ZipFile(whl) as zf, pytest.raises((zipfile.BadZipFile, Exception)):
        info = zf.getinfo("lib/x.so")
        stream_member(lambda: zf.open(info), "w.whl!lib/x.so", info.file_size, Inflated(Budget(), None))


def test_inflating_counts_against_the_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    from linkaudit.packages.staging import Refused

    data = (SAMPLES / "fixed/libtorch_cuda.so").read_bytes()
    monkeypatch.setattr(limits, "MAX_MEMBER_BYTES", len(data) // 2)
    with pytest.raises(Refused):
        _stream(data)


def test_placeholders_sniff_as_the_member(tmp_path: Path) -> None:
    from linkaudit.packages.stream import place

    dest = tmp_path / "libx.so"
    place(str(dest), b"\x7fELF\x02\x01\x01\0", 1 << 20)
    assert os.path.getsize(dest) == 1 << 20 and sniff(dest.read_bytes()[:8]) is not None


@pytest.mark.realwheel
def test_torch_libraries_read_from_their_kept_ranges_match_the_files(torch_lib: Path) -> None:
    """The real, patchelf-edited libraries (``.dynstr`` and ``.gnu.hash`` moved to the end): the
    records from the kept ranges equal the whole files', keeping a few percent of the bytes."""
    kept = total = 0
    for path in sorted(torch_lib.glob("*.so*")):
        size = path.stat().st_size
        src = _stream(path.read_bytes(), f"torch.whl!{path.name}")
        assert src is not None, path.name
        streamed = _outcome(lambda s=src, p=str(path): read_bytes(p, s))  # type: ignore[misc]
        assert streamed == _outcome(lambda p=str(path): read_path(p)), path.name  # type: ignore[misc]
        kept, total = kept + src.kept, total + size
    assert kept < total // 16  # 44 MB of 1,036 MB kept once trimmed (109 MB while streaming)
