"""The PE reader on the committed samples (sample_bins/pe/, built by sample_bins/build_pe.sh) and
on hostile variants of them; the seed bug's Windows form: driver-link and missing-provider."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linkaudit import audit, read
from linkaudit.errors import InputError
from linkaudit.model import Format, Kind, NeedKind

PE = Path(__file__).resolve().parents[2] / "sample_bins" / "pe"


def test_imports_delay_imports_exports_and_forwarders() -> None:
    (broken,) = read(str(PE / "broken/torch_cuda.dll"))
    assert (broken.format, broken.machine, broken.bits, broken.kind) == (Format.PE, "x86-64", 64, Kind.SHARED_LIBRARY)
    assert broken.soname == "torch_cuda.dll"
    assert [(n.name, n.kind) for n in broken.needed] == [("nvcuda.dll", NeedKind.PLAIN)]
    imports = sorted((s.name, s.version.file if s.version else None) for s in broken.symbols.iter_undefined())
    assert imports == [
        (f"nvrtc{n}", "nvcuda.dll")
        for n in ("CompileProgram", "CreateProgram", "DestroyProgram", "GetPTX", "GetPTXSize")
    ]
    assert [s.name for s in broken.symbols if s.defined] == ["torch_cuda_compile"]
    (delay,) = read(str(PE / "driver/delay_driver.dll"))
    assert [(n.name, n.kind) for n in delay.needed] == [("nvcuda.dll", NeedKind.DELAY_LOAD)]
    assert all(s.weak for s in delay.symbols.iter_undefined())  # may stay unresolved at load time
    (helper,) = read(str(PE / "imports/helper.dll"))
    assert helper.forwarders == (("forwarded_fn", "nvrtc64_120_0.nvrtcGetPTX"),)
    assert sorted(s.name for s in helper.symbols if s.defined) == ["forwarded_fn", "present_fn"]


def test_the_seed_bug_on_windows_and_its_fix(run_cli) -> None:  # type: ignore[no-untyped-def]
    broken = run_cli("check", "--no-config", "--format", "json", str(PE / "broken"))
    doc = json.loads(broken.stdout)
    rules = {f["rule"]: f for f in doc["findings"]}
    assert broken.exit_code == 1 and set(rules) == {"driver-link", "missing-provider"}
    assert rules["driver-link"]["severity"] == "error" and rules["driver-link"]["evidence"]["unused"] is True
    provider = rules["missing-provider"]
    assert provider["subject"] == "nvrtc64_*.dll" and provider["evidence"]["count"] == 5
    assert "could not be located in the dynamic link library nvcuda.dll" in provider["message"]
    fixed = run_cli("check", "--no-config", str(PE / "fixed"))
    assert fixed.exit_code == 0, fixed.stdout
    assert "0 errors, 0 warnings, 0 notes" in fixed.stdout


def test_a_delay_loaded_driver_is_a_note_a_plain_import_an_error() -> None:
    report = audit([str(PE / "driver")])
    by_file = {Path(f.file).name: f for f in report.findings if f.rule == "driver-link"}
    assert by_file["delay_driver.dll"].severity.value == "note"
    assert by_file["plain_driver.dll"].severity.value == "error"
    assert list(by_file["plain_driver.dll"].evidence["used_symbols"]) == ["cuDeviceGetCount", "cuInit"]


def test_two_dlls_exporting_one_name_interpose_on_nothing() -> None:
    assert [f for f in audit([str(PE)]).findings if f.rule == "duplicate-export"] == []


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda b: b[:64], "malformed PE file"),
        (lambda b: b[:2] + b"\0" * 62, "malformed PE file"),
        (lambda b: b"MZ" + b"\0" * 200, "malformed PE file"),
        (lambda b: b[:0x3C] + (0x7FFFFFF0).to_bytes(4, "little") + b[0x40:], "malformed PE file"),
    ],
)
def test_hostile_pe_files_are_named_with_a_reason(tmp_path: Path, mutate, reason: str) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.dll"
    bad.write_bytes(mutate((PE / "broken/torch_cuda.dll").read_bytes()))
    with pytest.raises(InputError) as err:
        read(str(bad))
    assert err.value.path == str(bad) and reason in err.value.reason
    report = audit([str(tmp_path), str(PE / "fixed")])  # the others are still audited
    assert report.has_unreadable and sum(f.status.value == "audited" for f in report.files) == 2


def test_every_truncation_of_a_pe_sample_is_read_or_refused_cleanly(tmp_path: Path) -> None:
    data = (PE / "imports/app.dll").read_bytes()
    cut = tmp_path / "cut.dll"
    for n in range(0, len(data), 97):
        cut.write_bytes(data[:n])
        try:
            read(str(cut))
        except InputError as exc:
            assert exc.path == str(cut) and exc.reason


def test_imports_are_bound_to_the_exports_of_dlls_among_the_inputs(tmp_path: Path) -> None:
    """app.dll imports absent_fn from helper.dll, which does not export it (Windows' message);
    forwarded_fn resolves through helper.dll's forwarder into nvrtc64_120_0.dll — and fails when
    the forwarder's target DLL lacks the function."""
    report = audit([str(PE / "imports")])
    finding, exe = [f for f in report.findings if f.rule == "unresolved-symbol"]  # app.dll, app.exe
    assert finding.file.endswith("app.dll") and finding.subject == "absent_fn" and finding.severity.value == "error"
    assert exe.file.endswith("app.exe") and exe.subject == "absent_fn"
    assert "The procedure entry point absent_fn could not be located in the dynamic link library helper.dll" in (
        finding.message
    )
    # app.dll given alone: the Windows search finds helper.dll beside it and judges that one
    alone = [f for f in audit([str(PE / "imports/app.dll")]).findings if f.rule == "unresolved-symbol"]
    assert [f.subject for f in alone] == ["absent_fn"]
    for name in ("app.dll", "helper.dll"):
        (tmp_path / name).write_bytes((PE / "imports" / name).read_bytes())
    # a "nvrtc64_120_0.dll" that exports no nvrtcGetPTX: the forwarder leads nowhere
    (tmp_path / "nvrtc64_120_0.dll").write_bytes((PE / "fixed/torch_cuda.dll").read_bytes())
    findings = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    (finding,) = [f for f in findings if f.file.endswith("app.dll")]
    assert list(finding.evidence["symbols"]) == ["absent_fn", "forwarded_fn"]
    (tmp_path / "helper.dll").unlink()  # the DLL is found nowhere: library-not-found, nothing to bind
    findings = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    assert [f for f in findings if f.file.endswith("app.dll")] == []


def test_the_windows_search_order_finds_or_names_a_missing_dll(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """torch_cuda.dll imports nvrtc64_120_0.dll: found beside it in fixed/; copied alone as a .pyd
    it is missing (ImportError in Python's words, every place tried), until --dll-directory adds
    the directory that holds it; Windows' own DLLs and API sets are never missing."""
    assert [f for f in audit([str(PE / "fixed")]).findings] == []
    pyd = tmp_path / "_C.cp311-win_amd64.pyd"
    pyd.write_bytes((PE / "fixed/torch_cuda.dll").read_bytes())
    doc = json.loads(run_cli("check", "--no-config", "--format", "json", str(pyd)).stdout)
    (finding,) = [f for f in doc["findings"] if f["rule"] == "library-not-found"]
    assert finding["subject"] == "nvrtc64_120_0.dll"
    assert finding["evidence"]["would_fail"] == (
        "ImportError: DLL load failed while importing _C: The specified module could not be found."
    )
    assert [a["source"] for a in finding["evidence"]["attempts"]] == ["dll-load-dir", "system"]
    assert finding["evidence"]["roots"][0]["kind"] == "python-import"
    found = run_cli("check", "--no-config", "--dll-directory", str(PE / "fixed"), str(pyd))
    assert found.exit_code == 0, found.stdout
    preloaded = run_cli("check", "--no-config", "--preload-dll", "NVRTC64_120_0.DLL", str(pyd))
    assert preloaded.exit_code == 0, preloaded.stdout


def test_system_dlls_and_api_sets_are_present() -> None:
    from linkaudit.loader.windows import is_system_dll

    for name in (
        "KERNEL32.dll",
        "ucrtbase.dll",
        "api-ms-win-crt-runtime-l1-1-0.dll",
        "python311.dll",
        "VCRUNTIME140.dll",
    ):
        assert is_system_dll(name), name
    for name in ("msvcp140.dll", "nvrtc64_120_0.dll", "nvcuda.dll", "cudart64_12.dll"):
        assert not is_system_dll(name), name


def test_system_dll_names_are_told_as_each_pattern_tells_them() -> None:
    """The patterns compiled together and answered once per name tell every name as ``fnmatch``
    of each pattern does: the list's names and patterns' own spellings, near misses, random names."""
    import fnmatch
    import random

    from linkaudit.loader import windows
    from linkaudit.rules.data import _load

    data = _load("windows")
    patterns = [p.lower() for p in [*data["python_dlls"], *data["api_set_patterns"]]]
    names = {n.lower() for n in data["system_dlls"] if "*" not in n}
    rnd = random.Random(7)
    probes = [*data["system_dlls"], *patterns, "python3.dll", "python312.dll", "PYTHON3.DLL", "python.dll"]
    probes += ["api-ms-win-", "api-ms-win", "ext-ms-win-x.dll", "xapi-ms-win-a.dll", "python3\n.dll", "python3x.dll\n"]
    alphabet = "apimswinextpython3.dl-*?[]\n"
    probes += ["".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 20))) for _ in range(3000)]
    probes += [p.replace("*", "".join(rnd.choice(alphabet) for _ in range(4))) for p in patterns for _ in range(50)]
    for name in probes:
        low = name.lower()
        expected = low in names or any(fnmatch.fnmatchcase(low, p) for p in patterns)
        assert windows.is_system_dll(name) == expected, name
    windows.is_system_dll.cache_clear()
    for _ in range(3):
        windows.is_system_dll("KERNEL32.dll")
    assert windows.is_system_dll.cache_info().misses == 1  # once per name


def test_tree_draws_the_windows_loads(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ..output.schema import validate_tree

    # app.dll: an input app.exe does not reach, loaded alone; drawn with --all-roots, as ELF's
    assert "app.dll [dlopen]" not in run_cli("tree", str(PE / "imports")).stdout
    r = run_cli("tree", "--all-roots", str(PE / "imports"))
    assert r.exit_code == 0
    assert f"helper.dll => {PE / 'imports/helper.dll'} [dll-load-dir]" in r.stdout
    doc = json.loads(run_cli("tree", "--all-roots", "--format", "json", str(PE / "imports")).stdout)
    validate_tree(doc)
    (app,) = [w for w in doc["windows_roots"] if w["root"].endswith("app.dll")]
    assert [(i["name"], i["source"]) for i in app["imports"]] == [("helper.dll", "dll-load-dir")]
    pyd = tmp_path / "_C.cp311-win_amd64.pyd"
    pyd.write_bytes((PE / "fixed/torch_cuda.dll").read_bytes())
    missing = run_cli("tree", str(pyd))
    assert missing.exit_code == 1 and "nvrtc64_120_0.dll => not found" in missing.stdout


def test_why_follows_the_windows_loads(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(PE / "imports"), "HELPER.DLL")  # names compare without case, as on Windows
    assert r.exit_code == 0 and "app.dll → helper.dll => " in r.stdout and "[dll-load-dir]" in r.stdout
    pyd = tmp_path / "_C.cp311-win_amd64.pyd"
    pyd.write_bytes((PE / "fixed/torch_cuda.dll").read_bytes())
    doc = json.loads(run_cli("why", "--format", "json", str(pyd), "nvrtc64_120_0.dll").stdout)
    (chain,) = doc["library_chains"]
    assert chain["kind"] == "python-import" and chain["path"] is None
    assert chain["tried"] == [str(tmp_path / "nvrtc64_120_0.dll"), "System32\\nvrtc64_120_0.dll"]
