"""``linkaudit.inputs``: the directory walk (depth, symlinks leaving the tree)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linkaudit.inputs import collect

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bins"
ELF = (SAMPLES / "fixed/libnvrtc.so.12").read_bytes()


def test_a_tree_deeper_than_the_recursion_limit_walks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "deep").mkdir()
    monkeypatch.chdir(tmp_path / "deep")  # restored after the test
    for _ in range(1200):
        os.mkdir("d")
        os.chdir("d")
    Path("lib.so").write_bytes(ELF)
    os.chdir(tmp_path)
    try:
        got = collect(["deep"])
        assert len(got.files) == 1 and got.files[0].endswith("/d/lib.so") and got.files[0].count("/d") == 1200
        assert not got.errors
    finally:
        _remove_deep(tmp_path / "deep")


def _remove_deep(top: Path) -> None:
    """Remove a chain of nested directories bottom-up without recursion (shutil.rmtree recurses in 3.11)."""
    depth = 0
    os.chdir(top)
    while os.path.isdir("d"):
        os.chdir("d")
        depth += 1
    for name in os.listdir("."):
        os.unlink(name)
    for _ in range(depth):
        os.chdir("..")
        os.rmdir("d")
    os.chdir(top.parent)


def test_walk_order_is_sorted_depth_first(tmp_path: Path) -> None:
    for rel in ("b/lib.so", "a/z/lib.so", "a/lib.so", "c.so"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(ELF + rel.encode())  # distinct inodes and contents
    got = collect([str(tmp_path)])
    assert [os.path.relpath(p, tmp_path) for p in got.files] == ["c.so", "a/lib.so", "a/z/lib.so", "b/lib.so"]


def test_symlinked_directories_leaving_the_tree_are_not_entered(tmp_path: Path) -> None:
    pkg, other = tmp_path / "pkg", tmp_path / "other"
    (pkg / "lib").mkdir(parents=True)
    other.mkdir()
    (other / "libhost.so").write_bytes(ELF)
    (pkg / "lib" / "libown.so").write_bytes(ELF + b"own")
    os.symlink("/", pkg / "root")  # a package holding x -> /
    os.symlink(other, pkg / "elsewhere")
    os.symlink("lib", pkg / "lib64")  # inside: followed (and deduplicated)
    os.symlink(other / "libhost.so", pkg / "lib" / "libhost.so")  # a symlinked *file* outside: still audited
    got = collect([str(pkg)])
    assert sorted(os.path.relpath(p, pkg) for p in got.files) == ["lib/libhost.so", "lib/libown.so"]
    assert {os.path.basename(p) for p, _real in got.outside} == {"root", "elsewhere"}
    assert dict(got.outside)[str(pkg / "root")] == "/"


def test_proc_self_does_not_walk_the_host() -> None:
    if not os.path.isdir("/proc/self/root"):
        return
    got = collect(["/proc/self/"])
    assert ("/proc/self/root", "/") in got.outside
    assert not any(p.startswith(("/proc/self/root/", "/proc/self/cwd/")) for p in got.files)


def test_llvm_bitcode_found_in_a_directory_gets_the_lto_note_too(tmp_path: Path) -> None:
    from linkaudit import audit

    (tmp_path / "thin.o").write_bytes(b"BC\xc0\xde" + bytes(64))
    for given in (tmp_path, tmp_path / "thin.o"):
        report = audit([str(given)])
        assert [f.rule for f in report.findings if f.rule != "no-binaries"] == ["lto-object"], given
        assert [f.status.value for f in report.files] == ["skipped"]


def _dangling_tree(top: Path) -> dict[str, str]:
    """A library directory with every kind of dangling link a build tree or prefix holds: a
    development link to a soname not shipped, an absolute one, a chain ending at nothing, one
    into a directory that does not exist, and one in a subdirectory; returns link -> target."""
    (top / "sub").mkdir(parents=True)
    (top / "libnvrtc.so.12").write_bytes(ELF)
    links = {
        "libnothere.so": "libnothere.so.1",
        "libabs.so": str(top / "gone/libabs.so.1"),
        "libchain.so": "libchain.so.1",
        "libchain.so.1": "libchain.so.1.2",
        "libnodir.so": "missing/dir/libnodir.so",
        "sub/libdeep.so": "../libdeep.so.3",
    }
    for link, target in links.items():
        os.symlink(target, top / link)
    return {str(top / link): target for link, target in links.items()}


def test_dangling_symlinks_under_a_directory_are_passed_over_as_notes(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``check DIR`` failed (exit 2, an unreadable-input that cannot be ignored) on a dangling
    ``libfoo.so -> libfoo.so.1``: ldconfig passes over it, and so does the walk — one
    ``broken-symlink`` note each, exit status as without them; named alone it stays an error."""
    import json

    from tests.output.schema import validate_report

    links = _dangling_tree(tmp_path / "lib")
    got = collect([str(tmp_path / "lib")])
    assert not got.errors and got.files == (str(tmp_path / "lib/libnvrtc.so.12"),)
    assert dict(got.broken_links) == links
    r = run_cli("check", "--no-config", "--format", "json", str(tmp_path / "lib"))
    doc = json.loads(r.stdout)
    validate_report(doc)
    notes = {f["file"]: f for f in doc["findings"] if f["rule"] == "broken-symlink"}
    assert r.exit_code == 0, r.stdout
    assert {p: n["evidence"]["target"] for p, n in notes.items()} == links
    assert {n["severity"] for n in notes.values()} == {"note"}
    assert "unreadable-input" not in {f["rule"] for f in doc["findings"]}
    r = run_cli("check", "--no-config", "--ignore", "broken-symlink", str(tmp_path / "lib"))
    assert r.exit_code == 0 and "broken-symlink" not in r.stdout
    r = run_cli("show", str(tmp_path / "lib"))
    assert r.exit_code == 0 and f"{tmp_path}/lib/libnothere.so: broken symlink (to libnothere.so.1)" in r.stderr
    for named in (tmp_path / "lib/libnothere.so", tmp_path / "lib/libchain.so"):
        r = run_cli("check", "--no-config", str(named))
        assert r.exit_code == 2 and "[unreadable-input]" in r.stdout and "broken symlink" in r.stdout
