"""Hostile layouts for the loader emulation: each is reported, nothing hangs, the rest is still audited."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from linkaudit.loader.fs import FileSystemView
from linkaudit.loader.ldso import MAX_ATTEMPTS, MAX_SYSTEM_DIRS, _scan_system_dirs

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def _image(tmp_path: Path) -> Path:
    """A sysroot holding the extension-module sample and its library."""
    root = tmp_path / "image"
    (root / "app").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "usr/lib").mkdir(parents=True)
    shutil.copy(SAMPLES / "ext/_C.cpython-311-x86_64-linux-gnu.so", root / "app/_C.cpython-311-x86_64-linux-gnu.so")
    shutil.copy(SAMPLES / "ext/lib/libshim.so", root / "usr/lib/libshim.so")
    return root


def test_fifo_cache_is_refused_not_waited_on(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _image(tmp_path)
    os.mkfifo(root / "etc/ld.so.cache")
    r = run_cli("check", "--format", "json", "--sysroot", str(root), "--system-dir", "/usr/lib", str(root / "app"))
    doc = json.loads(r.stdout)
    (bad,) = [f for f in doc["findings"] if f["rule"] == "unreadable-input"]
    assert bad["file"] == "/etc/ld.so.cache" and "not a regular file" in bad["message"]
    # the emulation went on without the cache: libshim.so is found in the system directory
    assert not [f for f in doc["findings"] if f["rule"] == "library-not-found" and f["subject"] == "libshim.so"]
    assert r.exit_code == 2


def test_corrupt_cache_keeps_the_other_findings(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _image(tmp_path)
    (root / "etc/ld.so.cache").write_bytes(b"garbage")
    r = run_cli("check", "--format", "json", "--sysroot", str(root), "--system-dir", "/usr/lib", str(root / "app"))
    doc = json.loads(r.stdout)
    rules = {f["rule"] for f in doc["findings"]}
    assert "unreadable-input" in rules
    assert "library-not-found" in rules  # libc.so.6 is not in the image: still reported
    assert r.exit_code == 2


def test_missing_option_files_are_reported_and_the_audit_goes_on(run_cli) -> None:  # type: ignore[no-untyped-def]
    for option in ("--dlopen-global", "--interpreter", "--ld-preload"):
        r = run_cli("check", option, "/nonexistent.so", str(SAMPLES / "misc/libweak.so"))
        assert r.exit_code == 2, option
        assert f"{option}: no such file" in r.stdout
        assert "required_hook" in r.stdout  # the library's own finding is still there


def test_directory_named_like_a_library_stops_the_load(tmp_path: Path) -> None:
    from .helpers import analyze_paths, resolution

    scenario = tmp_path / "s"
    shutil.copytree(SAMPLES / "loader/wrong_class", scenario, symlinks=True)
    (scenario / "lib32/libleaf.so").unlink()
    (scenario / "lib32/libleaf.so").mkdir()
    a = analyze_paths(str(scenario / "app"), entries=(str(scenario / "app"),))
    leaf = resolution(a, "/app", "libleaf.so")
    assert not leaf.found and leaf.error and "Is a directory" in leaf.error


def test_fifo_candidate_does_not_hang(tmp_path: Path) -> None:
    from .helpers import analyze_paths, resolution

    scenario = tmp_path / "s"
    shutil.copytree(SAMPLES / "loader/wrong_class", scenario, symlinks=True)
    (scenario / "lib32/libleaf.so").unlink()
    os.mkfifo(scenario / "lib32/libleaf.so")
    a = analyze_paths(str(scenario / "app"), entries=(str(scenario / "app"),))
    assert "not a regular file" in (resolution(a, "/app", "libleaf.so").error or "")


def test_system_dir_scan_is_linear_and_capped() -> None:
    dirs = _scan_system_dirs(b"x\0" + b"/lib/\0" * 200_000 + b"y")
    assert len(dirs) <= MAX_SYSTEM_DIRS


def test_attempts_are_capped_and_counted(tmp_path: Path) -> None:
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.loader.analysis import Root, analyze
    from linkaudit.loader.closure import RootKind
    from linkaudit.loader.target import TargetEnvironment

    (b,) = read(str(SAMPLES / "broken/libtorch_cuda.so"))
    for i in range(200):
        (tmp_path / f"d{i}").mkdir()
    wide = replace(b, runpath=tuple(str(tmp_path / f"d{i}") for i in range(200)))
    a = analyze([wide], TargetEnvironment(driverless=False, use_cache=False), [Root(b.path, RootKind.DLOPEN)])
    res = a.loads[0].resolutions[(b.path, "libcuda.so.1")]
    assert len(res.attempts) == MAX_ATTEMPTS and res.more_attempts > 0


def test_sysroot_dotdot_is_applied_after_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "opt/versions/1.0/lib").mkdir(parents=True)
    (root / "opt/versions/1.0/deps").mkdir(parents=True)
    (root / "opt/deps").mkdir(parents=True)
    os.symlink("versions/1.0/lib", root / "opt/lib")
    fs = FileSystemView(str(root))
    # the kernel follows opt/lib first, then "..": opt/versions/1.0/deps, not opt/deps
    assert fs.host_path("/opt/lib/../deps") == str(root / "opt/versions/1.0/deps")


def test_sysroot_input_symlink_to_the_host_is_refused(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _image(tmp_path)
    os.symlink("/usr/bin/ls", root / "app/ls")  # absolute: inside the image it is the image's /usr/bin/ls
    r = run_cli("check", "--format", "json", "--sysroot", str(root), "--system-dir", "/usr/lib", str(root / "app"))
    doc = json.loads(r.stdout)
    (bad,) = [f for f in doc["findings"] if f["rule"] == "unreadable-input" and f["file"].endswith("app/ls")]
    assert "leads out of the sysroot" in bad["message"]
    assert r.exit_code == 2


def test_path_searches_stop_after_max_places(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ld.so has no limit on the directories its searches try; a 148 KB file of 3,000 DT_NEEDED
    entries and a DT_RUNPATH of 3,000 directories was 9 million tries (24.7 s). The emulation's
    searches stop after MAX_PLACES in one audit and say so in the attempt (a small budget here)."""
    from linkaudit import audit
    from linkaudit.loader import ldso

    from .dagbuild import Lib, write

    monkeypatch.setattr(ldso, "MAX_PLACES", 50)
    needed = tuple(f"libx{i}.so" for i in range(20))
    dirs = tuple(f"/nonexistent/d{i}" for i in range(10))
    (app,) = write(str(tmp_path), [Lib("libapp.so", soname="libapp.so", needed=needed, runpath=dirs)])
    report = audit([app])
    missing = [f for f in report.findings if f.rule == "library-not-found"]
    assert {f.subject for f in missing} == set(needed)  # every one still reported, found nowhere
    stopped = "search stopped: more than 50 places tried in this audit"
    assert stopped in json.dumps([f.evidence for f in missing], default=str)


def test_a_runpath_too_long_to_open_is_kept_short_in_every_attempt(tmp_path: Path) -> None:
    """A 6 KB ``$ORIGIN/../..`` DT_RUNPATH entry tried for each of 60 DT_NEEDED: glibc's stat of
    the directory fails (ENAMETOOLONG), so it is a directory that does not exist; each attempt
    keeps the path's start, length and end, not 6 KB (a 48 KB entry made a 15 MB report, and 20
    such files exit 3)."""
    from linkaudit import audit
    from linkaudit.output.json import render

    from ..formats import elfbuild

    runpath = "$ORIGIN" + "/.." * 2000
    lib = tmp_path / "libr.so"
    lib.write_bytes(elfbuild.shared_library("libr.so", [f"libn{i}.so" for i in range(60)], runpath=runpath))
    doc = json.loads(render(audit([str(lib)])))
    missing = [f for f in doc["findings"] if f["rule"] == "library-not-found"]
    assert len(missing) == 60
    first = missing[0]["evidence"]["attempts"][0]
    assert first["source"] == "DT_RUNPATH" and "ENAMETOOLONG" in first["detail"], first
    assert len(first["path"]) < 250 and first["path"].endswith("/../libn0.so"), first["path"]
    assert f"[{len(str(tmp_path)) + len('/..') * 2000 + len('/libn0.so')} characters]" in first["path"]
    assert len(json.dumps(doc)) < 30 * lib.stat().st_size


def test_musl_passes_over_a_path_longer_than_its_buffer(tmp_path: Path) -> None:
    """musl's ``path_open`` writes ``dir/name`` into a 512-byte buffer and passes over what does
    not fit; glibc opens the same path (under PATH_MAX).  So the library is found by glibc only."""
    from linkaudit import read
    from linkaudit.loader.analysis import analyze
    from linkaudit.loader.musl import PATH_BUFFER
    from linkaudit.loader.target import TargetEnvironment

    from ..formats import elfbuild

    deep = tmp_path / ("d" * 200) / ("e" * 200) / ("f" * 100)
    deep.mkdir(parents=True)
    (deep / "libdeep.so").write_bytes(elfbuild.shared_library("libdeep.so"))
    assert len(f"{deep}/libdeep.so") >= PATH_BUFFER
    found = {}
    for libc in ("libc.musl-x86_64.so.1", "libc.so.6"):
        app = tmp_path / f"app-{libc}.so"
        app.write_bytes(elfbuild.shared_library(f"app-{libc}.so", [libc, "libdeep.so"], runpath=str(deep)))
        binaries = [*read(str(app)), *read(str(deep / "libdeep.so"))]
        analysis = analyze(binaries, TargetEnvironment())
        res = next(r for load in analysis.loads for (_, n), r in load.resolutions.items() if n == "libdeep.so")
        found[libc] = res
    assert found["libc.so.6"].path == f"{deep}/libdeep.so"
    musl = found["libc.musl-x86_64.so.1"]
    assert musl.path is None
    assert "path buffer" in musl.attempts[0].detail and len(musl.attempts[0].path) > PATH_BUFFER


def test_musl_keeps_64_attempts_of_a_search_ending_at_an_object_loaded_already(tmp_path: Path) -> None:
    """A search through 100 missing RUNPATH directories that ends at a library loaded already
    under another name (a symlink: the same inode) kept every attempt: 567 MB for five 81 KB files."""
    from linkaudit import read
    from linkaudit.loader.analysis import analyze
    from linkaudit.loader.ldso import MAX_ATTEMPTS, Source
    from linkaudit.loader.target import TargetEnvironment

    from .dagbuild import Lib, elf_bytes

    missing = tuple(f"{tmp_path}/none{i}" for i in range(100))
    app = Lib(
        "app", interpreter="/lib/ld-musl-x86_64.so.1", needed=("liba.so", "libalias.so"), runpath=(*missing, "$ORIGIN")
    )
    (tmp_path / "app").write_bytes(elf_bytes(app))
    (tmp_path / "liba.so").write_bytes(elf_bytes(Lib("liba.so", soname="liba.so")))
    (tmp_path / "libalias.so").symlink_to("liba.so")
    binaries = [b for name in ("app", "liba.so") for b in read(str(tmp_path / name))]
    (load,) = [ld for ld in analyze(binaries, TargetEnvironment()).loads if ld.root.endswith("/app")]
    alias = load.resolutions[(str(tmp_path / "app"), "libalias.so")]
    assert alias.source is Source.LOADED and alias.path == str(tmp_path / "liba.so")
    assert len(alias.attempts) == MAX_ATTEMPTS and alias.more_attempts == 101 - MAX_ATTEMPTS
