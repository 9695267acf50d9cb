"""``PACKAGE!member`` naming a symlink or tar hard link of the package — the usual
``lib/libz.so -> libz.so.1 -> libz.so.1.3.1`` of a conda package or a release tarball, or a path
through a directory link (``lib64 -> lib``) — is the member it resolves to, for every command.
Before: ``check`` and ``diff`` said "no such binary member" (exit 2) and ``show`` printed
nothing (exit 0), though the member loads."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
BROKEN = (SAMPLES / "broken/libtorch_cuda.so").read_bytes()  # errors of its own
TARGET = "lib/libz.so.1.3.1"
LINKS = ["lib/libz.so.1", "lib/libz.so", "lib/libhard.so", "lib64/libz.so.1.3.1", "lib64/libz.so"]
INDEX = b'{"name": "libz", "version": "1.3.1", "build": "0", "subdir": "linux-64", "depends": []}'


def _tar(fmt: str = "w") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=fmt) as tf:

        def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> None:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            tf.addfile(info)

        for name, data in ((TARGET, BROKEN), ("info/index.json", INDEX)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        link("lib/libz.so.1", "libz.so.1.3.1")
        link("lib/libz.so", "libz.so.1")
        link("lib/libhard.so", TARGET, tarfile.LNKTYPE)
        link("lib64", "lib")
    return out.getvalue()


def _info() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tf:
        info = tarfile.TarInfo("info/index.json")
        info.size = len(INDEX)
        tf.addfile(info, io.BytesIO(INDEX))
    return out.getvalue()


def _package(tmp: Path, suffix: str) -> str:
    name = f"libz-1.3.1-0{suffix}"
    if suffix == ".conda":
        with zipfile.ZipFile(tmp / name, "w") as zf:
            zf.writestr("metadata.json", b'{"conda_pkg_format_version": 2}')
            zf.writestr("pkg-libz-1.3.1-0.tar.zst", zstandard.ZstdCompressor().compress(_tar()))
            zf.writestr("info-libz-1.3.1-0.tar.zst", zstandard.ZstdCompressor().compress(_info()))
    else:
        (tmp / name).write_bytes(_tar("w:bz2" if suffix == ".tar.bz2" else "w:gz"))
    return name


KINDS = [".conda", ".tar.bz2", ".tar.gz"]


@pytest.mark.parametrize("suffix", KINDS)
def test_check_of_a_link_member_audits_its_target(run_cli, tmp_path: Path, monkeypatch, suffix: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, suffix)
    target = f"{package}!{TARGET}"
    direct = json.loads(run_cli("check", "--no-config", "--no-cache", "--format", "json", target).stdout)
    assert [f["path"] for f in direct["files"]] == [target]
    for link in LINKS:
        r = run_cli("check", "--no-config", "--no-cache", "--format", "json", f"{package}!{link}")
        assert r.exit_code == 1, (link, r.stdout)  # the target's own errors, not "no such member" (2)
        doc = json.loads(r.stdout)
        assert doc["files"] == direct["files"], link
        assert doc["findings"] == direct["findings"], link
    missing = run_cli("check", "--no-config", "--no-cache", f"{package}!lib/libnone.so")
    assert missing.exit_code == 2 and "no such binary member" in missing.stdout


@pytest.mark.parametrize("spread", [[], ["--each"]])
def test_streamed_check_of_a_link_member_streams_its_targets_findings(
    run_cli, tmp_path: Path, monkeypatch, spread: list[str]
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, ".conda")
    whole = run_cli("check", "--no-config", "--no-cache", "--format", "jsonl", *spread, f"{package}!{TARGET}")
    r = run_cli("check", "--no-config", "--no-cache", "--format", "jsonl", *spread, f"{package}!lib/libz.so")
    assert r.exit_code == 1
    found = [x for x in map(json.loads, r.stdout.splitlines()) if x.get("rule")]
    assert found and found == [x for x in map(json.loads, whole.stdout.splitlines()) if x.get("rule")]


@pytest.mark.parametrize("suffix", KINDS)
def test_show_tree_why_of_a_link_member(run_cli, tmp_path: Path, monkeypatch, suffix: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, suffix)
    for link in LINKS:
        member = f"{package}!{link}"
        shown = run_cli("show", member)
        assert shown.exit_code == 0 and shown.stdout.startswith(f"{package}!{TARGET}\n"), (link, shown)
        assert f"{member}: a link in the package" in shown.stderr and f"to {package}!{TARGET}" in shown.stderr
        tree = run_cli("tree", member)
        assert tree.exit_code != 2 and tree.stdout.startswith(member), (link, tree)
        why = run_cli("why", member, "libc.so.6")
        assert why.exit_code != 2 and "libc.so.6" in why.stdout, (link, why)


@pytest.mark.parametrize("suffix", KINDS)
def test_diff_of_a_link_member_and_its_target(run_cli, tmp_path: Path, monkeypatch, suffix: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, suffix)
    for link in LINKS:
        r = run_cli("diff", "--no-config", "--no-cache", f"{package}!{TARGET}", f"{package}!{link}")
        assert r.exit_code == 0, (link, r.stdout + r.stderr)
        assert "0 files added, 0 removed, 0 changed" in r.stdout and "no such" not in r.stdout


def test_resolve_link_follows_leading_links_and_stops() -> None:
    from linkaudit.report import resolve_link

    links = {"p!lib64": "p!lib", "p!lib/libz.so": "p!lib/libz.so.1", "p!lib/libz.so.1": "p!lib/libz.so.1.3.1"}
    assert resolve_link(links, "p!lib64/libz.so") == "p!lib/libz.so.1.3.1"
    assert resolve_link(links, "p!lib/other.so") == "p!lib/other.so"
    assert resolve_link({"p!a": "p!b", "p!b": "p!a"}, "p!a/x") in ("p!a/x", "p!b/x")  # a loop ends
