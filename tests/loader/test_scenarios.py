"""The loader emulation on the scenarios that separate a faithful ld.so from a naive one.

Each expectation was checked against glibc 2.36's real loader (``ldd -r``) on these
same trusted fixtures; see sample_bins/README.md, "Loader scenarios".
"""

from __future__ import annotations

from linkaudit.loader.ldso import Outcome, Source
from linkaudit.loader.target import TargetEnvironment

from .helpers import SCENARIOS, analyze_paths, audit_paths, resolution, scenario


def rules_of(report, rule):  # type: ignore[no-untyped-def]
    return [f for f in report.findings if f.rule == rule]


def test_runpath_is_not_inherited() -> None:
    a = analyze_paths(scenario("runpath_not_inherited"), entries=(scenario("runpath_not_inherited/app"),))
    assert resolution(a, "/app", "libmid.so").source is Source.RUNPATH
    leaf = resolution(a, "lib/libmid.so", "libleaf.so")
    assert not leaf.found
    assert all(at.source is not Source.RUNPATH for at in leaf.attempts)  # app's RUNPATH is not used for libmid's needs
    report = audit_paths(scenario("runpath_not_inherited"), entries=(scenario("runpath_not_inherited/app"),))
    (f,) = rules_of(report, "library-not-found")
    assert f.subject == "libleaf.so"
    assert [p.rsplit("/", 1)[-1] for p in f.evidence["roots"][0]["chain"]] == ["app", "libmid.so", "libleaf.so"]
    assert "cannot open shared object file" in f.message
    assert f.evidence["attempts"]


def test_rpath_is_inherited() -> None:
    a = analyze_paths(scenario("rpath_inherited"), entries=(scenario("rpath_inherited/app"),))
    leaf = resolution(a, "lib/libmid.so", "libleaf.so")
    assert leaf.found and leaf.source is Source.RPATH and leaf.owner and leaf.owner.endswith("/app")


def test_rpath_ignored_under_the_requesters_runpath() -> None:
    a = analyze_paths(scenario("rpath_cut_by_runpath"), entries=(scenario("rpath_cut_by_runpath/app"),))
    leaf = resolution(a, "lib/libmid.so", "libleaf.so")
    assert not leaf.found
    assert leaf.attempts[0].source is Source.RUNPATH
    assert Source.RPATH not in {at.source for at in leaf.attempts}


def test_an_ancestor_with_runpath_contributes_no_rpath() -> None:
    a = analyze_paths(scenario("ancestor_runpath"), entries=(scenario("ancestor_runpath/app"),))
    assert resolution(a, "/app", "libmid.so").found
    leaf = resolution(a, "mid/libmid.so", "libleaf.so")
    assert not leaf.found
    assert Source.RPATH not in {at.source for at in leaf.attempts}


def test_origin_is_the_path_found_by_not_the_real_path() -> None:
    via_link = analyze_paths(
        scenario("origin_symlink/link/libroot.so"), entries=(scenario("origin_symlink/link/libroot.so"),)
    )
    dep = resolution(via_link, "link/libroot.so", "libdep.so")
    assert dep.found and dep.path and dep.path.endswith("link/../deps/libdep.so")
    via_real = analyze_paths(scenario("origin_symlink/pkg"), entries=(scenario("origin_symlink/pkg/real/libroot.so"),))
    assert not resolution(via_real, "real/libroot.so", "libdep.so").found


def test_loaded_soname_is_reused_and_binding_follows() -> None:
    a = analyze_paths(scenario("soname_reuse"), entries=(scenario("soname_reuse/app"),))
    second = resolution(a, "lib/libsecond.so", "libdup.so.1")
    assert second.source is Source.LOADED and second.path and second.path.endswith("one/libdup.so.1")
    report = audit_paths(scenario("soname_reuse"), entries=(scenario("soname_reuse/app"),))
    unresolved = [f for f in rules_of(report, "unresolved-symbol") if f.file.endswith("libsecond.so")]
    assert unresolved and unresolved[0].evidence["symbols"] == ["dup_two"]


def test_wrong_class_candidate_is_skipped() -> None:
    a = analyze_paths(scenario("wrong_class"), entries=(scenario("wrong_class/app"),))
    leaf = resolution(a, "/app", "libleaf.so")
    assert leaf.found and leaf.path and leaf.path.endswith("lib64/libleaf.so")
    assert leaf.attempts[0].outcome is Outcome.WRONG_CLASS and leaf.attempts[0].path.endswith("lib32/libleaf.so")


def test_non_elf_candidate_stops_the_load() -> None:
    report = audit_paths(scenario("not_elf_candidate"), entries=(scenario("not_elf_candidate/app"),))
    (f,) = rules_of(report, "library-not-found")
    assert f.evidence["error"] and "lib32/libleaf.so" in f.evidence["error"]
    assert f.evidence["attempts"][-1]["outcome"] == "invalid"


def test_versions_unversioned_reference_binds_and_missing_version_fails() -> None:
    report = audit_paths(scenario("versions"), entries=(scenario("versions/app_new"), scenario("versions/app_old")))
    (f,) = rules_of(report, "version-not-found")
    assert f.subject == "PROV_2.0"
    assert f.file.endswith("lib/libuses_new.so")
    assert f.evidence["provider"].endswith("old/libprov.so")
    assert f.evidence["symbols"] == ["prov_b"]
    assert "version `PROV_2.0' not found" in f.message
    a = analyze_paths(scenario("versions"), entries=(scenario("versions/app_new"),))
    bounds = next(v for (root, obj), v in a.bindings.items() if obj.endswith("libunversioned.so"))
    prov_a = next(b for b in bounds if b.symbol.name == "prov_a")
    assert prov_a.symbol.version is None and prov_a.provider and prov_a.provider.endswith("new/libprov.so")


def test_unresolved_strong_is_an_error_weak_a_note() -> None:
    report = audit_paths(scenario("unresolved"), entries=(scenario("unresolved/libroot.so"),))
    findings = [f for f in rules_of(report, "unresolved-symbol") if f.file.endswith("libroot.so")]
    by_weak = {f.evidence["weak"]: f for f in findings}
    assert by_weak[False].evidence["symbols"] == ["half_missing"] and by_weak[False].severity.value == "error"
    assert by_weak[True].evidence["symbols"] == ["optional_feature"] and by_weak[True].severity.value == "note"


def test_unused_needed() -> None:
    report = audit_paths(scenario("unused_needed"), entries=(scenario("unused_needed/libroot.so"),))
    found = [(f.file.rsplit("/", 1)[-1], f.subject) for f in rules_of(report, "unused-needed")]
    assert ("libroot.so", "libnotused.so") in found
    assert ("libroot.so", "libused.so") not in found


def test_rtld_global_preload_changes_the_copy_bound() -> None:
    alone = audit_paths(scenario("global_preload"), entries=(scenario("global_preload/libroot.so"),))
    assert rules_of(alone, "version-not-found") == []
    env = TargetEnvironment(dlopen_global=(scenario("global_preload/a/libdup.so.1"),))
    preloaded = audit_paths(scenario("global_preload"), entries=(scenario("global_preload/libroot.so"),), env=env)
    (f,) = rules_of(preloaded, "version-not-found")
    assert f.subject == "DUP_2" and f.evidence["provider"].endswith("a/libdup.so.1")


def test_python_extension_interpreter_symbols_are_not_findings() -> None:
    report = audit_paths(scenario("pyext"))
    assert rules_of(report, "unresolved-symbol") == []
    assert rules_of(report, "library-not-found") == []


def test_ld_library_path_and_hwcaps(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """LD_LIBRARY_PATH comes after RPATH and before RUNPATH; glibc-hwcaps subdirectories are tried first."""
    import shutil

    root = tmp_path / "s"
    shutil.copytree(scenario("runpath_not_inherited"), root, symlinks=True)
    extra = tmp_path / "extra" / "glibc-hwcaps" / "x86-64-v2"
    extra.mkdir(parents=True)
    shutil.copy(root / "lib" / "libleaf.so", extra / "libleaf.so")
    env = TargetEnvironment(ld_library_path=(str(tmp_path / "extra"),))
    a = analyze_paths(str(root), entries=(str(root / "app"),), env=env)
    leaf = resolution(a, "lib/libmid.so", "libleaf.so")
    assert leaf.source is Source.LD_LIBRARY_PATH
    assert leaf.path == str(extra / "libleaf.so")
    env3 = TargetEnvironment(ld_library_path=(str(tmp_path / "extra"),), hwcaps_level="none")
    a3 = analyze_paths(str(root), entries=(str(root / "app"),), env=env3)
    assert not resolution(a3, "lib/libmid.so", "libleaf.so").found


def test_sibling_extension_modules_share_libraries_not_symbols(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One Python process: a later import reuses a library an earlier one loaded (by SONAME),
    whatever its own RUNPATH would find; the modules do not see each other's symbols."""
    import shutil

    from linkaudit.loader.closure import RootKind

    src = SCENARIOS / "pyext"
    for name in ("a", "b"):
        (tmp_path / name / "lib").mkdir(parents=True)
        shutil.copy(
            src / "mod.cpython-311-x86_64-linux-gnu.so", tmp_path / name / f"mod{name}.cpython-311-x86_64-linux-gnu.so"
        )
        shutil.copy(src / "lib" / "libhelper.so", tmp_path / name / "lib" / "libhelper.so")
    mod_a = str(tmp_path / "a" / "moda.cpython-311-x86_64-linux-gnu.so")
    mod_b = str(tmp_path / "b" / "modb.cpython-311-x86_64-linux-gnu.so")
    a = analyze_paths(str(tmp_path), entries=(mod_a, mod_b))
    first = resolution(a, "a/moda.cpython-311-x86_64-linux-gnu.so", "libhelper.so")
    second = resolution(a, "b/modb.cpython-311-x86_64-linux-gnu.so", "libhelper.so")
    assert first.source is Source.RUNPATH and first.path and first.path.endswith("a/lib/libhelper.so")
    assert second.source is Source.LOADED and second.path == first.path
    load_b = next(ld for ld in a.loads if ld.root == mod_b)
    assert load_b.kind is RootKind.PYTHON_IMPORT
    assert mod_a not in load_b.scope_for(mod_b)  # siblings provide no symbols to each other
