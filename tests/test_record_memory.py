"""A wheel's RECORD costs what its paths cost: a 64 MiB RECORD (6.2 million short lines, a 13 MB
wheel) took 1.53 GB and 25 s, each RECORD being parsed three times (the conda target check, the
installation model, wheel-tag-mismatch each asked ``Staged.distributions``) with every line and
its first field held at once.  Now it is parsed once, a piece at a time."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.packages import metadata

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
LIB = SAMPLES / "misc/libabs.so"

#: RECORD lines of every kind ``record_paths`` tells apart, with each line break ``splitlines`` knows.
LINES = [
    "torch/lib/libc10.so,sha256=abc,123\n",
    '"odd,name.py",sha256=x,1\r\n',
    "dir\\win.py,,\r",
    "../../bin/script,,\n",
    "./x/../y.py,,\x0c",
    "\n",
    "a\x0bb.py,,\x85",
    "nul\0inside.py,,\n",
    "plain/path.py,sha256=" + "a" * 43 + ",4096\u2028",
]


def test_a_record_read_a_piece_at_a_time_lists_the_same_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(LINES[i % len(LINES)] + f"p{i}/f.py,,\n" for i in range(3000))
    whole = metadata.record_paths(text)
    assert len(whole) > 3000 and "p2999/f.py" in whole and "odd,name.py" in whole
    for piece in (1, 7, 64, 1000):
        monkeypatch.setattr(metadata, "_RECORD_PIECE", piece)
        assert metadata.record_paths(text) == whole


def test_a_large_record_peaks_near_the_paths_it_keeps() -> None:
    """Before, every line and every first field were held at once: a peak ~2.3x (~4x with hashes)
    of what is kept."""
    text = "".join(f"pkg/sub/m{i}.py,sha256={'x' * 43},{i}\n" for i in range(300_000))
    tracemalloc.start()
    try:
        paths = metadata.record_paths(text)
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(paths) == 300_000
    assert peak < 1.3 * kept, (peak, kept)


def test_each_wheels_record_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = tmp_path / "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    record = "pkg/libabs.so,,\n" + "".join(f"pkg/m{i}.py,,\n" for i in range(100))
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/libabs.so", LIB.read_bytes())
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
        zf.writestr("pkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: cp311-cp311-manylinux_2_17_x86_64\n")
        zf.writestr("pkg-1.0.dist-info/RECORD", record)
    calls = []
    real = metadata.record_paths

    def counted(text: str) -> tuple[str, ...]:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(metadata, "record_paths", counted)
    report = audit([str(wheel)])
    assert not [f for f in report.findings if f.rule == "unreadable-input"]
    assert calls == [len(record)]
