"""Hostile link-line inputs (issue 13's promise for ``--link-line``): every one is a named
``ConfigError`` naming the file and the reason, read within bounds set by its size, never a
hang or an internal error.  Shapes from a hostile tester's generator (response files, CMake
``link.txt``, Ninja build files)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from linkaudit.errors import ConfigError
from linkaudit.link import elf as elf_link
from linkaudit.link import line as line_module
from linkaudit.link import ninja as ninja_module
from linkaudit.link.line import LinkInput, read_link_line
from linkaudit.model import Binary

_EDGE = "rule link\n  command = link $in\nbuild out.dll: link a.obj\n"


def _special_files(tmp_path: Path) -> dict[str, str]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return {"fifo": str(fifo), "device": "/dev/zero", "directory": str(tmp_path)}


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
@pytest.mark.parametrize("how", ["the line", "@file", "ninja include"])
def test_a_file_that_is_not_regular_is_refused_without_waiting(tmp_path: Path, kind: str, how: str) -> None:
    special = _special_files(tmp_path)[kind]
    if how == "the line":
        line = special
    elif how == "@file":
        (tmp_path / "ref.rsp").write_text(f"x.obj @{special}\n")
        line = str(tmp_path / "ref.rsp")
    else:
        (tmp_path / "inc.ninja").write_text(f"include {special}\n{_EDGE}")
        line = f"{tmp_path / 'inc.ninja'}:out.dll"
    with pytest.raises(ConfigError, match=rf"{special}: cannot read: not a regular file"):
        read_link_line(line)  # a FIFO opened blocking, or /dev/zero read to the end, never returns


@pytest.mark.parametrize(
    ("name", "content", "target"),
    [
        ("nul.rsp", "a\0b.obj @\0\n", ""),
        ("nul.ninja", "rule link\n  command = link $in\nbuild out.dll: link a\0b.obj\n", ":out.dll"),
        ("link.txt", "link.exe x.obj @inner.rsp\n", ""),  # the NUL one response file down
        ("compile_commands.json", json.dumps([{"arguments": ["link", "a\0b.obj"]}]), ""),
    ],
)
def test_a_nul_byte_anywhere_in_a_line_is_named(tmp_path: Path, name: str, content: str, target: str) -> None:
    (tmp_path / name).write_text(content)
    (tmp_path / "inner.rsp").write_text("c.obj\0\n")
    with pytest.raises(ConfigError, match=r"a NUL (byte|character) at offset \d+"):
        read_link_line(str(tmp_path / name) + target)  # was ValueError: embedded null byte (exit 3)


def test_ninja_variables_that_double_stop_at_a_budget_of_the_files_size(tmp_path: Path) -> None:
    doubling = "v0 = " + "x" * 1000 + "\n" + "".join(f"v{i} = $v{i - 1} $v{i - 1}\n" for i in range(1, 40))
    (tmp_path / "exp.ninja").write_text(doubling + "rule link\n  command = link $in $v39\nbuild out.dll: link a.obj\n")
    with pytest.raises(ConfigError, match=r"exp\.ninja: variables expand to more than \d+ characters") as caught:
        read_link_line(f"{tmp_path / 'exp.ninja'}:out.dll")  # was MemoryError after 2 GB
    limit = int(str(caught.value).split("more than ")[1].split()[0])
    size = (tmp_path / "exp.ninja").stat().st_size
    assert limit == ninja_module.EXPANSION_FLOOR + ninja_module.EXPANSION_PER_BYTE * size
    # one expansion that repeats a big variable is charged before its result is built
    many = "big = " + "y" * 100_000 + "\n" + "rule link\n  command = link $in" + " $big" * 2000 + "\n"
    (tmp_path / "many.ninja").write_text(many + "build out.dll: link a.obj\n")
    with pytest.raises(ConfigError, match="variables expand to more than"):
        read_link_line(f"{tmp_path / 'many.ninja'}:out.dll")


def test_response_file_fan_out_is_bounded_by_reads_and_words(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "fan.rsp").write_text("@fan2.rsp " * 2000 + "\n")
    (tmp_path / "fan2.rsp").write_text("@fan3.rsp " * 2000 + "\n")
    (tmp_path / "fan3.rsp").write_text("x.obj " * 100 + "\n")
    (tmp_path / "wide.rsp").write_text("@words.rsp " * 20 + "\n")
    (tmp_path / "words.rsp").write_text("y.obj " * 1000 + "\n")
    reads = []
    real = line_module.read_regular_file
    monkeypatch.setattr(line_module, "read_regular_file", lambda p, n: reads.append(p) or real(p, n))
    with pytest.raises(ConfigError, match=r"@fan3\.rsp: response files read more than 1000 times"):
        read_link_line(str(tmp_path / "fan.rsp"))  # 4 million reads before: a hang
    assert len(reads) == line_module.MAX_RESPONSE_FILES + 2  # the line, its reads, the one refused
    monkeypatch.setattr(line_module, "MAX_RESPONSE_WORDS", 10_000)  # the same rule, a smaller input
    with pytest.raises(ConfigError, match=r"@words\.rsp: .* more than 10000 words"):
        read_link_line(str(tmp_path / "wide.rsp"))
    (tmp_path / "huge.rsp").write_bytes(b"z" * (line_module.MAX_LINE_BYTES + 1))
    with pytest.raises(ConfigError, match=r"huge\.rsp: more than \d+ bytes"):
        read_link_line(str(tmp_path / "huge.rsp"))  # was read to 1 MiB and cut silently


def _coff(defs: list[bytes], refs: list[bytes]) -> bytes:
    """An x86-64 COFF object with one .text byte, defining ``defs`` and referencing ``refs``."""
    import struct

    def sym(name: bytes, section: int) -> bytes:
        return name.ljust(8, b"\0") + struct.pack("<IhHBB", 0, section, 0x20, 2, 0)

    symbols = b"".join(sym(d, 1) for d in defs) + b"".join(sym(r, 0) for r in refs)
    section = b".text\0\0\0" + struct.pack("<IIIIIIHHI", 0, 0, 1, 60, 0, 0, 0, 0, 0x60000020)
    head = struct.pack("<HHIIIHH", 0x8664, 1, 0, 61, len(defs) + len(refs), 0, 0)
    return head + section + b"\xc3" + symbols + struct.pack("<I", 4)


def test_a_wrap_around_library_chain_is_searched_in_linear_visits(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """N one-object libraries, lib_k defining s<k> and needing s<k+1>, named in reverse: link.exe
    pulls one per round, N rounds. The libraries that would pull nothing are passed over by an index
    of who defines what, not visited: N scans, not N x N (2,000 libraries: 221 s, now under 1 s;
    stop 27's hostile round 2), and the same members pulled in the same order."""
    from linkaudit import AuditConfig, audit
    from linkaudit.link import coff
    from linkaudit.link.line import read_link_line
    from tests.formats.arbuild import header

    n = 300
    (tmp_path / "main.obj").write_bytes(_coff([b"main"], [b"s0"]))
    for k in range(n):
        member = _coff([b"s%d" % k], [b"s%d" % (k + 1)])
        body = header(b"o%d.obj/" % k, len(member)) + member + (b"\n" if len(member) % 2 else b"")
        (tmp_path / f"lib_{k}.lib").write_bytes(b"!<arch>\n" + body)
    rsp = tmp_path / "link.rsp"
    rsp.write_text("/OUT:app.dll /DLL main.obj " + " ".join(f"lib_{k}.lib" for k in reversed(range(n))) + "\n")
    scans = []
    real = coff._Link.scan

    def counted(self, library):  # type: ignore[no-untyped-def]
        scans.append(library.name)
        return real(self, library)

    monkeypatch.setattr(coff._Link, "scan", counted)
    monkeypatch.chdir(tmp_path)
    report = audit(["."], AuditConfig(target=None, link_line=read_link_line(str(rsp))))
    assert len(scans) <= 2 * n, len(scans)
    unresolved = [f.subject for f in report.findings if f.rule == "unresolved-external"]
    assert unresolved == [f"s{n}"]  # every library pulled; only the last one's reference stays


def test_ninja_files_included_over_and_over_are_bounded_by_the_distinct_files(tmp_path: Path) -> None:
    """Each of 15 files includes the next twice (the last one parsed 2^15 times: 480 MB from 15 KB),
    then a variable doubles: the parse stops at a bound of the distinct files' bytes, and the
    expansion budget is not raised by the repeats (was MemoryError, exit 3, at 1.07 GB)."""
    (tmp_path / "leaf.ninja").write_text("pad = " + "a" * 15000 + "\n")
    for i in range(15):
        nxt = f"f{i + 1}.ninja" if i < 14 else "leaf.ninja"
        (tmp_path / f"f{i}.ninja").write_text(f"include {nxt}\ninclude {nxt}\n")
    (tmp_path / "build.ninja").write_text("include f0.ninja\n" + _EDGE)
    with pytest.raises(
        ConfigError, match=r"read the same build files again and again: more than (\d+) bytes"
    ) as caught:
        read_link_line(f"{tmp_path / 'build.ninja'}:out.dll")
    distinct = sum(p.stat().st_size for p in tmp_path.glob("*.ninja"))
    assert f"from {distinct} bytes of 17 files" in str(caught.value)
    # a few repeats of a small file, as CMake's generators never write but Ninja allows, still read
    (tmp_path / "twice.ninja").write_text("include leaf.ninja\ninclude leaf.ninja\n" + _EDGE)
    assert read_link_line(f"{tmp_path / 'twice.ninja'}:out.dll")
    # the expansion budget counts each distinct file once
    state = ninja_module._File("out.dll", str(tmp_path / "twice.ninja"))
    ninja_module._read(str(tmp_path / "twice.ninja"), state, 0)
    assert state.read == 2 * (tmp_path / "leaf.ninja").stat().st_size + (tmp_path / "twice.ninja").stat().st_size
    assert state.distinct == state.read - (tmp_path / "leaf.ninja").stat().st_size


def test_a_compilation_database_nested_too_deep_is_named(tmp_path: Path) -> None:
    deep = tmp_path / "compile_commands.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ConfigError, match=r"compile_commands\.json: nested too deeply"):
        read_link_line(str(deep))  # was RecursionError, exit 3


def test_a_response_file_pasted_many_times_is_charged_each_time(tmp_path: Path) -> None:
    """``rspfile_content`` was charged once, then pasted for every ``@out.rsp`` of the command:
    200,000 of them with a 20 KB content ran out of memory (exit 3)."""
    big = "o" * 20_000
    ninja = (
        f"objs = {big}\nrule link\n  command = link" + " @out.rsp" * 5_000 + "\n  rspfile = out.rsp\n"
        "  rspfile_content = $objs\nbuild out.dll: link a.obj\n"
    )
    (tmp_path / "rsp.ninja").write_text(ninja)
    with pytest.raises(ConfigError, match=r"rsp\.ninja: variables expand to more than"):
        read_link_line(f"{tmp_path / 'rsp.ninja'}:out.dll")
    # pasted twice, it is the command Ninja runs
    (tmp_path / "two.ninja").write_text(ninja.replace(" @out.rsp" * 5_000, " @out.rsp @out.rsp"))
    read_link_line(f"{tmp_path / 'two.ninja'}:out.dll")  # within the budget: no error


def test_the_linker_part_after_cmake_vs_link_is_found_in_linear_searches() -> None:
    """The first ``-E vs_link_*`` and the first `` -- `` after it; 100,000 of the first and none of
    the second (a lazy regex rescanned the rest from each: > 120 s) is the command as it is."""
    from linkaudit.link.ninja import _after_cmake_vs_link

    command = "cmake -E vs_link_dll --intdir=x -- link.exe /nologo a.obj /out:x.dll"
    assert _after_cmake_vs_link(command) == "link.exe /nologo a.obj /out:x.dll"
    hostile = "x.obj" + " -E vs_link_dll" * 100_000
    assert _after_cmake_vs_link(hostile) == hostile


@pytest.mark.parametrize("word", ["\ud800.o", "@\ud800.rsp", "-L\udfff"])
@pytest.mark.parametrize("key", ["arguments", "command"])
def test_a_lone_surrogate_in_a_compilation_database_is_named(run_cli, tmp_path: Path, word: str, key: str) -> None:  # type: ignore[no-untyped-def]
    """``"\\ud800"`` is valid JSON and names no file: refused naming the file and the word (was
    an internal error, exit 3, once the name reached the file system); an undecodable name byte
    (``\\udc80``) is a name like any other."""
    args = ["gcc", "a.o", word, "-o", "x"]
    entry = {"directory": ".", "file": "x", key: args if key == "arguments" else " ".join(args)}
    db = tmp_path / "cc.json"
    db.write_text(json.dumps([entry]))
    with pytest.raises(ConfigError, match=r"cc\.json: '[^']*\\ud[89a-f][^']*' names no file"):
        read_link_line(str(db))
    result = run_cli("check", "--no-config", "--link-line", str(db), str(tmp_path))
    assert result.exit_code == 2 and "names no file" in result.stderr
    db.write_text(json.dumps([{"directory": ".", "file": "x", "arguments": ["gcc", "a\udc80.o", "-o", "x"]}]))
    assert [i.path for i in read_link_line(str(db))] == [str(tmp_path / "a\udc80.o")]


def _elf_archive(path: Path, members: list[list[tuple[bytes, int, int]]]) -> None:
    """``path``: an ``ar`` archive of ELF relocatable objects ``m<k>.o``, one per symbol list."""
    from tests.formats.arbuild import archive
    from tests.formats.elfbuild import relocatable

    path.write_bytes(archive([(b"m%d.o" % k, relocatable(symbols)) for k, symbols in enumerate(members)]))


def test_a_reverse_ordered_elf_archive_chain_is_searched_in_linear_visits(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """N members, m<k> defining f<k> and needing f<k+1>, stored in reverse: GNU ld pulls one per
    walk of the archive symbol table, N walks. Each member's definitions are read once into an
    index of who defines what, not on every walk: N visits, not N x N (4,000 members: 108 s, now
    a few seconds; hostile round 38), and the same members pulled in the same order."""
    from linkaudit.formats import read_path
    from linkaudit.link import elf
    from linkaudit.model import SymbolTable
    from tests.formats.elfbuild import relocatable

    n = 200
    (tmp_path / "main.o").write_bytes(relocatable([(b"main", 0x12, 1), (b"f0", 0x10, 0)]))
    chain = [[(b"f%d" % k, 0x12, 1)] + ([(b"f%d" % (k + 1), 0x10, 0)] if k + 1 < n else []) for k in range(n)]
    _elf_archive(tmp_path / "lib.a", chain[::-1])
    binaries = read_path(str(tmp_path / "main.o")) + read_path(str(tmp_path / "lib.a"))
    visits = []
    for method in ("strong_definitions", "strong_definition_columns"):
        real = getattr(SymbolTable, method)
        monkeypatch.setattr(SymbolTable, method, lambda self, real=real: visits.append(id(self)) or real(self))
    linked = elf.pulled(binaries, [str(tmp_path / "main.o"), str(tmp_path / "lib.a")])
    assert len(visits) <= 2 * n, len(visits)
    assert [b.member for b in linked] == [None] + [f"m{n - 1 - k}.o" for k in range(n)]  # m0's is last


class _Rescan(elf_link._Link):
    """The link as it was: every walk visits every member not yet pulled (quadratic), the reference."""

    def scan(self, archives: list[list[Binary]], taken: set[int]) -> None:
        changed = True
        while changed and self.undefined:
            changed = False
            for member in (m for members in archives for m in members):
                if id(member) not in taken and any(
                    s.name in self.undefined for s in member.symbols.strong_definitions()
                ):
                    taken.add(id(member))
                    self.take(member)
                    changed = True


def _random_link(tmp_path: Path, rng: random.Random) -> list[LinkInput]:
    """Three archives of 1-5 members over 8 names (strong, weak or COMMON definitions, strong or weak
    references, a name defined in several members), and a link line over them and ``main.o``."""
    from tests.formats.elfbuild import relocatable

    names = [b"s%d" % k for k in range(8)]
    kinds = [(0x12, 1), (0x12, 1), (0x22, 1), (0x11, 0xFFF2), (0x10, 0), (0x10, 0), (0x20, 0)]
    for name in ("a", "b", "c"):
        members = [
            [(s, *rng.choice(kinds)) for s in rng.sample(names, rng.randint(1, 4))] for _ in range(rng.randint(1, 5))
        ]
        _elf_archive(tmp_path / f"{name}.a", members if rng.random() < 0.5 else members[::-1])
    (tmp_path / "main.o").write_bytes(relocatable([(s, 0x10, 0) for s in rng.sample(names, rng.randint(1, 3))]))
    line = [LinkInput(str(tmp_path / "main.o"))]
    for _ in range(rng.randint(1, 4)):
        path, roll = str(tmp_path / rng.choice("abc")) + ".a", rng.random()
        if roll < 0.2:
            line += [
                LinkInput(path, group=len(line)),
                LinkInput(str(tmp_path / rng.choice("abc")) + ".a", group=len(line)),
            ]
        else:
            line.append(LinkInput(path, whole=roll > 0.9))
    return line


def test_elf_archive_members_are_pulled_as_the_rescan_of_every_member_pulled_them(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """400 random links (forward and reverse member orders, a name defined in two members, weak and
    COMMON definitions, weak references, groups, --whole-archive): the indexed search pulls the
    members the walk over every member pulled, in its order (which duplicate-definition reports)."""
    from linkaudit.formats import read_path

    rng = random.Random(38)
    for trial in range(400):
        work = tmp_path / str(trial)
        work.mkdir()
        line = _random_link(work, rng)
        binaries = [b for name in ("main.o", "a.a", "b.a", "c.a") for b in read_path(str(work / name))]
        indexed = [(b.path, b.member) for b in elf_link.pulled(binaries, line)]
        with monkeypatch.context() as patched:
            patched.setattr(elf_link, "_Link", _Rescan)
            rescanned = [(b.path, b.member) for b in elf_link.pulled(binaries, line)]
        assert indexed == rescanned, (trial, line)
