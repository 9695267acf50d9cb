"""Installations from inputs: wheels of one project for several Pythons are audited apart, each
with what it is installed with; ``--together`` makes one installation, where two packages writing
one path is a ``file-clash`` (identical copies a note).  Fixtures: sample_bins/wheels/ (built by
sample_bins/build_wheels.py)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from output.schema import validate_report
from samplewheels import sample_write_wheel

from linkaudit import audit
from linkaudit.output import OutputFormat, renderer
from linkaudit.packages.metadata import wheel_name
from linkaudit.packages.planner import Target, manylinux_platforms, plan_installations
from linkaudit.report import FileStatus, Finding

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
DIST = SAMPLES / "wheels/dist"
WHEELS = sorted(DIST.glob("*.whl"))
PYEXT = SAMPLES / "loader/pyext"


def _own(findings: tuple[Finding, ...], wheel: Path) -> list[tuple[str, str, str, str]]:
    return sorted((f.rule, f.severity.value, f.file, f.message) for f in findings if f.file.startswith(f"{wheel}!"))


def test_a_dist_of_one_projects_wheels_gives_per_wheel_what_it_alone_gives() -> None:
    """The cp311, cp312 and abi3 wheels of one project share pkg.libs/libhelper.so (the abi3
    copy is another build): audited as one site, two of them were unreadable ("two packages
    write pkg.libs/libhelper.so"); as the installations pip makes, each is audited alone."""
    assert len(WHEELS) == 3
    report = audit([str(DIST)])
    assert not report.has_unreadable
    assert {f.rule for f in report.findings}.isdisjoint({"unreadable-input", "file-clash"})
    assert sorted(f.path for f in report.files) == sorted(
        f"{w}!{m}" for w in WHEELS for m in ("pkg.libs/libhelper.so", _module(w))
    )
    for wheel in WHEELS:
        alone = audit([str(wheel)])
        assert _own(report.findings, wheel) == _own(alone.findings, wheel)
        assert {r.path for r in alone.roots} <= {r.path for r in report.roots}
    planned = report.config["installations"]
    assert [p["targets"] for p in planned] == [
        ["cp311-abi3-manylinux_2_17_x86_64"],
        ["cp311-cp311-manylinux_2_17_x86_64"],
        ["cp312-cp312-manylinux_2_17_x86_64"],
    ]
    assert all(len(p["packages"]) == 1 and "one wheel per project" in p["reason"] for p in planned)
    text = renderer(OutputFormat.TEXT)(report)
    assert "installations: 3 (a project's wheels for several targets are never installed together;" in text
    (head,) = [ln for ln in text.splitlines() if ln.startswith("installations")]
    assert "conda" not in head and "--each" not in head
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))


def _module(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return next(n for n in zf.namelist() if n.startswith("pkg/mod."))


def test_together_makes_one_installation_where_different_copies_clash() -> None:
    report = audit([str(w) for w in WHEELS], together=True)
    clashes = {
        (f.subject, Path(f.file.split("!")[0]).name, f.severity.value)
        for f in report.findings
        if f.rule == "file-clash"
    }
    abi3, cp311, cp312 = (w.name for w in WHEELS)
    # the abi3 wheel is staged first; its libhelper.so is another build: an error for each other wheel
    assert ("pkg.libs/libhelper.so", cp311, "error") in clashes
    assert ("pkg.libs/libhelper.so", cp312, "error") in clashes
    # the same __init__.py in every wheel: a note
    assert ("pkg/__init__.py", cp311, "note") in clashes
    assert not report.has_unreadable
    clash = next(f for f in report.findings if f.rule == "file-clash" and f.subject == "pkg.libs/libhelper.so")
    assert clash.evidence["identical"] is False and clash.evidence["packages"][0].endswith(abi3)
    assert report.config["installations"][0]["reason"].startswith("--together")
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))


def test_identical_libraries_of_two_projects_are_a_note(tmp_path: Path) -> None:
    """Two projects installed together (one installation: different projects, one target) that
    both ship the same bytes at one path: a note, not an unreadable input."""
    cp311 = next(w for w in WHEELS if "-cp311-cp311-" in w.name)
    with (
        zipfile.ZipFile(cp311) as src,
        zipfile.ZipFile(tmp_path / "other-2.0-py3-none-manylinux2014_x86_64.whl", "w") as dst,
    ):
        dst.writestr("pkg.libs/libhelper.so", src.read("pkg.libs/libhelper.so"))
    shutil.copy(cp311, tmp_path)
    report = audit([str(tmp_path)])
    found = [
        (f.rule, f.severity.value, f.subject) for f in report.findings if f.rule in ("file-clash", "unreadable-input")
    ]
    assert found == [("file-clash", "note", "pkg.libs/libhelper.so")]
    assert "installations" not in report.config  # one installation: nothing to tell apart


def _names(*files: str) -> list:  # type: ignore[type-arg]
    return [wheel_name(f) for f in files]


def test_planner_one_wheel_per_project_per_target() -> None:
    wheels = _names(
        "d/jax_cuda12_plugin-0.10.2-cp311-cp311-manylinux_2_27_x86_64.whl",
        "d/jax_cuda12_plugin-0.10.2-cp312-cp312-manylinux_2_27_x86_64.whl",
        "d/nvidia_cublas_cu12-12.9.1.4-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "d/jax_cuda12_plugin-0.10.2-cp311-cp311-macosx_11_0_arm64.whl",
    )
    plan = plan_installations(wheels)
    assert [[p.rsplit("/", 1)[1].split("-")[2] for p in i.packages] for i in plan] == [
        ["cp311", "py3"],
        ["cp312", "py3"],
        ["cp311"],
    ]
    assert plan[2].targets == ("cp311-cp311-macosx_11_0_arm64",)
    # the NVIDIA wheel (manylinux_2_17) installs where glibc 2.27 runs; never on macOS
    assert "nvidia" not in " ".join(plan[2].packages)


def test_planner_ranks_as_pip_does() -> None:
    # an abi3 wheel beside a cp311 one: CPython 3.11 takes cp311; 3.12 takes abi3 when no cp312 is given
    wheels = _names(
        "d/p-1-cp311-cp311-linux_x86_64.whl", "d/p-1-cp311-abi3-linux_x86_64.whl", "d/q-1-cp312-cp312-linux_x86_64.whl"
    )
    plan = plan_installations(wheels)
    got = {i.targets[0]: sorted(p.rsplit("/", 1)[1] for p in i.packages) for i in plan}
    assert got["cp311-cp311-linux_x86_64"] == ["p-1-cp311-cp311-linux_x86_64.whl"]
    assert got["cp312-cp312-linux_x86_64"] == ["p-1-cp311-abi3-linux_x86_64.whl", "q-1-cp312-cp312-linux_x86_64.whl"]
    # every wheel is in some installation
    assert {p for i in plan for p in i.packages} == {w.path for w in wheels}
    # a manylinux_2_28 wheel does not install on a manylinux_2_17 target
    wheels = _names("d/a-1-cp311-cp311-manylinux_2_28_x86_64.whl", "d/a-1-cp311-cp311-manylinux_2_17_x86_64.whl")
    plan = plan_installations(wheels)
    assert [len(i.packages) for i in plan] == [1, 1]


def test_target_priorities_from_explicit_inputs_not_the_host() -> None:
    assert manylinux_platforms((2, 17), "aarch64")[:3] == [
        "manylinux_2_17_aarch64",
        "manylinux2014_aarch64",
        "manylinux_2_16_aarch64",
    ]
    x86 = manylinux_platforms((2, 28), "x86_64")
    assert x86.index("manylinux2014_x86_64") < x86.index("manylinux2010_x86_64") < x86.index("manylinux1_x86_64")
    assert x86[-1] == "linux_x86_64" and "manylinux_2_29_x86_64" not in x86
    tags = [str(t) for t in Target("cp312", "cp312", "musllinux_1_2_x86_64").priorities()]
    assert tags[0] == "cp312-cp312-musllinux_1_2_x86_64" and "cp312-abi3-musllinux_1_1_x86_64" in tags
    assert "py3-none-any" in tags and not any("manylinux" in t for t in tags)


def test_unparsable_wheel_names_and_single_wheels_keep_todays_behaviour() -> None:
    assert wheel_name("dist/not-a-wheel.zip") is None
    assert wheel_name("dist/pkg-1.0-py3-none-any.whl") is not None
    plan = plan_installations(_names("d/a-1-py3-none-any.whl"), ["d/x.conda"])
    assert len(plan) == 1 and plan[0].packages == ("d/a-1-py3-none-any.whl", "d/x.conda")


def _windows_wheel(where: Path, *, delvewheel: bool) -> Path:
    """A win_amd64 wheel laid out as delvewheel repairs one: the extension module ``pkg/_app.pyd``
    imports ``helper.dll``, vendored into ``pkg.libs/``; ``DELVEWHEEL`` in the dist-info or not."""
    pe = SAMPLES / "pe/imports"
    members = {
        "pkg/__init__.py": b"",
        "pkg/_app.pyd": (pe / "app.dll").read_bytes(),
        "pkg.libs/helper.dll": (pe / "helper.dll").read_bytes(),
        "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
        "pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-win_amd64\n",
    }
    if delvewheel:
        members["pkg-1.0.dist-info/DELVEWHEEL"] = b"Version: 1.10.0\nArguments: ['repair', 'pkg.whl']\n"
    record = "".join(f"{name},,\n" for name in [*members, "pkg-1.0.dist-info/RECORD"])
    members["pkg-1.0.dist-info/RECORD"] = record.encode()
    wheel = where / "pkg-1.0-cp311-cp311-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return wheel


@pytest.mark.parametrize("delvewheel", [False, True])
def test_a_delvewheel_repaired_wheel_finds_its_vendored_dlls(tmp_path: Path, delvewheel: bool) -> None:
    """delvewheel's __init__.py patch adds <name>.libs with os.add_dll_directory before any import:
    the official numpy 2.3.5 win_amd64 wheel gave 5 false library-not-found errors for the DLLs of
    numpy.libs. A wheel without DELVEWHEEL has no such patch: its DLL stays not found."""
    from linkaudit import AuditConfig
    from linkaudit.loader.target import TargetEnvironment

    wheel = _windows_wheel(tmp_path, delvewheel=delvewheel)
    report = audit([str(wheel)], AuditConfig(target=TargetEnvironment()))
    missing = [f.subject for f in report.findings if f.rule == "library-not-found"]
    assert missing == ([] if delvewheel else ["helper.dll"])


@pytest.mark.parametrize(
    "name",
    [
        "bar-1.0-cp311-cp311-manylinux_2_99999999_x86_64.whl",
        "bar-1.0-cp311-cp311-musllinux_1_999999999_x86_64.whl",
        "bar-1.0-cp311-cp311-macosx_99999999_0_arm64.whl",
        "bar-1.0-cp3999999999999-cp3999999999999-manylinux_2_17_x86_64.whl",
    ],
)
def test_a_tag_naming_a_huge_version_is_not_expanded(tmp_path: Path, name: str) -> None:
    """A legal tag naming a version no system has was expanded into one tag per lower version:
    manylinux_2_99999999 took 3.85 GB and ended in MemoryError (exit 3). Such a tag is accepted as
    itself only: planning stays as cheap as for a real tag."""
    from linkaudit.packages.planner import MAX_EXPANDED_VERSION, Target

    interpreter, abi, platform = name.removesuffix(".whl").split("-", 2)[2].split("-")
    priorities = Target(interpreter, abi, platform).priorities()
    assert len(priorities) < 50 * MAX_EXPANDED_VERSION
    wheel = tmp_path / name
    shutil.copy(WHEELS[0], wheel)
    report = audit([str(wheel), str(WHEELS[0])])
    assert len(report.config["installations"]) == 2


def test_a_wheel_in_several_installations_has_its_findings_once(tmp_path: Path) -> None:
    """A ``py3-none-manylinux`` wheel (as the NVIDIA ones) beside pkg's cp311 and cp312 wheels is
    installed with each: audited twice, its findings are reported once — what it gives alone."""
    cp311, cp312 = (w for w in WHEELS if "-abi3-" not in w.name)
    shared = tmp_path / "other-2.0-py3-none-manylinux2014_x86_64.whl"
    pyext = SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so"  # RUNPATH $ORIGIN/lib, NEEDs libhelper.so
    with zipfile.ZipFile(shared, "w") as zf:
        zf.writestr("other/_ext.cpython-311-x86_64-linux-gnu.so", pyext.read_bytes())
    for wheel in (cp311, cp312):
        shutil.copy(wheel, tmp_path)
    report = audit([str(tmp_path)])
    assert [str(shared) in p["packages"] for p in report.config["installations"]] == [True, True]
    # what it gives alone, rule by rule and file by file (the words may differ: beside pkg's wheels,
    # library-not-found says libhelper.so is installed, in pkg.libs, where no RUNPATH reaches it)
    own = [(rule, severity, file) for rule, severity, file, _message in _own(report.findings, shared)]
    assert own == [(rule, severity, file) for rule, severity, file, _m in _own(audit([str(shared)]).findings, shared)]
    assert {"rpath-outside-package", "library-not-found"} <= {rule for rule, *_ in own}
    keys = [(f.rule, f.file, f.subject) for f in report.findings]
    assert len(keys) == len(set(keys))


def test_each_says_why_the_packages_are_apart(run_cli) -> None:  # type: ignore[no-untyped-def]
    """``--each`` over wheels says ``--each``, not "two formats of one conda package" (it did)."""
    text = run_cli("check", "--no-config", "--each", str(DIST)).stdout
    (head,) = [ln for ln in text.splitlines() if ln.startswith("installations")]
    assert head == "installations: 3 (--each: every package on its own; --together audits the inputs as one)"


def test_a_loader_emulation_that_runs_out_of_memory_is_named_not_a_crash(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A cycle of 2,000 libraries that also need libc ran the loads out of memory (exit 3, an
    internal error): the run now says so by name and the per-file rules' findings stay."""
    import linkaudit.loader.analysis as analysis

    def exhausted(*_a: object, **_k: object) -> None:
        raise MemoryError

    monkeypatch.setattr(analysis, "analyze", exhausted)
    tree = SAMPLES / "loader/ancestor_runpath"
    report = audit([str(tree)])
    (error,) = [f for f in report.findings if f.rule == "unreadable-input"]
    assert "of 3 inputs ran out of memory" in error.message and error.file == str(tree)
    assert report.count_status(FileStatus.AUDITED) == 3  # the per-file rules ran on every input


def test_running_out_of_memory_is_named_after_the_failed_loads_are_released(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Naming the inputs inside the ``except MemoryError`` block ran with the failed loads still
    held by the traceback's frames: on a 3,000-library chain that raised MemoryError again (exit
    3, the hostile tester's D1).  The error is made once the handler has let go of them."""
    import gc
    import importlib
    import weakref

    import linkaudit.loader.analysis as analysis

    audit_module = importlib.import_module("linkaudit.audit")  # the package's ``audit`` is the function

    class Loads:
        """Stands for the loads the emulation had built when memory ran out."""

    held: list[weakref.ref[Loads]] = []

    def exhausted(*_a: object, **_k: object) -> None:
        loads = Loads()
        held.append(weakref.ref(loads))
        raise MemoryError

    named = audit_module._out_of_memory
    seen: list[bool] = []

    def name(binaries):  # type: ignore[no-untyped-def]
        gc.collect()
        seen.append(held[0]() is None)  # the loads are gone when the error is made
        return named(binaries)

    monkeypatch.setattr(analysis, "analyze", exhausted)
    monkeypatch.setattr(audit_module, "_out_of_memory", name)
    report = audit([str(SAMPLES / "loader/ancestor_runpath")])
    assert seen == [True]
    assert any("ran out of memory" in f.message for f in report.findings if f.rule == "unreadable-input")


def test_a_rule_that_runs_out_of_memory_is_named_and_the_others_still_run(monkeypatch, run_cli) -> None:  # type: ignore[no-untyped-def]
    """duplicate-export over four libraries of a million exports each, under an 800 MB address-space
    limit, raised MemoryError in the rules: exit 3, "internal error ... a bug", no report, the
    other inputs' findings lost (the hostile tester's 03). Now that rule's one error names it, and
    every other rule's findings stay."""
    from linkaudit.rules.duplicate_export import DuplicateExport

    tree = SAMPLES / "loader/ancestor_runpath"
    plain = audit([str(tree)])
    monkeypatch.setattr(DuplicateExport, "check", lambda self, context: _exhausted())
    report = audit([str(tree)])
    (error,) = [f for f in report.findings if f.rule == "unreadable-input"]
    assert error.file == str(tree) and "the rule duplicate-export ran out of memory over 3 inputs" in error.message
    assert "--ignore duplicate-export" in error.message
    kept = [(f.rule, f.file, f.subject) for f in plain.findings if f.rule != "duplicate-export"]
    assert [(f.rule, f.file, f.subject) for f in report.findings if f.rule != "unreadable-input"] == kept
    r = run_cli("check", "--no-config", str(tree))
    assert r.exit_code == 2 and "internal error" not in r.stderr and "ran out of memory" in r.stdout


def _exhausted() -> None:
    raise MemoryError


def test_each_installation_line_gives_its_own_errors_and_warnings(tmp_path: Path) -> None:
    """A dist/ of three wheels plus another project's cp311 wheel holding a library that links the
    GPU driver: each installation's line ends with the errors and warnings found on its own
    wheels' members, so a CI log says which installation failed (it named only the wheels)."""
    bad = tmp_path / "bad-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("bad/libtorch_cuda.so", (SAMPLES / "broken/libtorch_cuda.so").read_bytes())
    report = audit([*(str(w) for w in WHEELS), str(bad)])
    text = renderer(OutputFormat.TEXT)(report)
    lines = [ln for ln in text.splitlines() if ln[:5] in ("  1. ", "  2. ", "  3. ")]
    planned = report.config["installations"]
    assert len(lines) == len(planned) == 3
    seen = []
    for inst, line in zip(planned, lines, strict=True):
        own = [f for f in report.findings if f.file.split("!")[0] in inst["packages"]]
        errors = sum(f.severity.value == "error" for f in own)
        warnings = sum(f.severity.value == "warning" for f in own)
        assert line.endswith(
            f" — {errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
        ), line
        seen.append(errors)
    assert seen[1] > 0 and seen[0] == seen[2] == 0  # the driver link is in the cp311 installation only


def test_an_installation_line_counts_suppressed_findings_apart(tmp_path: Path, run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A suppressed error (by the configuration or the baseline) was still counted on its
    installation's line: "— 1 error" on every line of a green run (exit 0) whose summary said
    "0 errors, 1 suppressed". Now it is counted as the summary counts it."""
    bad = tmp_path / "bad-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("bad/libtorch_cuda.so", (SAMPLES / "broken/libtorch_cuda.so").read_bytes())
    monkeypatch.chdir(tmp_path)
    inputs = [*(str(w) for w in WHEELS), str(bad)]
    assert "wrote 2 findings" in run_cli("check", "--no-config", "--write-baseline", "bl.json", *inputs).stderr
    r = run_cli("check", "--no-config", "--baseline", "bl.json", *inputs)
    lines = [ln for ln in r.stdout.splitlines() if ln[:5] in ("  1. ", "  2. ", "  3. ")]
    assert r.exit_code == 0 and len(lines) == 3, r.stdout
    assert all(" — 0 errors, 0 warnings" in ln for ln in lines), lines
    assert lines[1].endswith(" suppressed") and not lines[0].endswith(" suppressed"), lines


def test_a_wheelhouse_of_many_targets_is_planned_in_linear_passes() -> None:
    """One project's 300 wheels for 300 targets: each installation passes over the wheels a fixed
    number of times, and its reason names three of the others, then a count (a wheel per project
    was looked for among every wheel for every wheel: 1,600 wheels took 39.5 s to plan, and the
    reasons grew as N^2; stop 27's hostile round 3)."""
    from linkaudit.packages.metadata import wheel_name
    from linkaudit.packages.planner import plan_installations

    class Counted(list):  # type: ignore[type-arg]
        passes = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            Counted.passes += 1
            return super().__iter__()

    n = 300
    names = [
        wheel_name(f"dist/p-1.0-cp3{10 + i % 3}-cp3{10 + i % 3}-manylinux_2_{17 + i}_x86_64.whl") for i in range(n)
    ]
    wheels = Counted(w for w in names if w is not None)
    plan = plan_installations(wheels)
    assert len(plan) == n
    assert Counted.passes <= 8 * n, Counted.passes  # a few passes per installation, not one per wheel
    assert all(len(i.reason) < 600 for i in plan)
    assert plan[0].reason.endswith(f" and {n - 4} more")


def test_planner_installs_another_projects_newer_manylinux_wheel_with_each_python() -> None:
    """Wheels of different projects install side by side where the most demanding one's system
    runs: a cp311 manylinux_2_17 wheel and a py3 manylinux_2_28 dependency are one installation for
    CPython 3.11 on glibc 2.28 (they were two: the dependency's tag names no CPython); one project's
    wheels for several Pythons each get the dependency; wheels for another libc, machine or
    Python stay apart."""
    plan = plan_installations(
        _names(
            "d/mypkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", "d/nvidia_foo-1.0-py3-none-manylinux_2_28_x86_64.whl"
        )
    )
    assert [(len(i.packages), i.targets, i.reason) for i in plan] == [
        (2, ("cp311-cp311-manylinux_2_28_x86_64",), "one installation")
    ]
    dist = (
        "d/torch-1-cp310-cp310-manylinux_2_17_x86_64.whl",
        "d/torch-1-cp311-cp311-manylinux_2_17_x86_64.whl",
        "d/torch-1-cp311-cp311-musllinux_1_2_x86_64.whl",
        "d/torch-1-cp311-cp311-manylinux_2_17_aarch64.whl",
        "d/nvidia_foo-1.0-py3-none-manylinux_2_28_x86_64.whl",
    )
    plan = plan_installations(_names(*dist))
    assert [[p.rsplit("/", 1)[1].split("-")[2:] for p in i.packages] for i in plan] == [
        [["cp310", "cp310", "manylinux_2_17_x86_64.whl"], ["py3", "none", "manylinux_2_28_x86_64.whl"]],
        [["cp311", "cp311", "manylinux_2_17_x86_64.whl"], ["py3", "none", "manylinux_2_28_x86_64.whl"]],
        [["cp311", "cp311", "musllinux_1_2_x86_64.whl"]],
        [["cp311", "cp311", "manylinux_2_17_aarch64.whl"]],
    ]
    assert plan[0].targets[0] == "cp310-cp310-manylinux_2_28_x86_64"
    for apart in (
        ("d/a-1-cp311-cp311-manylinux_2_17_x86_64.whl", "d/b-1-cp312-cp312-manylinux_2_28_x86_64.whl"),
        ("d/a-1-cp311-cp311-manylinux_2_17_x86_64.whl", "d/b-1-py3-none-musllinux_1_2_x86_64.whl"),
        ("d/a-1-cp311-cp311-manylinux_2_17_x86_64.whl", "d/b-1-py3-none-manylinux_2_28_aarch64.whl"),
    ):
        assert [len(i.packages) for i in plan_installations(_names(*apart))] == [1, 1], apart


@pytest.mark.parametrize(
    ("wheels", "target"),
    [
        (
            ("d/a-1-cp39-abi3-manylinux_2_17_x86_64.whl", "d/b-1-py3-none-manylinux_2_28_x86_64.whl"),
            "cp39-abi3-manylinux_2_28_x86_64",
        ),
        (
            ("d/a-1-cp311-cp311-manylinux2014_x86_64.whl", "d/b-1-py3-none-manylinux1_x86_64.whl"),
            "cp311-cp311-manylinux2014_x86_64",
        ),
        (
            ("d/a-1-cp311-cp311-linux_x86_64.whl", "d/b-1-py3-none-manylinux_2_28_x86_64.whl"),
            "cp311-cp311-manylinux_2_28_x86_64",
        ),
        (
            ("d/a-1-cp311-cp311-macosx_11_0_universal2.whl", "d/b-1-py3-none-macosx_14_0_arm64.whl"),
            "cp311-cp311-macosx_14_0_arm64",
        ),
    ],
    ids=["abi3", "manylinux2014", "linux", "universal2"],
)
def test_planner_wheels_of_two_projects_one_system_accepts_are_one_installation(
    wheels: tuple[str, str], target: str
) -> None:
    """abi3 beside a newer dependency; a legacy ``manylinux2014`` target, which accepted only its
    own tag (its "2014" was read as a release no system has), beside a ``manylinux1`` dependency; a
    local ``linux_x86_64`` build; a universal2 wheel beside an arm64 one for a later macOS."""
    (only,) = plan_installations(_names(*wheels))
    assert len(only.packages) == 2 and only.targets[0] == target


def test_a_dist_of_one_project_is_planned_as_before_beside_a_newer_tag() -> None:
    """One project's wheels (cibuildwheel: several Pythons, manylinux_2_17 and _2_28, musllinux):
    one installation per wheel, each named by its own tag alone, as before."""
    dist = (
        "d/p-1-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "d/p-1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "d/p-1-cp311-cp311-manylinux_2_28_x86_64.whl",
        "d/p-1-cp311-cp311-musllinux_1_2_x86_64.whl",
        "d/p-1-cp312-cp312-manylinux_2_28_x86_64.whl",
    )
    plan = plan_installations(_names(*dist))
    assert [i.packages for i in plan] == [(p,) for p in dist]
    assert [i.targets for i in plan] == [
        ("cp310-cp310-manylinux2014_x86_64", "cp310-cp310-manylinux_2_17_x86_64"),
        ("cp311-cp311-manylinux2014_x86_64", "cp311-cp311-manylinux_2_17_x86_64"),
        ("cp311-cp311-manylinux_2_28_x86_64",),
        ("cp311-cp311-musllinux_1_2_x86_64",),
        ("cp312-cp312-manylinux_2_28_x86_64",),
    ]


def test_a_dependency_wheel_for_a_newer_glibc_is_installed_with_the_wheel_that_loads_it(tmp_path: Path) -> None:
    """mod (cp311, manylinux_2_17) declares helper and finds its libhelper.so through RUNPATH
    ``$ORIGIN/lib``; helper is ``py3-none-manylinux_2_28``.  pip installs both wherever glibc 2.28
    runs: one installation, for CPython 3.11 there, and nothing to report (it was two, with a false
    library-not-found and an rpath-outside-package note; tagging helper manylinux_2_17 hid it)."""
    write_wheel = sample_write_wheel()
    mod_so = "mod.cpython-311-x86_64-linux-gnu.so"
    mod = tmp_path / "mod-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    helper = tmp_path / "helper-1.0-py3-none-manylinux_2_28_x86_64.whl"
    write_wheel(mod, {mod_so: (PYEXT / mod_so).read_bytes()}, "mod-1.0.dist-info",
                "Name: mod\nVersion: 1.0\nRequires-Dist: helper\n", ["cp311-cp311-manylinux_2_17_x86_64"])  # fmt: skip
    write_wheel(helper, {"lib/libhelper.so": (PYEXT / "lib/libhelper.so").read_bytes()}, "helper-1.0.dist-info",
                "Name: helper\nVersion: 1.0\n", ["py3-none-manylinux_2_28_x86_64"])  # fmt: skip
    report = audit([str(mod), str(helper)])
    assert "installations" not in report.config  # one installation
    assert not [f for f in report.findings if f.severity.value in ("error", "warning")]
    assert {f.rule for f in report.findings}.isdisjoint({"library-not-found", "rpath-outside-package"})
    assert "installations:" not in renderer(OutputFormat.TEXT)(report)


def test_a_newer_dependency_wheel_is_installed_with_each_python_of_a_dist(tmp_path: Path) -> None:
    """pkg's cp311 and cp312 wheels (manylinux_2_17) beside another project's
    ``py3-none-manylinux_2_28`` wheel (as torch's beside an NVIDIA one): each Python's installation
    holds it (it was an installation of its own, never audited with pkg)."""
    cp311, cp312 = (w for w in WHEELS if "-abi3-" not in w.name)
    shared = tmp_path / "other-2.0-py3-none-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(shared, "w") as zf:
        zf.writestr("other/libhelper2.so", (PYEXT / "lib/libhelper.so").read_bytes())
    for wheel in (cp311, cp312):
        shutil.copy(wheel, tmp_path)
    report = audit([str(tmp_path)])
    planned = report.config["installations"]
    assert [p["targets"][0] for p in planned] == [
        "cp311-cp311-manylinux_2_28_x86_64",
        "cp312-cp312-manylinux_2_28_x86_64",
    ]
    assert [str(shared) in p["packages"] for p in planned] == [True, True]
    validate_report(json.loads(renderer(OutputFormat.JSON)(report)))
