"""Who owns each library of an installation and who declared it: ``undeclared-dependency``, and
``library-not-found`` naming the provider (the provider index) and whether the distribution
declares it — directly, through a meta-package (cuda-toolkit[cudart]), or only under an extra
(a warning when only a plugin no import root reaches needs it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from packaging.tags import Tag

from linkaudit import audit
from linkaudit.packages.providers import providers
from linkaudit.packages.requirements import closure, declared, marker_environment
from linkaudit.packages.site import read_site
from linkaudit.rules import rule_ids

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
PYEXT = SAMPLES / "loader/pyext"
EXT = SAMPLES / "ext"
TAG = "cp311-cp311-manylinux_2_17_x86_64"


def _dist_info(
    site: Path, name: str, files: list[str], requires: list[str] = (), extras: list[str] = (), tag: str = TAG
) -> None:  # type: ignore[assignment]
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = [f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"]
    lines += [f"Provides-Extra: {e}\n" for e in extras] + [f"Requires-Dist: {r}\n" for r in requires]
    (info / "METADATA").write_text("".join(lines))
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nTag: {tag}\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))


def _site(tmp_path: Path, requires: list[str], extras: list[str] = ()) -> Path:  # type: ignore[assignment]
    """app's pkg/mod...so NEEDs libhelper.so, which the distribution 'helper' installs in pkg/lib."""
    site = tmp_path / "site"
    (site / "pkg/lib").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg")
    shutil.copy(PYEXT / "lib/libhelper.so", site / "pkg/lib")
    _dist_info(site, "app", ["pkg/mod.cpython-311-x86_64-linux-gnu.so"], requires, extras)
    _dist_info(site, "helper", ["pkg/lib/libhelper.so"])
    return site


def test_a_library_of_an_undeclared_distribution_is_an_error(tmp_path: Path) -> None:
    site = _site(tmp_path, [])
    report = audit([str(site / "pkg")])
    (finding,) = [f for f in report.findings if f.rule == "undeclared-dependency"]
    assert finding.severity.value == "error" and finding.subject == "libhelper.so"
    assert finding.evidence["owner"] == "helper" and finding.evidence["distribution"] == "app"
    assert "add 'helper' to app's Requires-Dist" in finding.message
    assert "undeclared-dependency" in rule_ids()


@pytest.mark.parametrize(
    "requires",
    [["helper>=1"], ["helper; platform_system == 'Linux'"], ["meta"], ["helper; extra == 'gpu'"]],
)
def test_declared_directly_through_another_or_under_an_extra(tmp_path: Path, requires: list[str]) -> None:
    site = _site(tmp_path, requires, ["gpu"] if "extra" in requires[0] else [])
    if requires == ["meta"]:
        _dist_info(site, "meta", [], ["helper"])
    report = audit([str(site / "pkg")])
    assert "undeclared-dependency" not in {f.rule for f in report.findings}


def test_markers_are_evaluated_for_the_target_not_this_interpreter() -> None:
    env = marker_environment(Tag("cp312", "cp312", "win_amd64"))
    assert env["sys_platform"] == "win32" and env["platform_machine"] == "AMD64" and env["python_version"] == "3.12"
    lines = ["a; sys_platform == 'linux'", "b; sys_platform == 'win32' and python_version >= '3.12'", "c; extra == 'x'"]
    assert [d.name for d in declared(lines, env)] == ["b"]
    assert [(d.name, d.under) for d in declared(lines, env, ["x"])] == [("b", None), ("c", "x")]
    mac = marker_environment(Tag("cp311", "cp311", "macosx_11_0_arm64"))
    assert mac["platform_system"] == "Darwin" and mac["platform_machine"] == "arm64"
    # a key no tag decides: evaluated against "" (never this machine's), and marked "maybe"
    assert declared(["d; platform_release != '5.0'"], env)[0].maybe


def test_cuda_toolkit_extras_come_from_the_real_meta_package() -> None:
    env = marker_environment(Tag("cp311", "cp311", "manylinux_2_28_x86_64"))
    from linkaudit.packages.metadata import Distribution

    torch = Distribution("torch", "2.14.1", "torch.dist-info", requires=(
        'cuda-toolkit[cudart,nvrtc]==13.0.3; platform_system == "Linux"',
    ))  # fmt: skip
    found = closure("torch", {"torch": torch}, env)
    assert {"cuda-toolkit", "nvidia-cuda-runtime", "nvidia-cuda-nvrtc"} <= set(found)
    assert "nvidia-cublas" not in found  # not an extra torch asks for
    assert found["nvidia-cuda-runtime"].requirement.startswith("cuda-toolkit[cudart,nvrtc]")
    win = closure("torch", {"torch": torch}, marker_environment(Tag("cp311", "cp311", "macosx_11_0_arm64")))
    assert not win  # platform_system == "Linux" only


def test_the_provider_index_reads_sonames() -> None:
    index = providers()
    assert index["libcudart.so.13"] == ("nvidia-cuda-runtime",)
    assert index["libcublasLt.so.13"] == ("nvidia-cublas",)


def _plugin_site(tmp_path: Path, requires: list[str], extras: list[str]) -> Path:
    """pkg/_C (an import root, with its libshim.so) and pkg/plugin/libplug.so, dlopen'ed only,
    which NEEDs libhelper.so in pkg/plugin/lib: not installed."""
    site = tmp_path / "site"
    (site / "pkg/lib").mkdir(parents=True)
    (site / "pkg/plugin").mkdir()
    shutil.copy(EXT / "_C.cpython-311-x86_64-linux-gnu.so", site / "pkg")
    for lib in (EXT / "lib").iterdir():
        shutil.copy(lib, site / "pkg/lib")
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg/plugin/libplug.so")
    files = ["pkg/_C.cpython-311-x86_64-linux-gnu.so", "pkg/plugin/libplug.so"]
    files += [f"pkg/lib/{p.name}" for p in (EXT / "lib").iterdir()]
    _dist_info(site, "app", files, requires, extras)
    return site


@pytest.mark.parametrize(
    ("requires", "extras", "severity", "words"),
    [
        (["helper; extra == 'gpu'"], ["gpu"], "warning", "only under its extra 'gpu'"),
        (["helper"], [], "error", "which app declares (helper): it is not installed here"),
        ([], [], "error", "which no dependency of app declares: add helper to its Requires-Dist"),
    ],
)
def test_library_not_found_names_the_provider_and_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, requires: list[str], extras: list[str], severity: str, words: str
) -> None:
    from linkaudit.rules import provider_hint

    monkeypatch.setattr(provider_hint, "providers", lambda: {"libhelper.so": ("helper",)})
    site = _plugin_site(tmp_path, requires, extras)
    report = audit([str(site / "pkg")])
    (missing,) = [f for f in report.findings if f.rule == "library-not-found"]
    assert missing.subject == "libhelper.so" and missing.severity.value == severity
    assert words in missing.message and missing.evidence["providers"] == ["helper"]
    if extras:
        assert "pip install app[gpu]" in missing.message and missing.evidence["extra"] == "gpu"


def test_an_import_root_needing_an_extras_library_stays_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from linkaudit.rules import provider_hint

    monkeypatch.setattr(provider_hint, "providers", lambda: {"libhelper.so": ("helper",)})
    site = _site(tmp_path, ["helper; extra == 'gpu'"], ["gpu"])
    (site / "pkg/lib/libhelper.so").unlink()
    (site / "helper-1.0.dist-info/RECORD").unlink()
    missing = [f for f in audit([str(site / "pkg")]).findings if f.rule == "library-not-found"]
    assert [f.severity.value for f in missing] == ["error"]  # `import pkg` fails: not a plugin
    assert read_site(str(site)) is not None


def test_tree_and_why_name_the_distribution_that_installs_each_library(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    from output.schema import validate_tree

    site = _site(tmp_path, ["helper"])
    module = str(site / "pkg/mod.cpython-311-x86_64-linux-gnu.so")
    tree = run_cli("tree", module)
    assert tree.exit_code == 0 and "libhelper.so => " in tree.stdout and "(installed by helper)" in tree.stdout
    doc = json.loads(run_cli("tree", "--format", "json", module).stdout)
    validate_tree(doc)
    needed = {n["name"]: n for o in doc["roots"][0]["objects"] for n in o["needed"]}
    assert needed["libhelper.so"]["distribution"] == "helper"
    why = run_cli("why", module, "libhelper.so")
    assert "(installed by helper)" in why.stdout


def test_a_declared_library_only_distribution_nothing_uses_is_a_note(tmp_path: Path) -> None:
    site = _site(tmp_path, ["helper", "spare", "tools"])
    (site / "spare").mkdir()
    shutil.copy(PYEXT / "lib/libhelper.so", site / "spare/libspare.so.1")
    _dist_info(site, "spare", ["spare/__init__.py", "spare/libspare.so.1"])
    _dist_info(site, "tools", ["tools/cli.py", "tools/libtools.so"])  # a Python module of its own: not judged
    report = audit([str(site / "pkg")])
    (note,) = [f for f in report.findings if f.rule == "unused-dependency"]
    assert note.severity.value == "note" and note.subject == "spare" and note.evidence["libraries"] == ["libspare.so.1"]
    # app's Python preloads it by name (as torch's __init__.py does with ctypes): a use
    (site / "pkg/__init__.py").write_text("import ctypes\nctypes.CDLL('libspare.so.1')\n")
    record = site / "app-1.0.dist-info/RECORD"
    record.write_text(record.read_text() + "pkg/__init__.py,,\n")
    assert "unused-dependency" not in {f.rule for f in audit([str(site / "pkg")]).findings}


def _evaluations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of marker evaluations (``requirements._holds``), kept working."""
    import linkaudit.packages.requirements as requirements

    real, count = requirements._holds, [0]

    def counted(marker, env):  # type: ignore[no-untyped-def]
        count[0] += 1
        return real(marker, env)

    monkeypatch.setattr(requirements, "_holds", counted)
    return count


@pytest.mark.parametrize("n", [60, 600])
def test_requirements_under_many_extras_cost_linear_evaluations(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A distribution with ``n`` extras, each declaring one project: each line's marker is
    evaluated a bounded number of times (was once per line and extra: 360,000 at 600, 116 s)."""
    from linkaudit.packages.installation import InstallationModel
    from linkaudit.packages.metadata import Distribution

    extras = tuple(f"e{i}" for i in range(n))
    requires = ("base-dep", *(f'dep{i} ; extra == "E{i}"' for i in range(n)))  # PEP 685: case-folded
    requires += ('any-dep ; "e7" in extra',)  # an `in` test on extra: every extra is tried for it
    dist = Distribution("big", "1.0", "big.dist-info", requires=requires, extras=extras)
    model = InstallationModel(
        {"big": dist},
        Tag("cp311", "cp311", "manylinux_2_17_x86_64"),
        marker_environment(Tag("cp311", "cp311", "manylinux_2_17_x86_64")),
    )
    count = _evaluations(monkeypatch)
    under = model.declares_under_extra("big")
    assert {k: v.under for k, v in under.items()} == {**{f"dep{i}": f"e{i}" for i in range(n)}, "any-dep": "e7"}
    assert "base-dep" in model.declares("big") and "base-dep" not in under
    assert count[0] <= 3 * n + 10  # each line: once without an extra, once for the extra it names
    model.declares_under_extra("big")
    assert count[0] <= 3 * n + 10  # computed once per distribution


@pytest.mark.parametrize("ships_its_own", [True, False])
def test_a_vendored_copy_loaded_first_by_another_distribution(tmp_path: Path, ships_its_own: bool) -> None:
    """Two distributions vendor one library under one name (auditwheel's hashed libgcc_s in numpy's
    and pyzmq's musllinux wheels): the second's need is matched to the copy the first loaded, but
    the second finds its own copy through its RUNPATH when alone — not an undeclared dependency.
    Without its own copy it does need the first's: still an error."""
    site = tmp_path / "site"
    for name in ("first", "second"):
        (site / name / "lib").mkdir(parents=True)
        shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / name)
        files = [f"{name}/mod.cpython-311-x86_64-linux-gnu.so"]
        if name == "first" or ships_its_own:
            shutil.copy(PYEXT / "lib/libhelper.so", site / name / "lib")
            files.append(f"{name}/lib/libhelper.so")
        _dist_info(site, name, files)
    report = audit([str(site / "first"), str(site / "second")])
    found = [f for f in report.findings if f.rule == "undeclared-dependency"]
    if ships_its_own:
        assert found == [], [f.message for f in found]
    else:
        (finding,) = found
        assert finding.evidence["owner"] == "first" and finding.evidence["distribution"] == "second"


def _undeclared_beside_a_py3_wheel(tmp_path: Path, requires: list[str]) -> str:
    """The undeclared-dependency message for app (cp311, ``requires``) needing libhelper.so of
    helper, a ``py3-none`` wheel of a newer glibc: the installation's target is helper's tag."""
    site = tmp_path / "site"
    (site / "pkg/lib").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg")
    shutil.copy(PYEXT / "lib/libhelper.so", site / "pkg/lib")
    _dist_info(site, "app", ["pkg/mod.cpython-311-x86_64-linux-gnu.so"], requires)
    _dist_info(site, "helper", ["pkg/lib/libhelper.so"], tag="py3-none-manylinux_2_28_x86_64")
    (finding,) = [f for f in audit([str(site / "pkg")]).findings if f.rule == "undeclared-dependency"]
    assert finding.evidence["owner"] == "helper" and finding.evidence["distribution"] == "app"
    return finding.message


def test_an_undeclared_dependency_names_the_distributions_own_target(tmp_path: Path) -> None:
    """app's Requires-Dist is judged for app's own tag (its markers' environment is the same), not
    for the other wheel's ``py3-none-manylinux_2_28_x86_64`` that made the installation's target."""
    message = _undeclared_beside_a_py3_wheel(tmp_path, [])
    assert f"not in its Requires-Dist for {TAG}" in message and "py3-none" not in message
    assert "add 'helper' to app's Requires-Dist" in message


def test_a_requirement_its_marker_excludes_asks_for_the_marker(tmp_path: Path) -> None:
    """``helper ; python_version < "3.11"`` is in app's Requires-Dist, but not for cp311: the
    requirement is there, its marker excludes the target — the fix is the marker, not adding it."""
    message = _undeclared_beside_a_py3_wheel(tmp_path, ['helper ; python_version < "3.11"'])
    assert f"excludes its target {TAG}" in message and "py3-none" not in message
    assert """its Requires-Dist has 'helper ; python_version < "3.11"'""" in message
    assert 'fix the marker (python_version < "3.11")' in message
    assert "add 'helper'" not in message


@pytest.mark.parametrize(
    ("marker", "undeclared"), [('python_version >= "3.12"', False), ('python_version < "3.12"', True)]
)
def test_markers_are_judged_for_the_python_a_distribution_names(tmp_path: Path, marker: str, undeclared: bool) -> None:
    """app is a ``cp312`` wheel; the installation's platform comes from helper's ``py3-none``
    manylinux_2_28 tag, which names no Python: markers were judged for 3.11 (the default), so
    ``helper ; python_version >= "3.12"`` was an undeclared dependency.  The Python is app's."""
    site = tmp_path / "site"
    (site / "pkg/lib").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg/mod.cpython-312-x86_64-linux-gnu.so")
    shutil.copy(PYEXT / "lib/libhelper.so", site / "pkg/lib")
    tag = "cp312-cp312-manylinux_2_17_x86_64"
    _dist_info(site, "app", ["pkg/mod.cpython-312-x86_64-linux-gnu.so"], [f"helper ; {marker}"], tag=tag)
    _dist_info(site, "helper", ["pkg/lib/libhelper.so"], tag="py3-none-manylinux_2_28_x86_64")
    found = [f for f in audit([str(site / "pkg")]).findings if f.rule == "undeclared-dependency"]
    assert bool(found) is undeclared, [f.message for f in found]


@pytest.mark.parametrize(
    ("record", "on_disk"),
    [
        ("ctbind/__init__.py,sha256=x,58\n", False),  # pip's RECORD: the size says it has code
        ("ctbind/__init__.py,,\n", True),  # no size recorded: the installed file says it
        ("ctbind/__init__.py,,\nctbind/_impl.py,,\n", False),  # a module beside the package's
    ],
)
def test_a_dependency_with_a_python_module_of_its_own_is_never_unused(
    tmp_path: Path, record: str, on_disk: bool
) -> None:
    """ctbind's library is loaded by ctypes from its own ``__init__.py``, which app imports: only
    a distribution with nothing but shared libraries (and empty namespace ``__init__.py`` files) can
    be judged unused; one with a Python module of its own (a package ``__init__.py`` with code) cannot."""
    site = _site(tmp_path, ["helper", "ctbind"])
    (site / "ctbind").mkdir()
    shutil.copy(PYEXT / "lib/libhelper.so", site / "ctbind/libctbind.so.1")
    if on_disk:
        (site / "ctbind/__init__.py").write_text("import ctypes\n_lib = ctypes.CDLL('lib' 'ctbind.so.1')\n")
    _dist_info(site, "ctbind", ["ctbind/libctbind.so.1"])
    (site / "ctbind-1.0.dist-info/RECORD").write_text("ctbind/libctbind.so.1,,\n" + record)
    assert "unused-dependency" not in {f.rule for f in audit([str(site / "pkg")]).findings}
    # the same distribution whose __init__.py is an empty namespace placeholder (NVIDIA's): a note
    (site / "ctbind/__init__.py").write_text("")
    (site / "ctbind-1.0.dist-info/RECORD").write_text(
        "ctbind/libctbind.so.1,,\nctbind/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
    )
    (note,) = [f for f in audit([str(site / "pkg")]).findings if f.rule == "unused-dependency"]
    assert note.subject == "ctbind"


def test_record_sizes_name_the_package_init_files_with_code() -> None:
    from linkaudit.packages.metadata import distribution

    record = (
        "a/__init__.py,sha256=x,0\n"
        "b/__init__.py,sha256=y,12\n"
        '"c,d/__init__.py",sha256=z,3\n'
        "e/__init__.py,,\n"
        "f/mod.py,sha256=w,9\n"
    )
    dist = distribution("x-1.0.dist-info", {"RECORD": record})
    assert dist.inits == frozenset({"b/__init__.py", "c,d/__init__.py"})


@pytest.mark.parametrize("bad", ["helper >=", "helper ; extra ==", "helper (>=1.0", "!!helper"])
def test_a_requires_dist_line_that_cannot_be_parsed_is_said(tmp_path: Path, bad: str) -> None:
    """A malformed ``Requires-Dist`` was passed over in silence, and the library of the distribution
    it meant then reported as "does not declare": the line and packaging's error are said (the
    rule's own finding, naming the METADATA), the undeclared finding points at it, and the other
    lines still count (``other`` declared on the next line is declared)."""
    site = _site(tmp_path, [bad, "other"])
    _dist_info(site, "other", [])
    findings = [f for f in audit([str(site / "pkg")]).findings if f.rule == "undeclared-dependency"]
    (line,) = [f for f in findings if f.subject == bad]
    assert line.evidence["requirement"] == bad and line.evidence["error"].startswith("Expected")
    assert line.evidence["metadata"].endswith("app-1.0.dist-info/METADATA")
    assert f"Requires-Dist: {bad}" in line.message and line.evidence["error"] in line.message
    assert "\n" not in line.message
    (needed,) = [f for f in findings if f.subject == "libhelper.so"]
    assert bad in needed.message and "cannot be parsed" in needed.message
    assert declared([bad, "other"], {}) and [d.name for d in declared([bad, "other"], {})] == ["other"]


@pytest.mark.parametrize(
    "line",
    ["helper ; extra == 'gpu'", 'helper ; extra == "gpu"', "helper ; extra == 'gpu' and python_version >= '3'"],
)
def test_a_requirement_only_under_an_extra_says_the_extra(tmp_path: Path, line: str) -> None:
    """``helper ; extra == "gpu"`` in a METADATA that lists no ``Provides-Extra: gpu``: the advice was
    ``fix the marker (extra == "gpu")`` and the line was quoted in single quotes around its own
    (``'helper ; extra == 'gpu''``). The message says helper is declared only for the extra `gpu`
    (declare it unconditionally if the library loads without it), and quotes the line with a
    character it does not hold."""
    site = _site(tmp_path, [line])
    (finding,) = [f for f in audit([str(site / "pkg")]).findings if f.rule == "undeclared-dependency"]
    message = finding.message
    assert "only for the extra `gpu`" in message and "declare it unconditionally" in message
    assert "fix the marker" not in message
    quote = next(q for q in "'\"`" if q not in line)
    assert f"{quote}{line}{quote}" in message, message
    # every quoted span balances: no quote character of the line reused around it
    assert f"'{line}'" not in message if "'" in line else True
