"""An archive with a member that cannot be read: its other members are still audited, as ``nm``
and ``readelf`` go on past a bad member; the bad one is named.  (One malformed member, or a thin
archive's one missing member file, made the whole archive unreadable: none of its good members
was audited.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from linkaudit import jobs
from linkaudit.errors import InputError, PartialRead
from linkaudit.formats import read_path
from linkaudit.formats.archive import MAX_MEMBER_ERRORS_NAMED

from .arbuild import header, thin_archive

THIN = Path(__file__).resolve().parents[2] / "sample_bins" / "objects" / "thin"
#: An ELF header whose section table lies far past the end of the member.
BAD = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\x00\x3e\x00" + b"\xff" * 44


def _archive(members: list[tuple[bytes, bytes]]) -> bytes:
    """A regular GNU ``ar`` archive of ``(name, data)`` members (names of at most 15 bytes)."""
    parts = [b"!<arch>\n"]
    for name, data in members:
        parts += [header(name + b"/", len(data)), data, b"\n" if len(data) % 2 else b""]
    return b"".join(parts)


def _objects() -> tuple[bytes, bytes]:
    return (THIN / "thin_a.o").read_bytes(), (THIN / "thin_b.o").read_bytes()


def test_a_malformed_member_leaves_the_others_read(tmp_path: Path) -> None:
    a, b = _objects()
    lib = tmp_path / "libmixed.a"
    lib.write_bytes(_archive([(b"a.o", a), (b"bad.o", BAD), (b"b.o", b)]))
    with pytest.raises(PartialRead) as caught:
        read_path(str(lib))
    assert [x.member for x in caught.value.binaries] == ["a.o", "b.o"]
    assert [(e.path, e.reason.split(":")[0]) for e in caught.value.errors] == [(str(lib), "member bad.o")]


def test_a_thin_archive_missing_one_member_file_reads_the_rest(tmp_path: Path) -> None:
    shutil.copy(THIN / "thin_a.o", tmp_path / "thin_a.o")
    lib = tmp_path / "libthin.a"
    lib.write_bytes(thin_archive([(b"thin_a.o", 984), (b"thin_b.o", 984)]))
    with pytest.raises(PartialRead) as caught:
        read_path(str(lib))
    assert [x.member for x in caught.value.binaries] == ["thin_a.o"]
    (error,) = caught.value.errors
    assert "thin archive member thin_b.o cannot be read" in error.reason


def test_only_bad_members_is_the_archive_unreadable_as_before(tmp_path: Path) -> None:
    lib = tmp_path / "libbad.a"
    lib.write_bytes(_archive([(b"bad.o", BAD), (b"worse.o", BAD)]))
    with pytest.raises(InputError) as caught:
        read_path(str(lib))
    assert not isinstance(caught.value, PartialRead) and caught.value.reason.startswith("member bad.o:")


def test_many_bad_members_are_named_up_to_a_bound_and_counted(tmp_path: Path) -> None:
    a, _ = _objects()
    bad = [(f"bad{i}.o".encode(), BAD) for i in range(MAX_MEMBER_ERRORS_NAMED + 5)]
    lib = tmp_path / "libmany.a"
    lib.write_bytes(_archive([(b"a.o", a), *bad]))
    with pytest.raises(PartialRead) as caught:
        read_path(str(lib))
    errors = caught.value.errors
    assert len(errors) == MAX_MEMBER_ERRORS_NAMED + 1
    assert errors[-1].reason.startswith("5 more members not read")


@pytest.mark.parametrize("workers", [1, 2])
def test_check_audits_the_good_members_and_names_the_bad_one(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:  # type: ignore[no-untyped-def]
    """``check`` of archives with one bad member each, read here or in a pool: the good members
    are audited files, the bad one an ``unreadable-input`` finding; exit 2 (an input not whole)."""
    a, b = _objects()
    data = _archive([(b"a.o", a), (b"bad.o", BAD), (b"b.o", b)])
    libs = []
    for i in range(jobs.MIN_POOL_FILES):
        libs.append(tmp_path / f"lib{i}.a")
        libs[-1].write_bytes(data)
    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    monkeypatch.setattr(jobs, "MIN_POOL_BYTES", 0)
    monkeypatch.setattr(jobs, "MIN_POOL_FILE_BYTES", 0)
    out = tmp_path / "report.json"
    result = run_cli(
        "check", "--no-cache", "--no-config", "-j", str(workers), "--format", "json", "-o", str(out), *map(str, libs)
    )
    report = json.loads(out.read_text())
    audited = [f["path"] for f in report["files"] if f["status"] == "audited"]
    assert audited == [f"{lib}({m})" for lib in libs for m in ("a.o", "b.o")]
    bad = [f for f in report["findings"] if f["rule"] == "unreadable-input"]
    assert [f["file"] for f in bad] == [str(lib) for lib in libs]
    assert all("member bad.o" in f["message"] for f in bad)
    assert result.exit_code == 2
