"""A DT_NEEDED with a slash (``lib/libb.so``: linked by its path, the library having no SONAME) is
opened as written and never searched, by glibc (``elf/dl-load.c`` ``_dl_map_object``) and musl
alike; a relative one from the working directory of the process.  It was looked up from the
auditor's own working directory: ``check .`` inside the tree found it and said nothing, from
elsewhere the finding advised a RUNPATH, which ld.so never uses for such a name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .dagbuild import MUSL_LOADER, Lib, write


@pytest.mark.parametrize("loader", [None, MUSL_LOADER])
def test_a_relative_needed_path_is_not_found_wherever_check_runs(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: str | None
) -> None:  # type: ignore[no-untyped-def]
    app = tmp_path / "app"
    needed = ("lib/libb.so", "libc.musl-x86_64.so.1" if loader else "libc.so.6")
    write(
        str(app),
        [
            Lib("lib/libb.so", None, exports=("b",), interpreter=loader),
            Lib("main", None, needed=needed, imports=("b",), executable=True, interpreter=loader),
        ],
    )
    reports = []
    for where in (app, tmp_path):  # inside the tree (lib/libb.so exists from there) and outside it
        monkeypatch.chdir(where)
        r = run_cli("check", "--no-config", "--no-cache", "--format", "json", str(app))
        reports.append((r.exit_code, json.loads(r.stdout)))
    for code, doc in reports:
        (missing,) = [f for f in doc["findings"] if f["rule"] == "library-not-found" and f["subject"] == "lib/libb.so"]
        assert code == 1 and missing["file"] == str(app / "main")
        assert "never searched" in missing["message"] and "RUNPATH of $ORIGIN" not in missing["message"]
        assert "-Wl,-soname,libb.so" in missing["message"]
    assert os.getcwd() == str(tmp_path)


def test_an_absolute_needed_path_is_opened_as_written(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lib = tmp_path / "lib/libb.so"
    write(str(tmp_path), [Lib("lib/libb.so", None, exports=("b",))])
    write(str(tmp_path / "app"), [Lib("main", None, needed=(str(lib), "libc.so.6"), imports=("b",), executable=True)])
    r = run_cli("check", "--no-config", "--no-cache", "--format", "json", str(tmp_path / "app"))
    assert not [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "library-not-found"]
