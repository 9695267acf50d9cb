"""A lone conda package (``.conda`` / ``.tar.bz2``) judged as conda-build judges it: each needed
library inside the package, brought by a package its ``info/index.json`` ``depends`` on (a note),
or glibc's (conda-forge's sysroot); else the finding names the conda package to add to
``requirements/run`` (overlinking); a dependency nothing needs is ``unused-dependency``
(overdepending). The sample is ``sample_bins/conda/`` (``build_conda.sh``)."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest
from output.schema import validate_report

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.output import OutputFormat, renderer

CONDA = Path(__file__).resolve().parents[1] / "sample_bins/conda"


@pytest.mark.parametrize("name", ["condademo-1.0-0.conda", "condademo-1.0-0.tar.bz2"])
def test_a_lone_conda_package_is_judged_against_its_depends(name: str) -> None:
    report = audit([str(CONDA / name)], AuditConfig(target=TargetEnvironment()))
    found = {(f.rule, f.subject): f for f in report.findings}
    assert set(found) == {
        ("library-not-found", "libz.so.1"),
        ("library-not-found", "libcudart.so.13"),
        ("unused-dependency", "libcublas"),
    }  # libcondahelper.so: inside the package; libc.so.6: glibc's, the sysroot's
    libz = found[("library-not-found", "libz.so.1")]
    assert libz.severity.value == "error" and libz.evidence["providers"] == ["libzlib", "zlib"]
    assert "add libzlib to requirements/run (conda-build: overlinking)" in libz.message
    cudart = found[("library-not-found", "libcudart.so.13")]
    assert cudart.severity.value == "note" and cudart.evidence["declared_by"] == "cuda-cudart"
    assert "which condademo depends on: installed with it, not inside this package" in cudart.message
    assert found[("unused-dependency", "libcublas")].severity.value == "note"
    attempts = libz.evidence["attempts"]
    assert attempts[-1]["outcome"] == "outside-target" and "conda-forge sysroot (glibc 2.17)" in attempts[-1]["detail"]
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))
    # --target-env policy: the same sysroot (it was a usage error: "no policy to take the system libraries from")
    policy = audit([str(CONDA / name)], AuditConfig(target=TargetEnvironment(), target_env="policy"))
    assert sorted((f.rule, f.subject) for f in policy.findings) == sorted(found)
    # the auditing host (its own /lib libz.so.1) counts only when asked for
    host = audit([str(CONDA / name)], AuditConfig(target=TargetEnvironment(), target_env="host"))
    assert "libz.so.1" not in {f.subject for f in host.findings if f.rule == "library-not-found"}


def test_in_a_prefix_a_declared_dependency_that_is_not_installed_is_an_error(tmp_path: Path) -> None:
    """The same package installed by hand into a prefix (its files and a conda-meta record) without
    cuda-cudart: there the dependency should have been installed, so libcudart.so.13 is an error."""
    prefix = tmp_path / "env"
    with tarfile.open(CONDA / "condademo-1.0-0.tar.bz2") as tf:
        tf.extractall(prefix, filter="data")
    index = json.loads((prefix / "info/index.json").read_text())
    files = (prefix / "info/files").read_text().split()
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta/condademo-1.0-0.json").write_text(json.dumps({**index, "files": files}))
    report = audit([str(prefix / "lib")], AuditConfig(target=TargetEnvironment()))
    cudart = [f for f in report.findings if f.rule == "library-not-found" and f.subject == "libcudart.so.13"]
    assert [f.severity.value for f in cudart] == ["error"]
    assert "which condademo depends on: it is not installed in this prefix" in cudart[0].message


def test_the_two_formats_of_one_package_are_two_installations() -> None:
    """A channel serves every package as .conda and .tar.bz2; conda installs one.  Given both (a
    conda-bld output, a mirrored channel) they were staged into one prefix, and each format's
    libraries were loaded through the other's ("also needed by 1 more"): each is audited as it
    alone is, and the report says why."""
    both = [str(CONDA / "condademo-1.0-0.conda"), str(CONDA / "condademo-1.0-0.tar.bz2")]
    report = audit([str(CONDA)])
    for path in both:
        own = sorted((f.rule, f.severity.value, f.message) for f in report.findings if f.file.startswith(f"{path}!"))
        alone = audit([path])
        assert own == sorted((f.rule, f.severity.value, f.message) for f in alone.findings)
        assert own
    planned = report.config["installations"]
    assert [p["packages"] for p in planned] == [[p] for p in both]
    assert all("one format of condademo-1.0-0" in p["reason"] for p in planned)
    assert "two formats of one conda package are never installed together" in renderer(OutputFormat.TEXT)(report)
    together = audit(both, together=True)
    assert len(together.config["installations"]) == 1


@pytest.mark.parametrize("name", ["condademo-1.0-0.conda", "condademo-1.0-0.tar.bz2"])
def test_a_build_tree_beside_a_conda_package_is_judged_against_the_host(tmp_path: Path, name: str) -> None:
    """A conda-bld output beside loose binaries: they were one installation judged against
    conda-forge's sysroot — the build tree's libz.so.1, in this host's /lib, "not found", and the
    package's own libz finding, with its conda-build advice, folded into the other file's. Now the
    conda package is judged alone and the build tree against the host, each as when given alone."""
    import shutil

    from .loader.dagbuild import Lib, write

    if not Path("/lib/x86_64-linux-gnu/libz.so.1").exists():
        pytest.skip("this host has no /lib/x86_64-linux-gnu/libz.so.1 (Debian: zlib1g)")
    build = tmp_path / "build"
    build.mkdir()
    module = "_zmod.cpython-311-x86_64-linux-gnu.so"
    write(str(build), [Lib(module, None, ("libz.so.1",), exports=("PyInit__zmod",))])
    shutil.copy(CONDA / name, tmp_path / name)
    for given in ([str(build), str(tmp_path / name)], [str(tmp_path)]):  # named, or found in one directory
        report = audit(given, AuditConfig(target=TargetEnvironment()))
        reasons = [p["reason"] for p in report.config["installations"]]
        assert len(reasons) == 2 and reasons[0] == "the conda packages", reasons
        mine = [f for f in report.findings if f.file.endswith(module) and f.rule == "library-not-found"]
        assert not mine, [f.message for f in mine]
        libz = [f for f in report.findings if f.subject == "libz.so.1" and f.file.startswith(str(tmp_path / name))]
        assert len(libz) == 1 and "add libzlib to requirements/run" in libz[0].message


def _variant(path: Path, name: str, build: str, lib: bytes) -> str:
    """A conda ``.tar.bz2`` of ``name`` and ``build`` installing ``lib/libfoo.so``."""
    import io

    index = json.dumps({"name": name, "version": "1.0", "build": build, "build_number": 0}).encode()
    with tarfile.open(path, "w:bz2") as tf:
        for member, data in (("info/index.json", index), ("lib/libfoo.so", lib)):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return str(path)


@pytest.mark.parametrize("hold", [True, False], ids=["no-loader", "loader"])
def test_builds_of_one_package_name_are_installations_apart(tmp_path: Path, hold: bool) -> None:
    """conda-build's variants (foo-1.0-py311_0, foo-1.0-py312_0) are never installed in one prefix:
    each is audited as it alone is (both files, no file-clash); two packages of different names
    writing one path are one prefix and clash."""
    lib = (CONDA.parents[0] / "loader/pyext/lib/libhelper.so").read_bytes()
    other = (CONDA.parents[0] / "misc/libleak.so").read_bytes()
    py311 = _variant(tmp_path / "foo-1.0-py311_0.tar.bz2", "foo", "py311_0", lib)
    py312 = _variant(tmp_path / "foo-1.0-py312_0.tar.bz2", "foo", "py312_0", other)
    config = AuditConfig(target=None) if hold else AuditConfig()
    report = audit([py311, py312], config)
    assert {f.path for f in report.files} == {f"{py311}!lib/libfoo.so", f"{py312}!lib/libfoo.so"}
    assert not [f for f in report.findings if f.rule == "file-clash"]
    planned = report.config["installations"]
    assert [p["packages"] for p in planned] == [[py311], [py312]]
    assert all("one build of a package name" in p["reason"] for p in planned)
    bar = _variant(tmp_path / "bar-1.0-0.tar.bz2", "bar", "0", other)
    clash = audit([py311, bar], config)
    assert [f.severity.value for f in clash.findings if f.rule == "file-clash"] == ["error"]


def _conda_v2(path: Path, name: str, build: str, depends: list[str], lib: bytes) -> str:
    """A ``.conda`` (zip of ``info-*.tar.zst`` and ``pkg-*.tar.zst``) of ``name`` and ``build``,
    depending on ``depends``, installing ``lib/lib{name}.so``."""
    import io
    import zipfile

    import zstandard

    def tar(members: list[tuple[str, bytes]]) -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode="w") as tf:
            for member, data in members:
                info = tarfile.TarInfo(member)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        return zstandard.ZstdCompressor().compress(out.getvalue())

    index = json.dumps({"name": name, "version": "1.0", "build": build, "depends": depends}).encode()
    base = path.name[: -len(".conda")]
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata.json", b'{"conda_pkg_format_version": 2}')
        zf.writestr(f"info-{base}.tar.zst", tar([("info/index.json", index)]))
        zf.writestr(f"pkg-{base}.tar.zst", tar([(f"lib/lib{name}.so", lib)]))
    return str(path)


@pytest.mark.parametrize("fmt", [".conda", ".tar.bz2"])
def test_builds_of_one_name_are_installed_with_what_they_depend_on_only(tmp_path: Path, fmt: str) -> None:
    """N builds of one name beside M other packages were N installations each staging all M
    again (N*M: 36 s at N = M = 200).  As conda installs a package with its depends, each build's
    installation holds it and the packages given whose names it depends on, transitively; the
    packages given once are one installation of their own: a package no build depends on is
    staged once in all."""
    from linkaudit.packages import plan_inputs

    lib = (CONDA.parents[0] / "loader/pyext/lib/libhelper.so").read_bytes()

    def make(name: str, build: str, depends: list[str]) -> str:
        path = tmp_path / f"{name}-1.0-{build}{fmt}"
        if fmt == ".conda":
            return _conda_v2(path, name, build, depends, lib)
        return _variant_depending(path, name, build, depends, lib)

    builds = [make("foo", f"py3{i}_0", ["__glibc >=2.17", "dep >=1", "python 3.1"]) for i in range(4)]
    dep = make("dep", "0", ["dep2"])  # dep2: a dependency of a dependency
    dep2 = make("dep2", "0", [])
    others = [make(f"bar{j}", "0", ["baz"]) for j in range(5)]
    planned = [p.installation for p in plan_inputs([*builds, dep, dep2, *others])]
    staged = [p for i in planned for p in i.packages]
    counts = {p: staged.count(p) for p in [*builds, dep, dep2, *others]}
    assert counts == {**dict.fromkeys(builds, 1), dep: 5, dep2: 5, **dict.fromkeys(others, 1)}
    assert sorted(map(sorted, (i.packages for i in planned))) == sorted(
        [sorted([dep, dep2, *others])] + [sorted([b, dep, dep2]) for b in builds]
    )
    assert all("dep-1.0-0" in i.reason for i in planned if i.packages[0] in builds)
    report = audit([*builds, dep, *others[:1]], AuditConfig(target=None))
    files = sorted(f.path for f in report.files)
    assert files == sorted(
        f"{p}!lib/lib{n}.so" for p, n in [*((b, "foo") for b in builds), (dep, "dep"), (others[0], "bar0")]
    )


def _variant_depending(path: Path, name: str, build: str, depends: list[str], lib: bytes) -> str:
    """A conda ``.tar.bz2`` of ``name`` and ``build`` depending on ``depends``, its
    ``info/index.json`` last (as a hand-built package may have it)."""
    import io

    index = json.dumps({"name": name, "version": "1.0", "build": build, "depends": depends}).encode()
    with tarfile.open(path, "w:bz2") as tf:
        for member, data in ((f"lib/lib{name}.so", lib), ("info/index.json", index)):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return str(path)


def test_many_builds_of_one_name_plan_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_copy_reason`` listed every build's stem once per installation: 2,000 builds of one
    name took N^2 stem computations (8 s).  Counted, not timed: stems computed per build."""
    from linkaudit.packages import planner

    paths = [str(tmp_path / f"foo-1.0-v{i}_0.conda") for i in range(300)]
    calls = 0
    real = planner._conda_stem

    def counted(path: str) -> str:
        nonlocal calls
        calls += 1
        return real(path)

    monkeypatch.setattr(planner, "_conda_stem", counted)
    planned = planner.conda_format_sets(paths)
    assert [i.packages for i in planned] == [(p,) for p in paths]
    assert calls <= 2 * len(paths), calls


def test_a_build_whose_depends_cannot_be_read_before_staging_is_installed_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``.tar.bz2`` with its ``info/index.json`` past what is read before staging: its depends are
    unknown, so its installation holds it alone and says so (never every package given again)."""
    from linkaudit.packages import conda, plan_inputs

    lib = (CONDA.parents[0] / "loader/pyext/lib/libhelper.so").read_bytes()
    monkeypatch.setattr(conda, "MAX_INDEX_PEEK", 1024)  # past the library, before the index
    builds = [_variant_depending(tmp_path / f"foo-1.0-v{i}_0.tar.bz2", "foo", f"v{i}_0", ["dep"], lib) for i in (1, 2)]
    dep = _variant_depending(tmp_path / "dep-1.0-0.tar.bz2", "dep", "0", [], lib)
    planned = [p.installation for p in plan_inputs([*builds, dep])]
    assert [i.packages for i in planned] == [(dep,), (builds[0],), (builds[1],)]
    assert all("depends unknown before staging" in i.reason for i in planned[1:])
    assert conda.read_depends(str(tmp_path / "missing.conda")) is None
    assert conda.read_depends(dep) is None
    monkeypatch.setattr(conda, "MAX_INDEX_PEEK", 16 << 20)
    assert conda.read_depends(builds[0]) == ("dep",)


def test_many_builds_of_one_name_are_each_planned_with_their_own_path(tmp_path: Path) -> None:
    """2,000 builds of one name (no depends read: each installed alone): each installation's inputs
    are its own build alone (built from its members, not by scanning every input: that scan made
    planning N^2, 4 s at 8,000 builds; a speed figure for benchmarks, not a timed test here)."""
    from linkaudit.packages import plan_inputs

    for i in range(2000):
        (tmp_path / f"foo-1.0-v{i}_0.conda").touch()
    planned = plan_inputs([str(tmp_path)], is_package=lambda _p: "zip")
    builds = [p for p in planned if "one build" in p.installation.reason]
    assert len(builds) == 2000 and all(len(p.paths) == 1 for p in builds)
    assert {p.paths[0] for p in builds} == {str(tmp_path / f"foo-1.0-v{i}_0.conda") for i in range(2000)}


@pytest.mark.parametrize("where", ["staging", "before staging"])
def test_an_index_json_past_one_read_is_read_whole(tmp_path: Path, where: str) -> None:
    """A valid ``info/index.json`` of 2.2 MB (under the 4 MiB cap): a member's ``read`` hands out
    1 MiB of a large member at a time, and one read of it was called "not JSON"."""
    from linkaudit.packages import conda

    lib = (Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()
    depends = ["libzzz >=1", *(f"dep{i} >=1.0" for i in range(120000))]
    path = _variant_depending(tmp_path / "big-1.0-0.tar.bz2", "big", "0", depends, lib)
    assert (1 << 20) < len(json.dumps({"depends": depends})) < (4 << 20)
    if where == "before staging":
        found = conda.read_depends(path)
        assert found is not None and found[0] == "libzzz" and len(found) == 120001
        return
    report = audit([path], AuditConfig(target=None))
    assert not [f for f in report.findings if f.rule == "unreadable-input"], report.findings


def _conda(path: Path, name: str, build: str, depends: list[str], members: dict[str, bytes]) -> str:
    """A conda ``.tar.bz2`` of ``name``, ``build`` and ``depends`` holding ``members``."""
    import io

    index = json.dumps({"name": name, "version": "1.0", "build": build, "depends": depends}).encode()
    with tarfile.open(path, "w:bz2") as tf:
        for member, data in (("info/index.json", index), *members.items()):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return str(path)


def test_a_package_given_once_depending_on_a_name_given_twice_is_installed_with_each_build(tmp_path: Path) -> None:
    """bar (given once) depends on foo (two builds), baz on bar: they were the installation of the
    packages given once, without any foo, and bar's module found no libhelper.so (a false
    library-not-found); now each is installed with each build of foo; qux, unrelated, stays apart."""
    from linkaudit.packages import conda
    from linkaudit.packages.planner import conda_format_sets

    samples = CONDA.parents[0]
    helper = (samples / "loader/pyext/lib/libhelper.so").read_bytes()
    module = (samples / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so").read_bytes()  # RUNPATH $ORIGIN/lib
    foo = [_conda(tmp_path / f"foo-1.0-{b}.tar.bz2", "foo", b, ["python"], {"lib/libhelper.so": helper}) for b in ("py311_0", "py312_0")]  # fmt: skip
    bar = _conda(tmp_path / "bar-1.0-0.tar.bz2", "bar", "0", ["foo >=1.0", "qux"], {"mod.cpython-311-x86_64-linux-gnu.so": module})  # fmt: skip
    baz = _conda(tmp_path / "baz-1.0-0.tar.bz2", "baz", "0", ["bar"], {})
    qux = _conda(tmp_path / "qux-1.0-0.tar.bz2", "qux", "0", [], {"lib/libqux.so": helper})
    paths = [*foo, bar, baz, qux]
    plan = conda_format_sets(paths, conda.read_depends)
    assert [sorted(os.path.basename(p) for p in i.packages) for i in plan] == [
        ["qux-1.0-0.tar.bz2"],
        ["bar-1.0-0.tar.bz2", "baz-1.0-0.tar.bz2", "foo-1.0-py311_0.tar.bz2", "qux-1.0-0.tar.bz2"],
        ["bar-1.0-0.tar.bz2", "baz-1.0-0.tar.bz2", "foo-1.0-py312_0.tar.bz2", "qux-1.0-0.tar.bz2"],
    ]
    report = audit(paths)
    assert not [f for f in report.findings if f.rule == "library-not-found"], report.findings


def test_a_package_in_every_installation_counts_its_findings_in_each(tmp_path: Path) -> None:
    """Three builds of foo each need baz, whose library leaks a build path: the finding is listed
    once, and each installation holding baz counts it (before: the last one alone; the others
    read "0 errors")."""
    samples = CONDA.parents[0]
    leak = (samples / "misc/libleak.so").read_bytes()
    helper = (samples / "loader/pyext/lib/libhelper.so").read_bytes()
    foo = [_conda(tmp_path / f"foo-1.0-{b}.tar.bz2", "foo", b, ["baz"], {"lib/libfoo.so": helper}) for b in ("a_0", "b_0", "c_0")]  # fmt: skip
    baz = _conda(tmp_path / "baz-1.0-0.tar.bz2", "baz", "0", [], {"lib/libbaz.so": leak})
    report = audit([*foo, baz], AuditConfig(target=None))
    leaks = len([f for f in report.findings if f.rule == "rpath-leak"])
    assert leaks >= 1 and leaks == len([f for f in report.findings if f.severity.value == "error"])
    text = renderer(OutputFormat.TEXT)(report)
    lines = [line for line in text.splitlines() if line.startswith("  ") and " — " in line and "error" in line]
    holding = [line for line in lines if "baz-1.0-0" in line or "given once" in line]
    counted = f"— {leaks} error{'s' if leaks > 1 else ''}"
    assert len(holding) == 4 and all(counted in line for line in holding), lines
