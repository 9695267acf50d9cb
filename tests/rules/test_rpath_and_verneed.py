from __future__ import annotations

from .helpers import findings


def test_build_tree_rpath_is_an_error_absolute_a_warning() -> None:
    by_entry = {f.evidence["entry"]: f for f in findings("misc/libleak.so", rule="rpath-leak")}
    assert set(by_entry) == {"/home/builder/pytorch/build/lib", "/usr/local/cuda/lib64/stubs"}  # $ORIGIN is fine
    assert all(f.severity.value == "error" for f in by_entry.values())
    assert by_entry["/usr/local/cuda/lib64/stubs"].evidence["tag"] == "DT_RPATH"
    (f,) = findings("misc/libabs.so", rule="rpath-leak")
    assert (f.severity.value, f.evidence["reason"], f.evidence["tag"]) == ("warning", "absolute", "DT_RUNPATH")


def test_origin_relative_runpath_is_clean() -> None:
    assert findings("fixed/libtorch_cuda.so", "ext/_C.cpython-311-x86_64-linux-gnu.so", rule="rpath-leak") == []


def test_verneed_naming_a_file_not_needed() -> None:
    (f,) = findings("misc/libverneed_mismatch.so", rule="verneed-mismatch")
    assert f.subject == "libnvrtc.so.12"
    assert f.evidence["needed"] == ["libnvrtc-1a2b3c4d.so.12", "libc.so.6"]
    assert "dl-version.c" in f.message


def test_consistent_verneed_is_clean() -> None:
    assert findings("fixed/libtorch_cuda.so", "misc/libnewglibc.so", rule="verneed-mismatch") == []


def _rpath_findings(*entries: str):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.rules.rpath_leak import RpathLeak

    from .helpers import SAMPLES

    (b,) = read(str(SAMPLES / "misc/libabs.so"))
    return {
        f.evidence["entry"]: f for f in RpathLeak().check(AuditContext((replace(b, runpath=entries),), AuditConfig()))
    }


def test_origin_must_be_the_whole_token() -> None:
    got = _rpath_findings("$ORIGIN", "$ORIGIN/../lib", "${ORIGIN}/lib", "$ORIGINAL/lib", "${ORIGIN}x")
    assert set(got) == {"$ORIGINAL/lib", "${ORIGIN}x"}
    assert got["$ORIGINAL/lib"].evidence["reason"] == "relative"


def test_markers_match_whole_path_components_and_say_what_they_are() -> None:
    got = _rpath_findings(
        "/usr/lib/stubsfoo", "/usr/local/cuda/lib64/stubs", "/opt/x/builder/lib", "/tmp/pip-req-build-1a2b/lib"
    )
    assert got["/usr/lib/stubsfoo"].evidence["reason"] == "absolute"
    assert got["/opt/x/builder/lib"].evidence["reason"] == "absolute"
    stubs = got["/usr/local/cuda/lib64/stubs"]
    assert (stubs.evidence["reason"], stubs.evidence["marker"]) == ("build-tree", "/stubs/")
    assert "stub libraries" in stubs.message and "must never be found at run time" in stubs.message
    assert got["/tmp/pip-req-build-1a2b/lib"].evidence["marker"] == "/tmp/"


def test_conda_host_placeholder_is_not_a_leak_but_the_build_env_is() -> None:
    host = "/home/conda/feedstock_root/build_artifacts/pkg_1733/_h_env_placehold_placehold_placehold/lib"
    short = "/opt/conda/conda-bld/pkg_1733/_h_env/lib"
    build_env = "/home/conda/feedstock_root/build_artifacts/pkg_1733/_build_env/lib"
    got = _rpath_findings(host, short, "/opt/anaconda1anaconda2anaconda3/lib", build_env)
    assert set(got) == {build_env}
    assert got[build_env].evidence["marker"] == "/_build_env/"


def test_rpath_data_schema_is_checked(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from linkaudit import ConfigError
    from linkaudit.rules import data

    monkeypatch.setattr(data, "SCHEMAS", {"rpath": 3})
    data.rpath_data.cache_clear()
    try:
        with pytest.raises(ConfigError, match="expected 3"):
            data.rpath_data()
    finally:
        data.rpath_data.cache_clear()


def test_verneed_mismatch_names_the_rename() -> None:
    (f,) = findings("misc/libverneed_mismatch.so", rule="verneed-mismatch")
    assert "(libnvrtc.so.12)" not in f.message  # the version list only echoed the file name
    assert "DT_NEEDED has libnvrtc-1a2b3c4d.so.12 instead" in f.message and "not vn_file" in f.message
    assert f.evidence["renamed_to"] == "libnvrtc-1a2b3c4d.so.12"


def test_verneed_mismatch_without_a_rename() -> None:
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.model import NeededLibrary
    from linkaudit.rules.verneed_mismatch import VerneedMismatch

    from .helpers import SAMPLES

    (b,) = read(str(SAMPLES / "misc/libverneed_mismatch.so"))
    b = replace(b, needed=(NeededLibrary("libc.so.6"),) * 3)
    (f,) = VerneedMismatch().check(AuditContext((b,), AuditConfig()))
    assert "no DT_NEEDED entry is libnvrtc.so.12" in f.message
    assert f.evidence["renamed_to"] is None and f.evidence["needed"] == ["libc.so.6"]


def test_dlopen_names_unversioned_driver_and_hash_renamed_sibling() -> None:
    by_name = {f.evidence["name"]: f for f in findings("dlopen", rule="dlopen-name")}
    assert by_name["libcuda.so"].evidence["problem"] == "unversioned-driver-name"
    sibling = by_name["libnvrtc.so.12"]
    assert sibling.evidence["problem"] == "hash-renamed-sibling"
    assert sibling.evidence["sibling"].endswith("dlopen/libnvrtc-1a2b3c4d.so.12")
    assert all(f.severity.value == "warning" for f in by_name.values())


def test_dlopen_names_are_read_from_rodata_only() -> None:
    from linkaudit import read

    from .helpers import SAMPLES

    (b,) = read(str(SAMPLES / "dlopen/libdlopens.so"))
    assert b.dlopen_names == ("libcuda.so", "libnvrtc.so.12")
    (plain,) = read(str(SAMPLES / "fixed/libtorch_cuda.so"))
    assert plain.dlopen_names == ()
    (bare,) = read(str(SAMPLES / "misc/libnoshdr.so"))
    assert bare.dlopen_names == ()  # no section headers: no .rodata to read


def test_executable_stack_and_text_relocations() -> None:
    (stack,) = findings("misc/libexecstack.so", rule="executable-stack")
    assert stack.evidence["gnu_stack"] == "rwx"
    assert stack.severity.value == "error" and stack.evidence["dlopened"] is True  # a dlopen root here
    assert "glibc 2.41" in stack.message
    (textrel,) = findings("arch/libtextrel32.so", rule="text-relocations")
    assert textrel.severity.value == "warning"
    assert findings("fixed/libtorch_cuda.so", "misc/hello", rule="executable-stack") == []
    assert findings("fixed/libtorch_cuda.so", rule="text-relocations") == []


def test_executable_stack_is_a_warning_for_an_executable() -> None:
    from dataclasses import replace

    from linkaudit import AuditConfig, read
    from linkaudit.context import AuditContext
    from linkaudit.rules.elf_hygiene import ExecutableStack

    from .helpers import SAMPLES

    (hello,) = read(str(SAMPLES / "misc/hello"))
    no_note = replace(hello, gnu_stack=None)  # no PT_GNU_STACK on x86-64: the default stack is executable
    (f,) = list(ExecutableStack().check(AuditContext((no_note,), AuditConfig(target=None))))
    assert f.severity.value == "warning" and f.evidence["gnu_stack"] == "absent"


def test_the_marker_is_named_as_it_occurs_in_the_path() -> None:
    """nvshmem's real leak: /data/tmp/openmpi_install/lib is a temporary directory at /data/tmp/, not
    "/tmp/" (a path it does not contain)."""
    got = _rpath_findings("/data/tmp/openmpi_install/lib", "/tmp/pip-req-build-1a2b/lib", "/usr/local/cuda/lib64/stubs")
    nvshmem = got["/data/tmp/openmpi_install/lib"]
    assert nvshmem.evidence["marker"] == "/tmp/" and nvshmem.evidence["marker_at"] == "/data/tmp/"
    assert "points into a temporary directory (/data/tmp/)" in nvshmem.message
    assert "(/tmp/)" not in nvshmem.message
    assert got["/tmp/pip-req-build-1a2b/lib"].evidence["marker_at"] == "/tmp/"
    assert got["/usr/local/cuda/lib64/stubs"].evidence["marker_at"] == "/usr/local/cuda/lib64/stubs"


def test_delocates_install_names_are_not_leaks_but_a_build_machines_are() -> None:
    """numpy's official macOS wheels: delocate sets each vendored dylib's LC_ID_DYLIB to
    ``/DLC/numpy/.dylibs/<name>`` on purpose (5 false rpath-leak warnings per wheel); an install
    name of the build machine (torch's libomp: /opt/homebrew/...) is still one."""
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.rules.rpath_leak import RpathLeak

    from .helpers import SAMPLES

    (b,) = read(str(SAMPLES / "macho/misc/libleaky.dylib"))

    def id_findings(install_name: str) -> list[str]:
        got = RpathLeak().check(AuditContext((replace(b, soname=install_name, rpath=(), needed=()),), AuditConfig()))
        return [f.evidence["entry"] for f in got if f.evidence["tag"] == "LC_ID_DYLIB"]

    assert id_findings("/DLC/numpy/.dylibs/libgcc_s.1.1.dylib") == []
    assert id_findings("/opt/homebrew/opt/libomp/lib/libomp.dylib") == ["/opt/homebrew/opt/libomp/lib/libomp.dylib"]
    assert id_findings("/usr/local/DLC/libx.dylib") == ["/usr/local/DLC/libx.dylib"]  # only delocate's own prefix


def test_a_file_with_thousands_of_leaking_entries_gets_100_findings_and_a_count(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A RUNPATH of 9,500 absolute entries in each of 40 files made 380,000 findings (466 MB from
    3.2 MB of input): a file gets ``MAX_PER_FILE`` of them and one that counts the rest."""
    import json

    from linkaudit import audit
    from linkaudit.output.json import render
    from linkaudit.rules.rpath_leak import MAX_PER_FILE

    from ..formats import elfbuild
    from ..output.schema import validate_report

    lib = tmp_path / "libr.so"
    lib.write_bytes(elfbuild.shared_library("libr.so", runpath=":".join(f"/home/u/build/d{i}" for i in range(300))))
    report = audit([str(lib)])
    leaks = [f for f in report.findings if f.rule == "rpath-leak"]
    assert len(leaks) == MAX_PER_FILE + 1
    (more,) = [f for f in leaks if f.subject == f"(+{300 - MAX_PER_FILE} more)"]
    assert more.evidence["entry"] == f"/home/u/build/d{MAX_PER_FILE}"  # the first not listed
    validate_report(json.loads(render(report)))


def test_a_file_of_thousands_of_dlopen_names_searches_the_first_and_the_driver_names(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """200,000 ``libN.so`` strings in a 2.5 MB file's .rodata were each searched for: 19.7 s, 388 MB.
    A file's first ``MAX_NAMES_PER_FILE`` names are searched, and every GPU driver name after them;
    the rest is one note that counts them (here the cap is 0, then 1, over the sample's two names)."""
    import json

    from linkaudit import audit
    from linkaudit.output.json import render
    from linkaudit.rules import dlopen_name

    from ..output.schema import validate_report
    from .helpers import SAMPLES

    searched: list[str] = []
    real = dlopen_name.search
    monkeypatch.setattr(dlopen_name, "search", lambda name, *a: searched.append(name) or real(name, *a))
    for cap in (0, 1):
        monkeypatch.setattr(dlopen_name, "MAX_NAMES_PER_FILE", cap)
        searched.clear()
        report = audit([str(SAMPLES / "dlopen")])
        found = {
            (f.evidence["name"], f.evidence["problem"], f.severity.value)
            for f in report.findings
            if f.rule == "dlopen-name"
        }
        assert searched == ["libcuda.so"]  # the driver name, past the cap or not; libnvrtc.so.12 is not searched
        assert found == {
            ("libcuda.so", "unversioned-driver-name", "warning"),
            ("libnvrtc.so.12", "too-many-names", "note"),
        }
        validate_report(json.loads(render(report)))
