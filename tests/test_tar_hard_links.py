"""A tar hard link keeps the contents its target had when the link was listed, as ``tar -x``
makes it (the link shares the first file's inode; a second member of the target's name is a new
file).  Before, the link was made to the replacement and the first contents' findings were lost."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit

from .tools import find_tool

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
LEAK = (SAMPLES / "misc/libleak.so").read_bytes()  # an rpath-leak
CLEAN = (SAMPLES / "misc/libweak.so").read_bytes()  # none


def _tar(path: Path, members: list[tuple[str, bytes | str]], mode: str) -> str:
    """``members``: (name, bytes) a regular file, (name, "=target") a hard link."""
    with tarfile.open(path, mode) as tf:  # type: ignore[call-overload]
        for name, what in members:
            info = tarfile.TarInfo(name)
            if isinstance(what, str):
                info.type, info.linkname = tarfile.LNKTYPE, what[1:]
                tf.addfile(info)
            else:
                info.size = len(what)
                tf.addfile(info, io.BytesIO(what))
    return str(path)


def _leaking(tarball: str, config: AuditConfig) -> set[str]:
    report = audit([tarball], config)
    return {f.file.split("!", 1)[1] for f in report.findings if f.rule == "rpath-leak"}


CASES = {
    "link-then-replaced": ([("lib/libx.so", LEAK), ("lib/libkeep.so", "=lib/libx.so"), ("lib/libx.so", CLEAN)], {"lib/libkeep.so"}),
    "chain": ([("lib/libx.so", LEAK), ("lib/a.so", "=lib/libx.so"), ("b/libb.so", "=lib/a.so"), ("lib/libx.so", CLEAN)], {"lib/a.so", "b/libb.so"}),
    "replaced-then-link": ([("lib/libx.so", LEAK), ("lib/libx.so", CLEAN), ("lib/libkeep.so", "=lib/libx.so")], set()),
    "clean-then-leaking": ([("lib/libx.so", CLEAN), ("lib/libkeep.so", "=lib/libx.so"), ("lib/libx.so", LEAK)], {"lib/libx.so"}),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mode", ["w", "w:gz"])
@pytest.mark.parametrize("loader", [True, False], ids=["loader", "no-loader"])
def test_a_hard_link_keeps_the_contents_it_was_listed_with(tmp_path: Path, case: str, mode: str, loader: bool) -> None:
    members, leaking = CASES[case]
    tarball = _tar(tmp_path / ("p.tar" if mode == "w" else "p.tar.gz"), members, mode)
    config = AuditConfig() if loader else AuditConfig(target=None)
    found = _leaking(tarball, config)
    # names of one inode are audited once (a hard link made a link to the file, as in a tree)
    assert (found and found <= leaking) if leaking else not found, found
    # as the tree GNU tar unpacks says (Python's tarfile writes a second member into the first's
    # inode, links and all: not what tar -x does)
    tar = find_tool("gnu-tar")
    if tar.path is None:
        return
    tree = tmp_path / "x"
    tree.mkdir()
    subprocess.run([tar.path, "-C", str(tree), "-xf", tarball], check=True)
    unpacked = {f.file.removeprefix(f"{tree}/") for f in audit([str(tree)], config).findings if f.rule == "rpath-leak"}
    assert len(unpacked) == len(found) and unpacked <= leaking
