"""Installed sites (a directory holding ``*.dist-info``) and unzipped wheels: the target comes from
the distributions' tags (the most demanding one), nothing outside the site counts but what that
policy's system provides, and the host only with ``--target-env host`` — then every library found
outside the inputs is listed with its source.  A plain build tree stays on the host, with one line
counting what was found outside it."""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from output.schema import validate_report
from samplewheels import sample_write_wheel

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.output import OutputFormat, renderer
from linkaudit.packages import find_site, most_demanding
from linkaudit.report import Report

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
PYEXT = SAMPLES / "loader/pyext"
NEWGLIBC = SAMPLES / "misc/libnewglibc.so"  # getrandom@GLIBC_2.25, reallocarray@GLIBC_2.26
CP311 = SAMPLES / "wheels/dist/pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
HOST_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib")


def _dist_info(site: Path, name: str, tag: str, files: list[str]) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in [*files, f"{info.name}/RECORD"]))


def _site_missing_its_provider(tmp_path: Path) -> tuple[Path, Path]:
    """A site whose ``pkg/mod...so`` NEEDs libhelper.so, which no distribution installed ships
    (RUNPATH $ORIGIN/lib finds nothing); the library is in a system directory of this machine."""
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg")
    _dist_info(site, "pkg", "cp311-cp311-manylinux_2_28_x86_64", ["pkg/mod.cpython-311-x86_64-linux-gnu.so"])
    _dist_info(site, "pure", "py3-none-any", [])
    _dist_info(site, "old", "py3-none-manylinux2014_x86_64", [])
    host = tmp_path / "hostlib"
    host.mkdir()
    shutil.copy(PYEXT / "lib/libhelper.so", host)
    return site, host


def _config(host: Path, target_env: str = "auto") -> AuditConfig:
    return AuditConfig(target=TargetEnvironment(system_dirs=(str(host), *HOST_DIRS)), target_env=target_env)


def test_a_library_only_the_host_has_is_not_found_in_a_site(tmp_path: Path) -> None:
    site, host = _site_missing_its_provider(tmp_path)
    module = site / "pkg"
    # a plain directory (no site): the host counts, as today — and one line says what came from it
    plain = tmp_path / "plain"
    shutil.copytree(module, plain)
    tree = audit([str(plain)], _config(host))
    assert "library-not-found" not in {f.rule for f in tree.findings}
    outside = tree.config["outside_inputs"]
    assert {"path": str(host / "libhelper.so"), "source": "system-directory"} in outside
    text = renderer(OutputFormat.TEXT)(tree)
    assert f"{len(outside)} libraries resolved outside the inputs: {len(outside)} on this machine (" in text
    assert str(host / "libhelper.so") not in text  # a build tree: counted, not listed
    # the same module inside a site (given as DIR/pkg): the policy of its most demanding tag
    report = audit([str(module)], _config(host))
    missing = [f for f in report.findings if f.rule == "library-not-found"]
    assert [f.subject for f in missing] == ["libhelper.so"] and missing[0].severity.value == "error"
    (note,) = report.config["sites"]
    assert note["root"] == str(site) and note["distributions"] == 3
    assert note["target_tag"] == "cp311-cp311-manylinux_2_28_x86_64" and note["policy"] == "manylinux_2_28_x86_64"
    assert "outside_inputs" not in report.config
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))
    # --target-env host: found on this machine, and listed with its source
    host_run = audit([str(module)], _config(host, "host"))
    assert "library-not-found" not in {f.rule for f in host_run.findings}
    text = renderer(OutputFormat.TEXT)(host_run)
    assert f"  {host / 'libhelper.so'} (system-directory)" in text
    assert "the libraries of this machine count (--target-env host)" in text


def test_the_most_demanding_tag_sets_the_target() -> None:
    site = find_site(str(SAMPLES))
    assert site is None
    from linkaudit.packages.metadata import Distribution, wheel_tags

    dists = tuple(
        Distribution(n, "1", f"{n}.dist-info", wheel_tags(f"Tag: {t}\n"))
        for n, t in (
            ("torch", "cp311-cp311-manylinux_2_28_x86_64"),
            ("nvtx", "py3-none-manylinux1_x86_64.manylinux_2_5_x86_64"),
            ("cublas", "py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64"),
            ("pure", "py3-none-any"),
        )
    )
    demanding = most_demanding(dists)
    assert demanding is not None and demanding.name == "torch"
    assert most_demanding(dists[3:]) is None


def test_a_site_of_pure_wheels_says_its_target_is_unknown(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    shutil.copy(PYEXT / "lib/libhelper.so", site / "pkg")
    _dist_info(site, "pure", "py3-none-any", ["pkg/libhelper.so"])
    report = audit([str(site)])
    assert report.config["sites"][0]["target_tag"] is None
    assert "the target is unknown (give --profile" in renderer(OutputFormat.TEXT)(report)


def test_an_unzipped_wheel_gets_the_checks_its_tags_imply(tmp_path: Path) -> None:
    """The tags of ``*.dist-info/WHEEL`` give an unzipped wheel the ceilings of its platform
    tag, as the wheel file gets them from its name (they were lost)."""
    whl = tmp_path / "newer-1.0-py3-none-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("newer/libnewglibc.so", NEWGLIBC.read_bytes())
        zf.writestr("newer-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: py3-none-manylinux_2_17_x86_64\n")
        zf.writestr("newer-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: newer\nVersion: 1.0\n")
    unzipped = tmp_path / "unzipped"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(unzipped)
    packed = audit([str(whl)])
    tree = audit([str(unzipped)])
    wanted = {(f.rule, f.subject) for f in packed.findings if f.rule == "symbol-version"}
    assert wanted and {("symbol-version", "GLIBC_2.26")} <= wanted
    assert {(f.rule, f.subject) for f in tree.findings if f.rule == "symbol-version"} == wanted
    # without the dist-info, a plain tree: no tag, no such ceiling
    shutil.rmtree(unzipped / "newer-1.0.dist-info")
    assert not {f.subject for f in audit([str(unzipped)]).findings if f.rule == "symbol-version"} & {"GLIBC_2.26"}


@pytest.mark.parametrize("given", ["root", "package"])
def test_an_unzipped_sample_wheel_is_one_site(tmp_path: Path, given: str) -> None:
    with zipfile.ZipFile(CP311) as zf:
        zf.extractall(tmp_path)
    site = find_site(str(tmp_path if given == "root" else tmp_path / "pkg"))
    assert site is not None and [d.name for d in site.distributions] == ["pkg"]
    owner = site.owner_of(str(tmp_path / "pkg.libs/libhelper.so"))
    assert owner is not None and owner.name == "pkg" and owner.version == "1.0"
    report = audit([str(tmp_path / "pkg")], replace(AuditConfig(), target_env="auto"))
    assert not [f for f in report.findings if f.severity.value == "error"]


def test_an_rpath_into_another_package_given_is_judged_alike_in_wheels_and_their_site(tmp_path: Path) -> None:
    """torch's ``$ORIGIN/../../nvidia/cu13/lib`` beside the NVIDIA wheel that installs it: the wheels
    gave 14 rpath-outside-package notes that the installed site of the same files did not.  Here:
    mod's RUNPATH ``$ORIGIN/lib`` leads into ``lib/``, which the helper wheel installs — given as
    two wheels or installed (unzipped, RECORD and all) into one site, the same findings: none for
    it; the same note for ``pkg/sub...so``, whose ``$ORIGIN/lib`` leads into pkg/lib/, where mod
    installs nothing (the site said nothing of it: a stale entry, as torch/bin/protoc's ``$ORIGIN/../lib64``)."""
    write_wheel = sample_write_wheel()
    mod_so = "mod.cpython-311-x86_64-linux-gnu.so"
    wheels = tmp_path / "dist"
    wheels.mkdir()
    mod = wheels / "mod-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    helper = wheels / "helper-1.0-py3-none-manylinux2014_x86_64.whl"
    members = {mod_so: (PYEXT / mod_so).read_bytes(), f"pkg/sub{mod_so[3:]}": (PYEXT / mod_so).read_bytes()}
    write_wheel(mod, members, "mod-1.0.dist-info", "Name: mod\nVersion: 1.0\n", [
        "cp311-cp311-manylinux_2_17_x86_64"
    ])  # fmt: skip
    write_wheel(helper, {"lib/libhelper.so": (PYEXT / "lib/libhelper.so").read_bytes()}, "helper-1.0.dist-info",
                "Name: helper\nVersion: 1.0\n", ["py3-none-manylinux2014_x86_64"])  # fmt: skip
    site = tmp_path / "site"
    for wheel in (mod, helper):
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)

    def judged(report: Report, prefix: str) -> list[tuple[str, str, str, str]]:
        return sorted(
            (f.rule, f.subject, f.file.removeprefix(prefix).split("!")[-1], f.message)
            for f in report.findings
            if f.rule in ("rpath-outside-package", "library-not-found")
        )

    as_wheels = judged(audit([str(wheels)]), "")
    assert as_wheels == judged(audit([str(site)]), f"{site}/")
    assert [(rule, member) for rule, _s, member, _m in as_wheels] == [("rpath-outside-package", f"pkg/sub{mod_so[3:]}")]
    assert "points to pkg/lib/, inside the package's own directories" in as_wheels[0][3]
    # without the helper: the wheel says the load relies on a package not given
    alone = audit([str(mod)])
    assert sorted(f.file.split("!")[-1] for f in alone.findings if f.rule == "rpath-outside-package") == [
        mod_so,
        f"pkg/sub{mod_so[3:]}",
    ]


def test_a_library_its_record_lists_but_the_site_lacks_is_a_damaged_installation(tmp_path: Path) -> None:
    """pkg's RECORD lists pkg/lib/libhelper.so (where its RUNPATH $ORIGIN/lib looks), deleted since:
    the finding says the installation is damaged, not that a dependency is undeclared."""
    site = tmp_path / "site"
    (site / "pkg/lib").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg")
    files = ["pkg/mod.cpython-311-x86_64-linux-gnu.so", "pkg/lib/libhelper.so"]
    _dist_info(site, "pkg", "cp311-cp311-manylinux_2_28_x86_64", files)
    report = audit([str(site)], AuditConfig(target=TargetEnvironment(system_dirs=HOST_DIRS)))
    (f,) = [f for f in report.findings if f.rule == "library-not-found" and f.subject == "libhelper.so"]
    assert (
        f"{site}/pkg/lib/libhelper.so is listed in pkg's RECORD but is not there: a damaged installation" in f.message
    )
    assert "pip install --force-reinstall pkg" in f.message


@pytest.mark.parametrize("given", ["venv", "venv/lib"])
def test_a_venv_given_by_its_root_is_its_site(tmp_path: Path, given: str) -> None:
    """``check .venv`` (or ``.venv/lib``) judges the site as ``check .venv/lib/python3.11/site-packages``
    does: the most demanding tag's policy, so a library only the host has is not found (it was
    found on this machine: the venv root was a plain directory, two errors missed); ``bin/python``,
    a link to the base interpreter outside the venv, is not audited (its RUNPATH was an rpath-leak)."""
    site, host = _site_missing_its_provider(tmp_path)
    venv = tmp_path / "venv"
    (venv / "lib/python3.11").mkdir(parents=True)
    shutil.move(str(site), venv / "lib/python3.11/site-packages")
    (venv / "lib64").symlink_to("lib")  # as python -m venv makes it: one site, not two
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin").mkdir()
    (venv / "bin/python").symlink_to(SAMPLES / "misc/libleak.so")  # the base interpreter: not the venv's
    shutil.copy(SAMPLES / "misc/libleak.so", venv / "bin/python3.11")  # as `python -m venv --copies` makes it
    expected = audit([str(venv / "lib/python3.11/site-packages")], _config(host))
    report = audit([str(tmp_path / given)], _config(host))
    (note,) = report.config["sites"]
    assert note["root"] == str(venv / "lib/python3.11/site-packages") and note["policy"] == "manylinux_2_28_x86_64"
    assert [f.subject for f in report.findings if f.rule == "library-not-found"] == ["libhelper.so"]
    assert [(f.rule, f.subject) for f in report.findings] == [(f.rule, f.subject) for f in expected.findings]


def test_a_prefix_is_taken_to_hold_a_few_sites_at_most(tmp_path: Path) -> None:
    """2,000 ``python3.N`` directories sharing one dist-info through symlinks ran out of memory
    (exit 3): a prefix holds at most ``MAX_SITES_BELOW`` sites, each read once."""
    from linkaudit.packages.site import MAX_SITES_BELOW, sites_below

    shared = tmp_path / "shared"
    _dist_info(shared, "pkg", "py3-none-any", [])
    for minor in range(30):
        site = tmp_path / "prefix" / "lib" / f"python3.{minor}" / "site-packages"
        site.mkdir(parents=True)
        (site / "pkg-1.0.dist-info").symlink_to(shared / "pkg-1.0.dist-info")
    assert len(sites_below(str(tmp_path / "prefix"))) == MAX_SITES_BELOW


def _musl_module(directory: Path) -> str:
    """A musl-linked extension module (DT_NEEDED ``libc.so``) that needs ``libz.so.1``: a system
    library of every musllinux policy, so not a library the site must ship."""
    from .loader.dagbuild import Lib, write

    module = "_zmod.cpython-312-x86_64-linux-musl.so"
    write(str(directory), [Lib(module, None, ("libz.so.1", "libc.so"), exports=("PyInit__zmod",))])
    return module


#: Per kind of platform tag: the tag a site's WHEEL names, a file of that kind, and what counts
#: outside the site for it (each judged as the same wheel is when checked as a .whl).
SITE_KINDS = {
    "musllinux": ("cp312-cp312-musllinux_1_2_x86_64", None, "musllinux_1_2_x86_64"),
    "win": ("cp312-cp312-win_amd64", SAMPLES / "pe/pyext/python312/_ext.pyd", "Windows (System32"),
    "macosx": ("cp312-abi3-macosx_11_0_arm64", SAMPLES / "macho/misc/arm64_only.dylib", "macOS (the dyld"),
}


@pytest.mark.parametrize("kind", sorted(SITE_KINDS))
def test_a_site_takes_its_target_from_every_kind_of_platform_tag(tmp_path: Path, kind: str) -> None:
    """A site of musllinux (Windows, macOS) wheels said "no distribution names a platform: the
    target is unknown" and was judged against the host: a musl module's libz.so.1 was not found,
    though every musllinux policy lists it.  Its WHEEL's tag sets its target, as the wheel's name does."""
    tag, sample, policy = SITE_KINDS[kind]
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    if sample is None:
        member = f"pkg/{_musl_module(site / 'pkg')}"
    else:
        member = f"pkg/{sample.name}"
        shutil.copy(sample, site / member)
    _dist_info(site, "pkg", tag, [member])
    _dist_info(site, "pure", "py3-none-any", [])
    empty = tmp_path / "empty"  # the host has no library to lend: the target's are what count
    empty.mkdir()
    report = audit([str(site)], AuditConfig(target=TargetEnvironment(sysroot=str(empty))))
    assert not [f.message for f in report.findings if f.rule == "library-not-found"]
    (note,) = report.config["sites"]
    assert note["target_tag"] == tag and note["policy"].startswith(policy)
    assert [(t["kind"], t["tag"]) for t in note["targets"]] == [(kind, tag)]
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))
    text = renderer(OutputFormat.TEXT)(report)
    assert f"target {tag} (the most demanding, pkg-1.0.dist-info)" in text and "target is unknown" not in text


def test_a_site_whose_tags_disagree_in_kind_names_a_target_of_each(tmp_path: Path) -> None:
    """musllinux and manylinux wheels installed into one site: each kind's most demanding tag is a
    target (a glibc file against the manylinux policy, a musl file against the musllinux one),
    and the report says the tags disagree."""
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    member = f"pkg/{_musl_module(site / 'pkg')}"
    _dist_info(site, "pkg", "cp312-cp312-musllinux_1_2_x86_64", [member])
    _dist_info(site, "old", "cp312-cp312-musllinux_1_1_x86_64", [])
    _dist_info(site, "glibc", "py3-none-manylinux_2_28_x86_64.musllinux_1_1_x86_64", [])
    empty = tmp_path / "empty"
    empty.mkdir()
    report = audit([str(site)], AuditConfig(target=TargetEnvironment(sysroot=str(empty))))
    assert not [f.message for f in report.findings if f.rule == "library-not-found"]
    (note,) = report.config["sites"]
    assert [(t["kind"], t["tag"], t["policy"]) for t in note["targets"]] == [
        ("manylinux", "py3-none-manylinux_2_28_x86_64", "manylinux_2_28_x86_64"),
        ("musllinux", "cp312-cp312-musllinux_1_2_x86_64", "musllinux_1_2_x86_64"),
    ]
    assert note["target_tag"] == "py3-none-manylinux_2_28_x86_64"
    text = renderer(OutputFormat.TEXT)(report)
    assert "its platform tags disagree in kind (manylinux, musllinux)" in text
    assert "target cp312-cp312-musllinux_1_2_x86_64 (the most demanding, pkg-1.0.dist-info)" in text
