"""A conda-meta record is held to what a record can hold: one whose ``files`` was a list of millions
of empty lists (20 MiB each, under ``MAX_RECORD``) took 75x its bytes when parsed, and four ended
the run with "internal error: MemoryError" (exit 3).  Such a record is now refused, named, and the
rest of the prefix is still read; real records (``paths_data`` and all) are read as before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from linkaudit.packages.site import read_conda_record, read_prefix

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
LIB = SAMPLES / "misc/libabs.so"

#: Records no conda writes, each a way to make the parser build far more than the bytes read.
HOSTILE = {
    "empty lists": '{"name":"bad","version":"1","files":[' + ",".join(["[]"] * 200_000) + "]}",
    "empty objects": '{"name":"bad","version":"1","files":[' + ",".join(["{}"] * 200_000) + "]}",
    "objects in depends": '{"name":"bad","version":"1","depends":[' + ",".join(['{"a":[]}'] * 100_000) + "]}",
    "nested padding": '{"name":"bad","version":"1","files":[],"x":' + "[" * 50_000 + "]" * 50_000 + "}",
    "numbers as files": '{"name":"bad","version":"1","files":[' + ",".join(["1"] * 200_000) + "]}",
    "a string as files": '{"name":"bad","version":"1","files":"lib/libabs.so"}',
}


def _real_record(name: str, files: list[str]) -> dict[str, object]:
    """A record as conda writes it into conda-meta: ``paths_data`` with one object per file."""
    paths = [
        {"_path": f, "path_type": "hardlink", "sha256": "ab" * 32, "sha256_in_prefix": "cd" * 32, "size_in_bytes": 104}
        for f in files
    ]
    return {
        "build": "h1234_0", "build_number": 0, "channel": "https://conda.anaconda.org/conda-forge/linux-64",
        "constrains": [], "depends": ["libgcc >=13", "__glibc >=2.28,<3.0.a0"], "files": files,
        "fn": f"{name}-1.0-h1234_0.conda", "license": "MIT", "link": {"source": "/pkgs/x", "type": 1},
        "md5": "0" * 32, "name": name, "noarch": {"type": "generic"}, "package_tarball_full_path": "/pkgs/x.conda",
        "paths_data": {"paths": paths, "paths_version": 1}, "requested_spec": name, "sha256": "e" * 64,
        "size": 1000, "subdir": "linux-64", "timestamp": 1700000000000, "url": "https://x/y.conda", "version": "1.0",
    }  # fmt: skip


def _prefix(tmp_path: Path, hostile: str) -> Path:
    prefix = tmp_path / "prefix"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "lib").mkdir()
    shutil.copy(LIB, prefix / "lib/libabs.so")
    good = _real_record("good", ["lib/libabs.so"] + [f"share/terminfo/x/t{i}" for i in range(3000)])
    (prefix / "conda-meta/good-1.0-h1234_0.json").write_text(json.dumps(good, indent=2))
    (prefix / "conda-meta/bad-1-0.json").write_text(hostile)
    return prefix


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_record_is_refused_by_name_and_the_rest_read(tmp_path: Path, kind: str) -> None:
    prefix = _prefix(tmp_path, HOSTILE[kind])
    site = read_prefix(str(prefix))
    assert site is not None and [d.name for d in site.distributions] == ["good"]
    ((path, reason),) = site.problems
    assert path == str(prefix / "conda-meta/bad-1-0.json") and "conda-meta record not read" in reason


def test_a_real_record_is_read_as_conda_wrote_it(tmp_path: Path) -> None:
    files = ["lib/libabs.so", "a", "bin/x", "include/a.h"] + [f"share/terminfo/x/t{i}" for i in range(5000)]
    for indent in (None, 2):
        path = tmp_path / f"r{indent}.json"
        path.write_text(
            json.dumps(_real_record("real", files), indent=indent, separators=(",", ":") if indent is None else None)
        )
        problems: list[tuple[str, str]] = []
        record = read_conda_record(str(path), problems)
        assert problems == []
        assert record == {"name": "real", "version": "1.0", "build": "h1234_0", "subdir": "linux-64",
                          "depends": ["libgcc >=13", "__glibc >=2.28,<3.0.a0"], "files": files}  # fmt: skip


def test_a_hostile_record_costs_a_small_multiple_of_its_bytes(tmp_path: Path) -> None:
    """Parsed, 4 MB of ``[],`` took ~300 MB; refused, the record costs its text and a count."""
    text = '{"name":"bad","version":"1","files":[' + ",".join(["[]"] * 1_400_000) + "]}"
    (tmp_path / "bad.json").write_text(text)
    tracemalloc.start()
    try:
        problems: list[tuple[str, str]] = []
        assert read_conda_record(str(tmp_path / "bad.json"), problems) is None and problems
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text), peak


def test_running_out_of_memory_on_a_record_names_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = _prefix(tmp_path, json.dumps({"name": "bad", "version": "1", "files": []}))
    real_loads = json.loads

    def loads(text: str, **kw: object) -> object:
        if '"bad"' in text:
            raise MemoryError
        return real_loads(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(json, "loads", loads)
    site = read_prefix(str(prefix))
    assert site is not None and [d.name for d in site.distributions] == ["good"]
    assert [reason for _path, reason in site.problems] == ["conda-meta record not read: out of memory parsing its JSON"]


def test_the_cli_names_a_refused_record_and_audits_the_rest(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path, HOSTILE["empty lists"])
    proc = subprocess.run(
        [sys.executable, "-m", "linkaudit", "check", "--no-config", "--no-cache", str(prefix), str(SAMPLES / "broken")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2
    assert "bad-1-0.json" in proc.stdout and "conda-meta record not read" in proc.stdout
    assert "libtorch_cuda.so" in proc.stdout and "libabs.so" in proc.stdout


def test_a_records_files_are_kept_not_copied(tmp_path: Path) -> None:
    """Each path of ``files`` went through ``posixpath.normpath``, a copy of every string held beside
    the record's own until the prefix was read (20 MiB of short paths: 662 MB, now 400 MB)."""
    files = [f"lib/f{i}" for i in range(200_000)] + ["lib//x", "./lib/y/", ""]
    (tmp_path / "conda-meta").mkdir()
    (tmp_path / "conda-meta/p-1-0.json").write_text(json.dumps({"name": "p", "version": "1", "files": files}))
    tracemalloc.start()
    try:
        site = read_prefix(str(tmp_path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert site is not None
    assert site.distributions[0].files[-3:] == ("lib/x", "lib/y", ".")  # normalised as before
    strings = sum(sys.getsizeof(f) for f in files)
    assert peak < 2.8 * strings, (peak, strings)  # 3.4x before (the record, its copy, the owners)
