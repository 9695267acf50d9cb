"""library-not-found when the missing library is installed: in an installed site, a library with
no RPATH/RUNPATH to its DT_NEEDED finds it, dlopen()ed alone, only when it is already loaded (glibc
matches loaded objects by SONAME before it searches; torch's ``__init__.py`` preloads the NVIDIA
libraries). The finding says where the library is installed and by which distribution — never
"not installed here", never "add your own distribution to your Requires-Dist" — and is a warning
when no import root's load fails."""

from __future__ import annotations

from pathlib import Path

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.report import Finding
from tests.loader.dagbuild import Lib, elf_bytes

TAG = "cp311-cp311-manylinux_2_28_x86_64"


def _dist(site: Path, name: str, libs: list[Lib], requires: tuple[str, ...] = ()) -> None:
    """Install ``libs`` (generated ELF files, at their ``file`` paths) as distribution ``name``."""
    for lib in libs:
        (site / lib.file).parent.mkdir(parents=True, exist_ok=True)
        (site / lib.file).write_bytes(elf_bytes(lib))
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    metadata = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{metadata}")
    (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {TAG}\n")
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in [*(lib.file for lib in libs), f"{info.name}/RECORD"]))


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    # one distribution: liba.so needs its sibling libb.so, and has no RUNPATH
    _dist(site, "alpha", [Lib("alpha/lib/liba.so", "liba.so", ("libb.so",)), Lib("alpha/lib/libb.so", "libb.so")])
    # a library of "cee" needs one of "dee", which cee declares and which is installed
    _dist(site, "dee", [Lib("dee/lib/libd.so.1", "libd.so.1"), Lib("dee/lib/libe.so", "libe.so")])
    _dist(site, "cee", [Lib("cee/lib/libc2.so", "libc2.so", ("libd.so.1",))], ("dee",))
    # an extension module (an import root) needing an installed library it cannot reach
    _dist(site, "pkg", [Lib("pkg/mod.cpython-311-x86_64-linux-gnu.so", None, ("libe.so",))], ("dee",))
    # nvidia-cufile's own libcufile.so.0 (the provider index names nvidia-cufile), not installed
    _dist(
        site, "nvidia-cufile", [Lib("nvidia/cu13/lib/libcufile_rdma.so.1", "libcufile_rdma.so.1", ("libcufile.so.0",))]
    )
    return site


def _findings(site: Path) -> dict[str, Finding]:
    config = AuditConfig(target=TargetEnvironment(system_dirs=()))
    report = audit([str(site)], config)
    return {f.subject: f for f in report.findings if f.rule == "library-not-found"}


def test_an_installed_library_no_search_reaches_is_found_only_when_preloaded(tmp_path: Path) -> None:
    site = _site(tmp_path)
    found = _findings(site)
    sibling, declared, imported = found["libb.so"], found["libd.so.1"], found["libe.so"]
    assert (
        f"libb.so is installed here, at {site}/alpha/lib/libb.so (from alpha, the same distribution)" in sibling.message
    )
    assert "only when it is already loaded" in sibling.message and "a RUNPATH of $ORIGIN would" in sibling.message
    assert "Requires-Dist" not in sibling.message and "not installed" not in sibling.message
    assert sibling.severity.value == "warning"  # only a plain dlopen() of liba.so fails
    assert sibling.evidence["installed"] == [f"{site}/alpha/lib/libb.so"]
    assert "(from dee, which cee declares as dee)" in declared.message
    assert "$ORIGIN/../../dee/lib" in declared.message and "not installed" not in declared.message
    assert declared.severity.value == "warning"
    # an import root's load fails: still an error, and it says the library is installed
    assert imported.severity.value == "error" and "libe.so is installed here" in imported.message
    assert imported.evidence["roots"][0]["reached"] is True


def test_a_distribution_is_never_asked_to_declare_itself(tmp_path: Path) -> None:
    own = _findings(_site(tmp_path))["libcufile.so.0"]
    assert "shipped by nvidia-cufile itself" in own.message and "Requires-Dist" not in own.message
    assert own.severity.value == "error" and own.evidence["installed"] == []
