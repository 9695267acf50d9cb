"""A Python import's global scope holds the interpreter's libc (loader/closure.py
``INTERPRETER_NEEDED`` for glibc; musl's loader, which is its libc, in loader/musl.py): an
extension module linked without libc (no DT_NEEDED, as numpy's ``_operand_flag_tests``) binds
``strlen`` and the weak ``__cxa_finalize`` there.  Samples: sample_bins/build.sh (``ext_libc/``)
and build_targets.sh (``targets/musl/ext/``); the real numpy wheels in tests/test_realtargets.py."""

from __future__ import annotations

import json
import posixpath
from dataclasses import replace
from pathlib import Path

from linkaudit import read
from linkaudit.loader.analysis import LinkageAnalysis, analyze
from linkaudit.loader.closure import INTERPRETER
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Binary, Libc

BINS = Path(__file__).resolve().parents[2] / "sample_bins"
GLIBC_EXT = BINS / "ext_libc/_libconly.cpython-311-x86_64-linux-gnu.so"
MUSL_EXT = BINS / "targets/musl/ext/_libconly.cpython-311-x86_64-linux-musl.so"


def _read(path: Path) -> Binary:
    (b,) = read(str(path))
    return b


def _bound(a: LinkageAnalysis, ext: Binary) -> dict[str, str | None]:
    return {b.symbol.name: b.provider for b in a.bindings[(ext.path, ext.path)]}


def test_the_samples_have_no_needed_and_only_libc_symbols() -> None:
    for path in (GLIBC_EXT, MUSL_EXT):
        ext = _read(path)
        assert ext.needed_names == ()
        strong = {s.name for s in ext.symbols.undefined() if s.name and not s.weak}
        assert strong == {"strlen"} and "__cxa_finalize" in {s.name for s in ext.symbols.undefined()}


def test_a_glibc_import_binds_libc_symbols_in_the_interpreters_libc() -> None:
    ext = _read(GLIBC_EXT)
    a = analyze([ext], TargetEnvironment())
    (load,) = a.loads
    bound = _bound(a, ext)
    assert posixpath.basename(bound["strlen"] or "") == "libc.so.6"
    assert bound["__cxa_finalize"] == bound["strlen"]
    assert bound["_ITM_registerTMCloneTable"] is None  # weak, and no libc defines it: stays unbound
    libc = load.object(bound["strlen"] or "")
    assert libc is not None and libc.parent == INTERPRETER
    assert load.scope_for(ext.path)[:2] == [INTERPRETER, libc.path]


def test_a_musl_import_binds_libc_symbols_in_the_loader() -> None:
    ext = replace(_read(MUSL_EXT), libc=Libc.MUSL)  # a module without DT_NEEDED: musl by its wheel's tag
    a = analyze([ext], TargetEnvironment())
    assert [ld.loader for ld in a.loads] == ["musl"]
    bound = _bound(a, ext)
    assert (bound["strlen"] or "").endswith("ld-musl-x86_64.so.1")
    assert bound["__cxa_finalize"] == bound["strlen"]


def test_check_reports_nothing_for_the_glibc_sample(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-config", "--format", "json", str(GLIBC_EXT))
    findings = json.loads(r.stdout)["findings"]
    assert [f for f in findings if f["rule"] == "unresolved-symbol"] == [] and r.exit_code == 0
