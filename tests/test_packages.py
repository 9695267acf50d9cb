"""Wheels, conda packages and tarballs as inputs: members reported as ``PACKAGE!member``, ``$ORIGIN``
resolved against the member layout, several wheels composed into one site, hostile archives refused
member by member while the rest is audited, and nothing written outside the private staging tree."""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from linkaudit import AuditConfig, audit
from linkaudit.config.baseline import dumps
from linkaudit.packages import package_kind, staged_inputs

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
BROKEN = (SAMPLES / "broken/libtorch_cuda.so").read_bytes()
NVRTC = (SAMPLES / "fixed/libnvrtc.so.12").read_bytes()
MOD = (SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so").read_bytes()
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()


def _wheel(path: Path, members: dict[str, bytes], links: dict[str, str | bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            zf.writestr(info, target)
    return path


def _tar(members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:  # type: ignore[call-overload]
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                tf.addfile(info, io.BytesIO(m[1]))
    return buf.getvalue()


def _symlink(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _keys(report, inputs: list[str]) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return json.loads(dumps(report.findings, inputs, frozenset(report.packages)))["findings"]  # type: ignore[no-any-return]


def test_wheel_members_are_labelled_and_match_the_unpacked_tree(tmp_path: Path) -> None:
    members = {"pkg/lib/libtorch_cuda.so": BROKEN, "pkg/__init__.py": b"print(1)\n", "pkg-1.0.dist-info/RECORD": b""}
    whl = _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl", members)
    assert package_kind(str(whl)) == "zip"
    report = audit([str(whl)])
    assert [f.path for f in report.files] == [f"{whl}!pkg/lib/libtorch_cuda.so"]
    rules = {(f.rule, f.file) for f in report.findings}
    assert ("driver-link", f"{whl}!pkg/lib/libtorch_cuda.so") in rules
    assert ("missing-provider", f"{whl}!pkg/lib/libtorch_cuda.so") in rules
    assert all("linkaudit-" not in json.dumps(dict(f.evidence)) + f.message for f in report.findings)
    tree = tmp_path / "tree"
    (tree / "pkg/lib").mkdir(parents=True)
    (tree / "pkg/lib/libtorch_cuda.so").write_bytes(BROKEN)
    wheel_keys = [k for k in _keys(report, [str(whl)]) if k["rule"] != "linux-tag"]  # a tree has no tag
    # a wheel member is keyed under its wheel's target (one platform's entry never accepts another's)
    assert all(k["file"].startswith("py3-none-linux_x86_64:") for k in wheel_keys)
    untargeted = [{**k, "file": k["file"].partition(":")[2]} for k in wheel_keys]
    assert untargeted == _keys(audit([str(tree)]), [str(tree)])


def test_origin_resolves_inside_the_wheel_and_across_wheels_of_one_site(tmp_path: Path) -> None:
    """mod.so has RUNPATH $ORIGIN/lib: found when lib/libhelper.so ships in the same wheel, or in
    another wheel given with it (one virtual site-packages); missing when it ships nowhere."""
    alone = _wheel(tmp_path / "mod-1.0-cp311-cp311-linux_x86_64.whl", {"mod.cpython-311-x86_64-linux-gnu.so": MOD})
    helper = _wheel(tmp_path / "helper-1.0-py3-none-linux_x86_64.whl", {"lib/libhelper.so": HELPER})
    both = _wheel(
        tmp_path / "both-1.0-cp311-cp311-linux_x86_64.whl",
        {"mod.cpython-311-x86_64-linux-gnu.so": MOD, "lib/libhelper.so": HELPER},
    )
    missing = audit([str(alone)])
    (nf,) = [f for f in missing.findings if f.rule == "library-not-found"]
    assert nf.subject == "libhelper.so" and nf.file == f"{alone}!mod.cpython-311-x86_64-linux-gnu.so"
    assert "site-packages!lib/libhelper.so" in json.dumps(dict(nf.evidence))  # tried where no wheel installs
    errors = [f for f in audit([str(both)]).findings if f.severity.value == "error" and f.rule != "linux-tag"]
    assert errors == []
    site = audit([str(alone), str(helper)])
    assert [f for f in site.findings if f.rule == "library-not-found"] == []
    assert {f.path for f in site.files} == {
        f"{alone}!mod.cpython-311-x86_64-linux-gnu.so",
        f"{helper}!lib/libhelper.so",
    }
    assert [r.path for r in site.roots] == [f"{alone}!mod.cpython-311-x86_64-linux-gnu.so"]


def test_wheel_data_purelib_installs_at_the_root(tmp_path: Path) -> None:
    whl = _wheel(
        tmp_path / "w-1.0-py3-none-linux_x86_64.whl",
        {"w-1.0.data/platlib/lib/libhelper.so": HELPER, "w-1.0.data/scripts/tool": HELPER},
    )
    report = audit([str(whl)])
    assert [f.path for f in report.files] == [f"{whl}!lib/libhelper.so"]


def test_conda_packages_both_formats(tmp_path: Path) -> None:
    pkg_tar = _tar([("lib/libnvrtc.so.12", NVRTC), ("info/index.json", b'{"name": "nvrtc"}')], mode="w")
    conda = tmp_path / "nvrtc-12.0-0.conda"
    with zipfile.ZipFile(conda, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("metadata.json", b'{"conda_pkg_format_version": 2}')
        zf.writestr("pkg-nvrtc-12.0-0.tar.zst", zstandard.ZstdCompressor().compress(pkg_tar))
        zf.writestr("info-nvrtc-12.0-0.tar.zst", zstandard.ZstdCompressor().compress(_tar([], mode="w")))
    bz2 = tmp_path / "torch-cuda-1.0-0.tar.bz2"
    bz2.write_bytes(
        _tar([("lib/libtorch_cuda.so", BROKEN), ("info/index.json", b'{"name": "torch-cuda"}')], mode="w:bz2")
    )
    assert package_kind(str(conda)) == "zip" and package_kind(str(bz2)) == "tarball"
    report = audit([str(conda)])
    assert [f.path for f in report.files] == [f"{conda}!lib/libnvrtc.so.12"]
    report = audit([str(bz2)])
    assert [f.path for f in report.files] == [f"{bz2}!lib/libtorch_cuda.so"]
    assert any(f.rule == "driver-link" and f.file == f"{bz2}!lib/libtorch_cuda.so" for f in report.findings)


def _refusals(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.file: f.message for f in report.findings if f.rule == "unreadable-input"}


def test_hostile_zip_members_are_refused_and_the_rest_audited(tmp_path: Path) -> None:
    outside = tmp_path / "escaped.so"
    whl = _wheel(
        tmp_path / "evil-1.0-py3-none-any.whl",
        {
            "../escaped.so": HELPER,
            "/tmp/abs-evil.so": HELPER,
            "C:/evil.so": HELPER,
            "ok/libhelper.so": HELPER,
            "bomb/libzero.so": b"\x7fELF" + bytes(20 << 20),
        },
        # pip writes a member whose mode says symlink as a regular file holding the target text:
        # never a link here either (an ELF in such a member is audited, as pip installs it)
        links={"ok/libetc.so": "/etc/passwd", "ok/up.so": "../../../x.so", "ok/libelf.so": HELPER},
    )
    report = audit([str(whl)])
    refused = _refusals(report)
    assert any(k.endswith("!../escaped.so") and "climbs out" in v for k, v in refused.items())
    assert "absolute" in refused[f"{whl}!/tmp/abs-evil.so"] and "absolute" in refused[f"{whl}!C:/evil.so"]
    # never followed: named like libraries, they are what pip writes, text files the loader refuses
    assert refused[f"{whl}!ok/libetc.so"].startswith("a symlink in the zip (to '/etc/passwd'): pip installs it")
    assert refused[f"{whl}!ok/up.so"].startswith("a symlink in the zip (to '../../../x.so')")
    assert "decompression bomb" in refused[f"{whl}!bomb/libzero.so"]
    audited = sorted(f.path for f in report.files if f.status.value == "audited")
    assert audited == [f"{whl}!ok/libelf.so", f"{whl}!ok/libhelper.so"]
    assert not outside.exists() and not Path("/tmp/abs-evil.so").exists()


def test_hostile_tarballs(tmp_path: Path) -> None:
    """A symlinked directory then a file written through it; a hard link out; a device; a gzip bomb."""
    dev = tarfile.TarInfo("lib/null")
    dev.type = tarfile.CHRTYPE
    tarball = tmp_path / "evil.tar.gz"
    tarball.write_bytes(
        _tar(
            [
                _symlink("lib/dir", "../../.."),
                ("lib/dir/escaped.so", HELPER),
                _symlink("lib/hard.so", "../../etc/passwd", tarfile.LNKTYPE),
                dev,
                ("lib/libhelper.so", HELPER),
                ("lib/libzero.so", b"\x7fELF" + bytes(20 << 20)),
            ]
        )
    )
    report = audit([str(tarball)])
    refused = _refusals(report)
    assert "leaves the package" in refused[f"{tarball}!lib/dir"]
    assert "hard link" in refused[f"{tarball}!lib/hard.so"]
    assert refused[f"{tarball}!lib/null"] == "a device file"
    assert "decompression bomb" in refused[f"{tarball}!lib/libzero.so"]
    audited = sorted(f.path for f in report.files if f.status.value == "audited")
    assert audited == [f"{tarball}!lib/dir/escaped.so", f"{tarball}!lib/libhelper.so"]  # inside the package


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


@pytest.mark.parametrize(
    "root",
    [
        ["./", "./lib/"],  # GNU tar -C DIR .
        [".", "./lib"],  # Python's tarfile.add(DIR, arcname=".")
        ["./.", "././lib/"],
        [],
    ],
)
@pytest.mark.parametrize("suffix", [".tar.gz", ".tar.bz2"])
def test_tarballs_packed_from_their_root_are_audited_whole(tmp_path: Path, root: list[str], suffix: str) -> None:
    """``tar -C DIR .`` lists the root itself first (``./``): it installs nothing and is no escape
    (it was refused as "climbs out ... with '..'", exit 2); members under ``./`` are the package's."""
    prefix = root[-1].rstrip("/") + "/" if root else ""
    members: list[tarfile.TarInfo | tuple[str, bytes]] = [_dir(n) for n in root]
    members += [(f"{prefix}libhelper.so", HELPER), (f"{prefix}libnvrtc.so.12", NVRTC)]
    tarball = tmp_path / f"pkg-1.0-0{suffix}"
    tarball.write_bytes(_tar(members, mode="w:gz" if suffix == ".tar.gz" else "w:bz2"))
    report = audit([str(tarball)])
    assert _refusals(report) == {}
    where = "lib/" if root else ""
    assert sorted(f.path for f in report.files) == [
        f"{tarball}!{where}libhelper.so",
        f"{tarball}!{where}libnvrtc.so.12",
    ]


def test_a_file_member_naming_the_root_is_refused_in_its_own_words(tmp_path: Path) -> None:
    tarball = tmp_path / "odd.tar.gz"
    tarball.write_bytes(_tar([(".", HELPER), ("lib/libhelper.so", HELPER)]))
    report = audit([str(tarball)])
    assert _refusals(report) == {f"{tarball}!.": "a member that is not a directory but names the package's root itself"}
    assert [f.path for f in report.files if f.status.value == "audited"] == [f"{tarball}!lib/libhelper.so"]


def test_corrupt_and_truncated_archives_name_the_file(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "ok-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER, "lib/libnvrtc.so.12": NVRTC})
    data = whl.read_bytes()
    truncated = tmp_path / "truncated-1.0-py3-none-any.whl"
    truncated.write_bytes(data[: len(data) // 2])
    report = audit([str(truncated)])
    assert report.has_unreadable and str(truncated) in " ".join(_refusals(report))
    crc = tmp_path / "crc-1.0-py3-none-any.whl"
    raw = bytearray(data)
    raw[60] ^= 0xFF  # inside the first member's deflated data
    crc.write_bytes(bytes(raw))
    report = audit([str(crc)])
    assert "cannot be decompressed" in _refusals(report)[f"{crc}!lib/libhelper.so"]
    assert [f.path for f in report.files if f.status.value == "audited"] == [f"{crc}!lib/libnvrtc.so.12"]
    tgz = tmp_path / "cut.tar.gz"
    whole = _tar([("lib/libhelper.so", HELPER), ("lib/libnvrtc.so.12", NVRTC)])
    tgz.write_bytes(whole[: len(whole) * 2 // 3])
    report = audit([str(tgz)])
    assert any(k == str(tgz) and "truncated" in v for k, v in _refusals(report).items())


def test_staging_tree_is_private_and_removed(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "p-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER})
    with staged_inputs([str(whl), str(SAMPLES / "broken")]) as staged:
        (root,) = [p for p in staged.paths if p != str(SAMPLES / "broken")]
        assert staged.paths[1] == str(SAMPLES / "broken")
        assert os.stat(root).st_mode & 0o777 == 0o700
        assert staged.label(os.path.join(root, "lib/libhelper.so")) == f"{whl}!lib/libhelper.so"
        assert not os.access(os.path.join(root, "lib/libhelper.so"), os.X_OK)
    assert not os.path.exists(root)
    assert not [p for p in os.listdir(tempfile.gettempdir()) if p.startswith("linkaudit-") and p in root]


def test_two_wheels_writing_one_file_is_a_clash_not_an_unreadable_input(tmp_path: Path) -> None:
    """Same bytes: a note; other bytes: an error; the first copy is the one audited."""
    a = _wheel(tmp_path / "a-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER})
    b = _wheel(tmp_path / "b-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER})
    c = _wheel(tmp_path / "c-1.0-py3-none-any.whl", {"lib/libhelper.so": MOD})
    report = audit([str(a), str(b), str(c)])
    assert not report.has_unreadable
    clashes = {(f.file, f.severity.value) for f in report.findings if f.rule == "file-clash"}
    assert clashes == {(f"{b}!lib/libhelper.so", "note"), (f"{c}!lib/libhelper.so", "error")}
    assert [f.path for f in report.files] == [f"{a}!lib/libhelper.so"]


def test_cli_check_a_wheel_and_a_baseline_of_it(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl", {"pkg/lib/libtorch_cuda.so": BROKEN})
    r = run_cli("check", "--no-config", "pkg-1.0-py3-none-linux_x86_64.whl")
    assert r.exit_code == 1 and "pkg-1.0-py3-none-linux_x86_64.whl!pkg/lib/libtorch_cuda.so" in r.stdout
    wrote = run_cli("check", "--no-config", "--write-baseline", "base.json", "pkg-1.0-py3-none-linux_x86_64.whl")
    assert wrote.exit_code == 0 and "linkaudit: wrote 3 findings to base.json" in wrote.stderr
    doc = json.loads((tmp_path / "base.json").read_text())
    target = "py3-none-linux_x86_64:"  # a wheel member is keyed under its wheel's target
    assert {e["file"] for e in doc["findings"]} == {f"{target}pkg/lib/libtorch_cuda.so", f"{target}*.dist-info/WHEEL"}
    again = run_cli("check", "--no-config", "--baseline", "base.json", "pkg-1.0-py3-none-linux_x86_64.whl")
    assert again.exit_code == 0, again.stdout
    (tmp_path / "linkaudit.toml").write_text(
        '[[suppress]]\nrule = "driver-link"\nfile = "pkg/lib/*.so"\nreason = "dlopen()ed on GPU hosts only"\n'
    )
    shown = run_cli("check", "--show-suppressed", "pkg-1.0-py3-none-linux_x86_64.whl")
    assert "suppressed: dlopen()ed on GPU hosts only" in shown.stdout


def test_an_audit_config_sees_no_difference(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl", {"pkg/lib/libtorch_cuda.so": BROKEN})
    report = audit([str(whl)], AuditConfig(ignore=("driver-link", "linux-tag")))
    assert {f.rule for f in report.findings} == {"missing-provider"}


def test_parallel_decompression_gives_the_serial_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from linkaudit.packages import limits

    members = {f"pkg/lib/lib{i}.so": data for i, data in enumerate([BROKEN, NVRTC, HELPER, MOD] * 3)}
    members["pkg/lib/zero.so"] = b"\x7fELF" + bytes(20 << 20)  # refused on whichever thread
    whl = _wheel(tmp_path / "many-1.0-py3-none-linux_x86_64.whl", members)
    monkeypatch.setattr(limits, "WORKERS", 4)
    parallel = audit([str(whl)])
    monkeypatch.setattr(limits, "WORKERS", 1)
    serial = audit([str(whl)])
    assert parallel.files == serial.files and parallel.findings == serial.findings
    assert (
        sum(f.status.value == "audited" for f in serial.files) == 12
        and "decompression bomb" in _refusals(serial)[f"{whl}!pkg/lib/zero.so"]
    )


def test_a_wheels_platform_tag_implies_its_glibc_ceiling(tmp_path: Path) -> None:
    """A wheel tagged manylinux_2_5 promises glibc 2.5: its members needing more are reported, with
    the tag named; a looser --max-version of the same prefix does not relax it (pip installs the wheel
    where its tag says), a stricter one applies; a linux_x86_64 wheel promises nothing.  (The sample
    needs GLIBC_2.2.5 only, so the ceiling is tested from below: 2_1.)"""
    from linkaudit import VersionCeiling

    data = {"pkg/lib/libtorch_cuda.so": BROKEN}
    tagged = _wheel(tmp_path / "pkg-1.0-py3-none-manylinux_2_1_x86_64.manylinux1_x86_64.whl", data)
    plain = _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl", data)
    (finding,) = [f for f in audit([str(tagged)]).findings if f.rule == "symbol-version"]
    assert finding.subject == "GLIBC_2.2.5" and finding.evidence["ceiling"] == "GLIBC_2.1"
    assert finding.evidence["ceiling_source"] == f"the platform tag manylinux_2_1_x86_64 of {tagged}"
    assert "which the platform tag manylinux_2_1_x86_64" in finding.message
    assert [f for f in audit([str(plain)]).findings if f.rule == "symbol-version"] == []
    looser = AuditConfig(max_versions=(VersionCeiling.parse("GLIBC_2.34"),))
    (kept,) = [f for f in audit([str(tagged)], looser).findings if f.rule == "symbol-version"]
    assert kept.evidence["ceiling"] == "GLIBC_2.1" and "platform tag manylinux_2_1_x86_64" in kept.message
    stricter = AuditConfig(max_versions=(VersionCeiling.parse("GLIBC_2.0"),))
    (strict,) = [f for f in audit([str(tagged)], stricter).findings if f.rule == "symbol-version"]
    assert strict.evidence["ceiling"] == "GLIBC_2.0" and strict.evidence["ceiling_source"] == "configuration"
    assert [f for f in audit([str(plain)], looser).findings if f.rule == "symbol-version"] == []


@pytest.mark.parametrize(
    ("name", "tag", "ceilings"),
    [
        ("t-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl", "manylinux_2_28_x86_64", ("GLIBC_2.28", "GLIBCXX_3.4.24")),
        ("x-1-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "manylinux_2_17_x86_64", ("GLIBC_2.17",)),
        ("x-1-py3-none-manylinux_2_28_x86_64.manylinux1_x86_64.whl", "manylinux1_x86_64", ("GLIBC_2.5",)),
        ("x-1-1b-py3-none-manylinux_2_28_aarch64.whl", "manylinux_2_28_aarch64", ("GLIBC_2.28",)),
        ("dir/x-1-py3-none-manylinux2010_x86_64.whl", "manylinux2010_x86_64", ("GLIBC_2.12",)),
        ("x-1-py3-none-any.whl", None, ()),
        ("x-1-py3-none-musllinux_1_2_x86_64.whl", "musllinux_1_2_x86_64", ()),  # musl: no symbol versions
        ("x-1-py3-none-manylinux_2_28_x86_64.tar.bz2", None, ()),
        ("not-a-wheel.whl", None, ()),
    ],
)
def test_platform_tags(name: str, tag: str | None, ceilings: tuple[str, ...]) -> None:
    from linkaudit.config.profiles import implied_by_wheel

    got = implied_by_wheel(name)
    if tag is None:
        assert got is None
    else:
        assert got is not None and got.tag == tag and got.ceilings[: len(ceilings)] == ceilings
        if "aarch64" in tag:  # every architecture has its policy's ceilings (auditwheel's data)
            assert got.ceilings == (
                "GLIBC_2.28",
                "GLIBCXX_3.4.24",
                "CXXABI_1.3.11",
                "GCC_7.0.0",
                "LIBATOMIC_1.2",
                "ZLIB_1.2.9",
            )


def test_external_library_from_the_wheel_tag_or_the_profile(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """mod.so NEEDs libhelper.so. Found only outside the package (here through LD_LIBRARY_PATH, as a
    build container's /usr/lib would): not on the manylinux list, so an error naming where it was
    found; shipped in the wheel, or in another wheel given with it: fine."""
    helper_dir = str(SAMPLES / "loader/pyext/lib")
    tag = "manylinux_2_17_x86_64"
    alone = _wheel(tmp_path / f"mod-1.0-cp311-cp311-{tag}.whl", {"mod.cpython-311-x86_64-linux-gnu.so": MOD})
    r = run_cli("check", "--no-config", "--format", "json", "--ld-library-path", helper_dir, str(alone))
    (ext,) = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "external-library"]
    assert r.exit_code == 1 and ext["subject"] == "libhelper.so"
    assert ext["evidence"]["resolved"] == f"{helper_dir}/libhelper.so" and ext["evidence"]["policy"] == "manylinux_2_17"
    assert ext["evidence"]["policy_source"] == f"the platform tag {tag} of {alone}"
    assert "libc.so.6" in ext["evidence"]["allowed"]
    helper = _wheel(tmp_path / "helper-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER})
    r = run_cli("check", "--no-config", "--format", "json", str(alone), str(helper))  # RUNPATH $ORIGIN/lib
    assert [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "external-library"] == []
    # Not a manylinux wheel, no profile: no policy, no finding.
    plain = _wheel(tmp_path / "mod-1.0-cp311-cp311-linux_x86_64.whl", {"mod.cpython-311-x86_64-linux-gnu.so": MOD})
    r = run_cli("check", "--no-config", "--format", "json", "--ld-library-path", helper_dir, str(plain))
    assert [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "external-library"] == []
    # A directory with --profile: the profile's list applies; the inputs count as shipped.
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "mod.cpython-311-x86_64-linux-gnu.so").write_bytes(MOD)
    args = ("check", "--no-config", "--format", "json", "--ld-library-path", helper_dir, "--profile", "manylinux_2_28")
    r = run_cli(*args, str(tree))
    (ext,) = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "external-library"]
    assert ext["evidence"]["policy_source"] == "--profile manylinux_2_28"
    r = run_cli(*args, str(tree), helper_dir)
    assert [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "external-library"] == []


def test_diff_two_wheels(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The release-to-release view works on the wheel files: members paired by member path."""
    old = _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl", {"pkg/lib/libtorch_cuda.so": BROKEN})
    new = _wheel(
        tmp_path / "pkg-1.1-py3-none-linux_x86_64.whl",
        {
            "pkg/lib/libtorch_cuda.so": (SAMPLES / "fixed/libtorch_cuda.so").read_bytes(),
            "pkg/lib/libnvrtc.so.12": NVRTC,
        },
    )
    r = run_cli("diff", "--format", "json", str(old), str(new))
    doc = json.loads(r.stdout)
    assert doc["files_added"] == ["pkg/lib/libnvrtc.so.12"] and doc["files_removed"] == []
    (changed,) = doc["changed"]
    assert changed["file"] == "pkg/lib/libtorch_cuda.so"
    assert "libcuda.so.1" in changed["needed_removed"] and any(
        n.startswith("libnvrtc") for n in changed["needed_added"]
    )
    assert {f["rule"] for f in doc["findings_gone"]} >= {"driver-link", "missing-provider"}
    assert r.exit_code == 0


def test_show_tree_why_take_packages(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    whl = _wheel(
        tmp_path / "both-1.0-cp311-cp311-linux_x86_64.whl",
        {"mod.cpython-311-x86_64-linux-gnu.so": MOD, "lib/libhelper.so": HELPER},
    )
    shown = run_cli("show", str(whl))
    assert shown.exit_code == 0 and f"{whl}!lib/libhelper.so\n" in shown.stdout
    tree = run_cli("tree", str(whl))
    assert tree.exit_code == 0 and f"libhelper.so => {whl}!lib/libhelper.so [DT_RUNPATH" in tree.stdout
    assert "linkaudit-" not in tree.stdout
    doc = json.loads(run_cli("tree", "--format", "json", str(whl)).stdout)
    assert "linkaudit-" not in json.dumps(doc) and f"{whl}!mod.cpython-311-x86_64-linux-gnu.so" in json.dumps(doc)
    why = run_cli("why", str(whl), "libhelper.so")
    assert why.exit_code == 0 and f"=> {whl}!lib/libhelper.so" in why.stdout
    quoted = tmp_path / 'we"ird-1.0-py3-none-any.whl'
    quoted.write_bytes(whl.read_bytes())
    assert json.loads(run_cli("show", "--format", "json", str(quoted)).stdout)  # the label is escaped in JSON


def test_target_env_of_a_manylinux_wheel_is_its_policy(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libhelper.so is on this machine (here: in a system directory), not in the wheel. For a manylinux
    wheel the target is its users' machines: only the policy's system libraries are there, so
    the load fails (library-not-found, the attempt says why); --target-env host finds it (and
    external-library reports the dependency on this machine)."""
    helper_dir = str(SAMPLES / "loader/pyext/lib")
    whl = _wheel(
        tmp_path / "mod-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", {"mod.cpython-311-x86_64-linux-gnu.so": MOD}
    )
    base = ("check", "--no-config", "--format", "json", "--system-dir", helper_dir)  # libc: from ld.so.cache
    doc = json.loads(run_cli(*base, str(whl)).stdout)
    (nf,) = [f for f in doc["findings"] if f["rule"] == "library-not-found"]
    assert nf["subject"] == "libhelper.so" and nf["evidence"]["attempts"][-1]["outcome"] == "outside-target"
    assert "manylinux_2_28" in nf["evidence"]["attempts"][-1]["detail"]
    assert "system_libraries=manylinux_2_28_x86_64" in doc["config"]["loader"]
    assert not [f for f in doc["findings"] if f["rule"] == "external-library"]
    host = json.loads(run_cli(*base, "--target-env", "host", str(whl)).stdout)
    assert not [f for f in host["findings"] if f["rule"] == "library-not-found"]
    assert [f["subject"] for f in host["findings"] if f["rule"] == "external-library"] == ["libhelper.so"]
    # A plain directory stays on the host unless asked; asked without any policy: a usage error.
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "mod.cpython-311-x86_64-linux-gnu.so").write_bytes(MOD)
    plain = json.loads(run_cli(*base, str(tree)).stdout)
    assert not [f for f in plain["findings"] if f["rule"] == "library-not-found"]
    r = run_cli(*base, "--target-env", "policy", str(tree))
    assert r.exit_code == 2 and "--profile manylinux" in r.stderr
    r = run_cli(*base, "--target-env", "policy", "--profile", "manylinux_2_17", str(tree))
    assert [f["subject"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "library-not-found"] == [
        "libhelper.so"
    ]


def test_rpath_outside_package_names_the_package_that_installs_there(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from .output.schema import validate_report

    mod = {"mod.cpython-311-x86_64-linux-gnu.so": MOD}  # RUNPATH $ORIGIN/lib
    alone = _wheel(tmp_path / "mod-1.0-cp311-cp311-linux_x86_64.whl", mod)
    helper = _wheel(tmp_path / "helper-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER, "lib/README": b"x"})
    both = _wheel(tmp_path / "both-1.0-cp311-cp311-linux_x86_64.whl", {**mod, "lib/libhelper.so": HELPER})

    def notes(*inputs: Path) -> list[dict[str, object]]:
        doc = json.loads(run_cli("check", "--no-config", "--format", "json", *map(str, inputs)).stdout)
        validate_report(doc)
        return [f for f in doc["findings"] if f["rule"] == "rpath-outside-package"]

    (note,) = notes(alone)
    assert note["subject"] == "$ORIGIN/lib" and note["evidence"] == {
        "entry": "$ORIGIN/lib", "tag": "DT_RUNPATH", "points_to": "lib",
        "members": [f"{alone}!mod.cpython-311-x86_64-linux-gnu.so"],
    }  # fmt: skip
    assert "which no package given installs" in str(note["message"])
    assert notes(alone, helper) == []  # another package given installs lib/: no note, as in their site
    assert notes(both) == []
    assert notes(SAMPLES / "loader/pyext") == []
    twins = _wheel(
        tmp_path / "twins-1.0-cp311-cp311-linux_x86_64.whl", {**mod, "mod2.cpython-311-x86_64-linux-gnu.so": MOD}
    )
    (note,) = notes(twins)  # one note per package and entry, naming every member that carries it
    assert len(note["evidence"]["members"]) == 2 and "carried by 2 members" in str(note["message"])  # type: ignore[index]  # files and directories: no package, no such note


def test_progress_is_told_the_bytes_and_the_cli_draws_none_off_a_terminal(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    class Recorder:
        def __init__(self) -> None:
            self.expected = self.written = 0

        def expect(self, nbytes: int) -> None:
            self.expected += nbytes

        def advance(self, nbytes: int) -> None:
            self.written += nbytes

    members = {"pkg/lib/libtorch_cuda.so": BROKEN, "pkg/lib/libnvrtc.so.12": NVRTC, "pkg/x.py": b"pass\n"}
    whl = _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl", members)
    recorder = Recorder()
    audit([str(whl)], progress=recorder)
    assert recorder.expected == recorder.written == len(BROKEN) + len(NVRTC)  # binaries only
    r = run_cli("check", "--no-config", str(whl))  # stderr is not a terminal here
    assert "decompressing" not in r.stderr and "\r" not in r.stderr


def test_a_directory_of_packages_audits_them_with_version_free_fingerprints(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`check wheelhouse/` must not pass quietly as "no binaries": the wheels in it are audited, and
    a baseline written for 1.0 matches 1.1 (the member paths, not the wheel's versioned name)."""
    house = tmp_path / "wheelhouse"
    house.mkdir()
    old = _wheel(house / "pkg-1.0-py3-none-linux_x86_64.whl", {"pkg/lib/libtorch_cuda.so": BROKEN})
    (house / "notes.txt").write_text("not a package\n")
    r = run_cli("check", "--no-config", str(house))
    assert r.exit_code == 1 and f"{old}!pkg/lib/libtorch_cuda.so" in r.stdout and "no-binaries" not in r.stdout
    base = tmp_path / "base.json"
    assert run_cli("check", "--no-config", "--write-baseline", str(base), str(house)).exit_code == 0
    old.rename(house / "pkg-1.1-py3-none-linux_x86_64.whl")
    again = run_cli("check", "--no-config", "--baseline", str(base), str(house))
    assert again.exit_code == 0, again.stdout
    assert "pkg-1.1-py3-none-linux_x86_64.whl!pkg/lib/libtorch_cuda.so" in run_cli("show", str(house)).stdout


def test_external_library_sees_a_dependency_shipped_by_another_wheel_through_dotdot(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libroot.so has RUNPATH $ORIGIN/../deps: from pkg/real/ that is pkg/deps/, which the second
    wheel ships.  The path the loader takes (pkg/real/../deps/libdep.so) is the shipped file:
    no external-library, and every label is normalised to the wheel that ships it."""
    root = (SAMPLES / "loader/origin_symlink/pkg/real/libroot.so").read_bytes()
    dep = (SAMPLES / "loader/origin_symlink/deps/libdep.so").read_bytes()
    a = _wheel(tmp_path / "a-1.0-py3-none-manylinux_2_17_x86_64.whl", {"pkg/real/libroot.so": root})
    b = _wheel(tmp_path / "b-1.0-py3-none-manylinux_2_17_x86_64.whl", {"pkg/deps/libdep.so": dep})
    r = run_cli("check", "--no-config", "--format", "json", "--target-env", "host", str(a), str(b))
    doc = json.loads(r.stdout)
    assert [f for f in doc["findings"] if f["rule"] in ("external-library", "library-not-found")] == []
    tree = run_cli("tree", str(a), str(b)).stdout
    assert f"libdep.so => {b}!pkg/deps/libdep.so" in tree and "/../" not in tree


def test_entries_name_package_members(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """An import root inside a wheel: `--entry WHEEL!member`, or the member path as installed —
    also from a linkaudit.toml beside the wheel, audited from another directory."""
    project = tmp_path / "project"
    project.mkdir()
    whl = _wheel(
        project / "both-1.0-cp311-cp311-linux_x86_64.whl",
        {"mod.cpython-311-x86_64-linux-gnu.so": MOD, "lib/libhelper.so": HELPER},
    )
    member = f"{whl}!lib/libhelper.so"
    for entry in (member, "lib/libhelper.so"):
        doc = json.loads(run_cli("check", "--no-config", "--format", "json", "--entry", entry, str(whl)).stdout)
        assert [r["path"] for r in doc["roots"] if r["reached"]] == [member], entry
        assert not [f for f in doc["findings"] if f["rule"] == "unreadable-input"]
    (project / "linkaudit.toml").write_text('entries = ["lib/libhelper.so"]\n')
    monkeypatch.chdir(tmp_path)
    doc = json.loads(run_cli("check", "--config", "project/linkaudit.toml", "--format", "json", str(whl)).stdout)
    assert [r["path"] for r in doc["roots"] if r["reached"]] == [member]
    tree = run_cli("tree", "--entry", "lib/libhelper.so", str(whl))
    assert tree.exit_code == 0 and tree.stdout.startswith(f"{member} [")


def test_why_over_several_wheels(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    alone = _wheel(tmp_path / "mod-1.0-cp311-cp311-linux_x86_64.whl", {"mod.cpython-311-x86_64-linux-gnu.so": MOD})
    helper = _wheel(tmp_path / "helper-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER})
    r = run_cli("why", str(alone), str(helper), "libhelper.so")
    assert r.exit_code == 0 and f"=> {helper}!lib/libhelper.so [DT_RUNPATH" in r.stdout


def test_special_files_named_like_packages_are_not_waited_on(tmp_path: Path) -> None:
    """A FIFO named x.whl in a directory given, or given itself: never opened for reading (no hang);
    a directory named y.whl is walked as a directory."""
    import os as _os

    fifo = tmp_path / "x.whl"
    _os.mkfifo(fifo)
    (tmp_path / "y.whl").mkdir()
    (tmp_path / "y.whl" / "libhelper.so").write_bytes(HELPER)
    report = audit([str(tmp_path)])
    assert [f.path for f in report.files if f.status.value == "audited"] == [str(tmp_path / "y.whl" / "libhelper.so")]
    report = audit([str(fifo)])
    assert report.has_unreadable and "not a regular file" in report.findings[0].message


def test_many_small_members_cannot_add_up_to_a_bomb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each member under the per-member ratio check (1 MiB), together far above the package's
    budget (MAX_RATIO x its size, at least PACKAGE_FLOOR — lowered here to 4 MiB): the members past
    the budget are refused, and the tree never holds more than it."""
    from linkaudit.packages import limits

    monkeypatch.setattr(limits, "PACKAGE_FLOOR", 4 << 20)
    members = {f"lib/lib{i}.so": b"\x7fELF" + bytes(900 << 10) for i in range(12)}
    whl = _wheel(tmp_path / "bomb-1.0-py3-none-any.whl", members)
    assert whl.stat().st_size * limits.MAX_RATIO < 4 << 20
    report = audit([str(whl)])
    refused = [k for k, v in _refusals(report).items() if "times its size" in v]
    assert len(refused) >= 7  # 12 x 0.9 MiB against 4 MiB


def test_sigterm_mid_staging_removes_the_tree_and_exits_143(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """A CI timeout sends SIGTERM: the handler unwinds like Ctrl-C, every finally runs (the staging
    tree goes), and the exit status is 128 + 15."""
    import signal
    import tempfile as _tempfile

    from linkaudit import cli

    monkeypatch.setattr(_tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    whl = _wheel(tmp_path / "pkg-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER, "lib/libnvrtc.so.12": NVRTC})

    class Killer:
        def expect(self, nbytes: int) -> None:
            pass

        def advance(self, nbytes: int) -> None:
            assert list((tmp_path / "tmp").iterdir())  # staging under way
            cli._terminate(signal.SIGTERM, None)

        def close(self) -> None:
            pass

    with pytest.raises(KeyboardInterrupt):
        audit([str(whl)], progress=Killer())
    assert list((tmp_path / "tmp").iterdir()) == []
    monkeypatch.setattr("linkaudit.cli.check.stderr_progress", lambda quiet: Killer())
    r = run_cli("check", "--no-config", str(whl))
    assert r.exit_code == 143 and "interrupted (SIGTERM)" in r.stderr
    assert list((tmp_path / "tmp").iterdir()) == []


def test_hostile_archives_of_the_second_round(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each a kind a hostile-input run found: a thin archive (members read from the host), an ELF
    stub with a wheel behind it, a decompression bomb in a member that is never written, duplicate
    names (installers keep the last), a corrupt header mid-stream, a name too long for the file
    system, a symlink with an empty target — every one named, the rest audited, exit 2 not 3."""
    from linkaudit import packages
    from linkaudit.packages import limits

    # thin archive: refused, the host file it names is never read
    thin = b"!<thin>\n" + b"/etc/hostname/   0           0     0     644     10        `\n"
    whl = _wheel(tmp_path / "thin-1.0-py3-none-any.whl", {"lib/libthin.a": thin, "lib/libhelper.so": HELPER})
    report = audit([str(whl)])
    assert "thin archive" in _refusals(report)[f"{whl}!lib/libthin.a"]
    assert [f.path for f in report.files if f.status.value == "audited"] == [f"{whl}!lib/libhelper.so"]

    # an ELF stub with a zip appended, named .whl: pip reads the zip, so do we
    inner = _wheel(tmp_path / "inner.zip", {"evil/libtorch_cuda.so": BROKEN})
    poly = tmp_path / "good-1.0-py3-none-any.whl"
    poly.write_bytes(HELPER + inner.read_bytes())
    assert packages.package_kind(str(poly)) == "zip"
    assert any(f.rule == "driver-link" for f in audit([str(poly)]).findings)

    # a bomb in a non-binary member: capped on bytes decompressed, not written
    monkeypatch.setattr(limits, "PACKAGE_FLOOR", 1 << 20)
    bomb = tmp_path / "bomb.tar.gz"
    bomb.write_bytes(_tar([("doc/zeros.txt", bytes(30 << 20)), ("lib/libhelper.so", HELPER)]))
    assert "decompresses to more than" in _refusals(audit([str(bomb)]))[str(bomb)]
    monkeypatch.setattr(limits, "PACKAGE_FLOOR", 64 << 20)

    # duplicate names: the last copy is audited (as tar -x and pip keep it), and the duplicate named
    for dup in (tmp_path / "dup.tar.xz", tmp_path / "dup-1.0-py3-none-any.whl"):
        if dup.suffix == ".xz":
            dup.write_bytes(_tar([("lib/libx.so", NVRTC), ("lib/libx.so", BROKEN)], mode="w:xz"))
        else:
            with zipfile.ZipFile(dup, "w") as zf, pytest.warns(UserWarning):
                zf.writestr("lib/libx.so", NVRTC)
                zf.writestr("lib/libx.so", BROKEN)
        report = audit([str(dup)])
        clash = {f.file: f.message for f in report.findings if f.rule == "file-clash"}
        assert "installers keep the last copy" in clash[f"{dup}!lib/libx.so"] and not _refusals(report), dup
        assert any(f.rule == "driver-link" for f in report.findings), dup  # the broken, last copy

    # a corrupt header in the middle: tarfile stopped there quietly; we name its byte
    good = _tar([("lib/a.so", HELPER), ("lib/b.so", NVRTC), ("lib/c.so", BROKEN)], mode="w")
    raw = bytearray(good)
    second = raw.find(b"lib/b.so")
    raw[second + 148 : second + 156] = b"0000000\0"  # a wrong header checksum
    corrupt = tmp_path / "corrupt.tar"
    corrupt.write_bytes(bytes(raw))
    said = _refusals(audit([str(corrupt)]))[str(corrupt)]
    assert f"the member header at byte {second} is corrupt" in said, said

    # a name too long for the file system, an empty symlink target, a colon in a name
    long_name = "lib/" + "x" * 300 + ".so"
    odd = tmp_path / "odd.tar"
    odd.write_bytes(_tar([(long_name, HELPER), _symlink("lib/empty.so", ""), ("lib/x:y.so", HELPER)], mode="w"))
    report = audit([str(odd)])
    refused = _refusals(report)
    assert "cannot be written here" in refused[f"{odd}!{long_name}"]
    assert "empty target" in refused[f"{odd}!lib/empty.so"]
    assert [f.path for f in report.files if f.status.value == "audited"] == [f"{odd}!lib/x:y.so"]


def test_one_package_given_twice_is_staged_once(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "p-1.0-py3-none-any.whl", {"lib/libhelper.so": HELPER})
    link = tmp_path / "alias-1.0-py3-none-any.whl"
    link.symlink_to(whl.name)
    report = audit([str(whl), f"{tmp_path}/./{whl.name}", str(link), str(whl)])
    assert not report.has_unreadable, _refusals(report)
    assert [f.path for f in report.files] == [f"{whl}!lib/libhelper.so"]


def test_labels_keep_member_names_with_spaces_quotes_and_brackets(tmp_path: Path) -> None:
    names = ["lib/a b.so", "lib/q'uote.so", "lib/(p)[b]{c}.so"]
    whl = _wheel(tmp_path / "odd-1.0-py3-none-any.whl", dict.fromkeys(names, HELPER))
    report = audit([str(whl)])
    assert sorted(f.path for f in report.files) == sorted(f"{whl}!{n}" for n in names)
    assert all(f.file.startswith(f"{whl}!lib/") for f in report.findings)


def test_a_symlink_member_whose_name_is_taken_is_said_not_dropped(tmp_path: Path) -> None:
    """``lib/libx.so`` then a symlink of the same name (tar -x keeps the last), and a symlink ``lib``
    -> ``.`` over a directory files were written into: the links were dropped without a word."""
    tarball = tmp_path / "taken.tar.gz"
    tarball.write_bytes(
        _tar(
            [
                ("lib/libx.so", HELPER),
                ("lib/liby.so", HELPER),
                _symlink("lib/libx.so", "liby.so"),
                _symlink("sub", "."),
                ("sub/sub/libz.so", HELPER),
            ]
        )
    )
    report = audit([str(tarball)])
    refused = _refusals(report)
    assert set(refused) == {f"{tarball}!lib/libx.so", f"{tarball}!sub"}
    assert all("a symlink member of a name a file or directory member also has" in m for m in refused.values())
    audited = sorted(f.path for f in report.files if f.status.value == "audited")
    assert audited == [f"{tarball}!lib/liby.so", f"{tarball}!sub/sub/libz.so"]  # the taken name: as SECOND_COPY


def test_staged_tar_members_are_not_opened_again_to_be_sniffed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stager sniffed each member as it wrote it (``Staged.sniffed``): the walk opens none of
    them again (issue 14 §1: one open and read a member less), only what it did not write (a
    symlink's name); the report is the one of a walk that sniffs everything itself."""
    from linkaudit import inputs

    members: list[tarfile.TarInfo | tuple[str, bytes]] = [(f"lib/d{i % 3}/lib{i}.so", HELPER) for i in range(30)]
    members += [("lib/libnvrtc.so.12", NVRTC), ("share/readme.txt", b"text"), _symlink("lib/libalias.so", "d0/lib0.so")]
    tarball = tmp_path / "many.tar.gz"
    tarball.write_bytes(_tar(members))
    opened: list[str] = []
    real = inputs._sniff_file
    monkeypatch.setattr(inputs, "_sniff_file", lambda path: opened.append(path) or real(path))
    report = audit([str(tarball)])
    assert len(opened) == 1 and opened[0].endswith("lib/libalias.so"), opened
    real_collect = inputs.collect
    monkeypatch.setattr(sys.modules["linkaudit.audit"], "collect", lambda paths, sniffed=None: real_collect(paths))
    opened.clear()
    plain = audit([str(tarball)])
    assert len(opened) == 32
    assert [(f.path, f.status, f.format) for f in report.files] == [(f.path, f.status, f.format) for f in plain.files]
    assert [f.message for f in report.findings] == [f.message for f in plain.findings]


@pytest.mark.parametrize(
    "name",
    ["trunc-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "text-1.0-py3-none-any.whl", "garbage-1.0-0.conda"],
)
def test_a_package_that_is_not_an_archive_is_named_so_and_nothing_else(tmp_path: Path, name: str) -> None:
    """A truncated wheel, a text file named ``.whl``, random bytes named ``.conda``: one error, "not a
    readable zip archive" (was "not a binary (no ELF ... magic)" for the last two), and no
    ``no-binaries`` warning telling a truncated platform wheel to retag itself ``py3-none-any``."""
    whole = io.BytesIO()
    with zipfile.ZipFile(whole, "w") as zf:
        zf.writestr("pkg/libhelper.so", HELPER)
    data = {"trunc": whole.getvalue()[:-30], "text": b"hello\n", "garbage": os.urandom(3000)}[name.split("-")[0]]
    for where in (tmp_path / name, tmp_path / "dist" / name):  # given, or found in a directory
        where.parent.mkdir(exist_ok=True)
        where.write_bytes(data)
        report = audit([str(where.parent if where.parent.name == "dist" else where)])
        assert [(f.rule, f.file) for f in report.findings] == [("unreadable-input", str(where))], report.findings
        assert "not a readable zip archive" in report.findings[0].message


def test_member_names_too_long_or_too_deep_for_any_file_system_are_refused(tmp_path: Path) -> None:
    """Each directory above a member is recorded by its path: names 20,000 levels deep cost n²/2
    characters (8 of them in a 642 KB wheel: 1.95 GB, exit 3). Past PATH_MAX (which bounds the
    depth too) a name is refused by name; the good member beside them is audited."""
    from linkaudit.packages import limits

    deep = "/".join(["d"] * (limits.MAX_NAME_DEPTH + 1)) + "/x.so"  # 4,103 bytes
    long = "lib/" + "y" * 250 + "/" + "z" * 4000 + ".so"
    wheel = tmp_path / "deep-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(deep, HELPER)
        zf.writestr(long, HELPER)
        zf.writestr("pkg/libhelper.so", HELPER)
    report = audit([str(wheel)])
    refused = _refusals(report)
    assert "longer than a path may be" in refused[f"{wheel}!{deep}"]
    assert "longer than a path may be" in refused[f"{wheel}!{long}"]
    assert [f.path for f in report.files if f.status.value == "audited"] == [f"{wheel}!pkg/libhelper.so"]
    from linkaudit.packages.metadata import record_paths

    assert record_paths(f"{deep},,\n{long},,\npkg/libhelper.so,,\n") == ("pkg/libhelper.so",)


@pytest.mark.parametrize("suffix", [".tar", "-1.0-py3-none-any.whl"])
def test_a_member_that_held_no_library_replaced_by_a_later_copy_is_a_second_copy(tmp_path: Path, suffix: str) -> None:
    """``tar -r`` appends a fixed copy after a broken one: the last is installed and audited; the
    first is the duplicate, not an unreadable library (was: "holds text with no ELF ... header"
    about the copy no installer keeps)."""
    name = "lib/libsharpyuv.so.0"
    package = tmp_path / f"dup{suffix}"
    if suffix == ".tar":
        package.write_bytes(_tar([(name, b"garbage\n"), (name, HELPER)], mode="w"))
    else:
        with zipfile.ZipFile(package, "w") as zf, pytest.warns(UserWarning):
            zf.writestr(name, b"garbage\n")
            zf.writestr(name, HELPER)
    report = audit([str(package)])
    assert _refusals(report) == {}  # the file is read (its last copy): no unreadable input
    clash = [f for f in report.findings if f.rule == "file-clash"]
    assert [(f.file, f.severity.value) for f in clash] == [(f"{package}!{name}", "error")]
    assert "holds 2 members named" in clash[0].message
    assert [(f.path, f.status.value) for f in report.files] == [(f"{package}!{name}", "audited")]
    # nothing of the text copy (the kept copy, a library in a pure wheel, is a wheel-architecture note)
    assert [f.rule for f in report.findings if f.rule != "wheel-architecture"] == ["file-clash"]
