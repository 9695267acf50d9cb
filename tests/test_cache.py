"""The cache of what files say: reports equal with and without it, entries validated like any
input (corrupt or foreign ones ignored and rewritten), safe under concurrent writers, the racy
rule, the LRU bound, a cached wheel not inflated again, and ``linkaudit cache info|clear``."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from linkaudit import cache
from linkaudit.cache import GRANULARITY_NS, Cache, Key, file_key, member_variant
from linkaudit.cache.codec import FIELDS, decode_entry, encode_binary, unpack
from linkaudit.formats import read_path
from linkaudit.model import Binary

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bins"


@pytest.fixture(autouse=True)
def _small_files_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures are tiny: files below ``copies.SMALL_FILE_BYTES`` are not cached (cheaper to
    parse), so these tests of the cache's machinery lower the threshold to nothing."""
    monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 0)


def _report(run_cli, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = run_cli(*args, "--format", "json", "--no-config")
    report = json.loads(result.stdout)
    report["summary"].pop("seconds", None)
    return report  # type: ignore[no-any-return]


def _entries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.bin"))


def _warmed(run_cli, tmp_path: Path, monkeypatch) -> tuple[Path, dict, list[Path]]:  # type: ignore[no-untyped-def,type-arg]
    """``sample_bins/broken`` checked without the cache, then once with a fresh one under
    ``tmp_path/c``: (the target, the uncached report, the entries written)."""
    root = tmp_path / "c"
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(root))
    target = SAMPLES / "broken"
    plain = _report(run_cli, "--no-cache", "check", str(target))
    _report(run_cli, "check", str(target))
    return target, plain, _entries(root)


def _wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for sample in ("broken/libtorch_cuda.so", "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so"):
            zf.writestr(f"pkg/{Path(sample).name}", (SAMPLES / sample).read_bytes())
        zf.writestr("pkg/__init__.py", "")
    return path


def _old(path: Path) -> None:
    """Make ``path``'s mtime older than any entry by more than the granularity (not racy)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 10 * GRANULARITY_NS))


def test_every_field_of_binary_has_a_decoder() -> None:
    assert set(FIELDS) | {"path"} == {f.name for f in dataclasses.fields(Binary)}


@pytest.mark.parametrize("inputs", [["broken", "loader/pyext", "macho", "pe", "objects"], ["wheel"]])
def test_cached_report_equals_the_uncached_one(run_cli, tmp_path: Path, monkeypatch, inputs: list[str]) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "c"
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(root))
    paths = [str(_wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl"))] if inputs == ["wheel"] else []
    paths += [str(SAMPLES / i) for i in inputs if i != "wheel"]
    plain = _report(run_cli, "--no-cache", "check", *paths)
    assert not root.exists()  # --no-cache writes nothing
    cold = _report(run_cli, "check", *paths)
    assert _entries(root)
    warm = _report(run_cli, "check", *paths)
    assert plain == cold == warm
    assert plain["summary"]["audited"] >= 2 and not plain["summary"]["unreadable"]
    assert cache.active() is not None and cache.active().hits > 0  # type: ignore[union-attr]


_FIXED, _BROKEN = str(SAMPLES / "fixed"), str(SAMPLES / "broken")


@pytest.mark.parametrize(
    "argv",
    [
        ("check", _BROKEN),
        ("show", _BROKEN),
        ("tree", _BROKEN),
        ("why", _BROKEN, "libcuda.so.1"),
        ("diff", _FIXED, _BROKEN),
        ("dupes", _BROKEN),
    ],
)
def test_no_cache_is_accepted_after_every_command_that_reads_files(run_cli, tmp_path: Path, monkeypatch, argv) -> None:  # type: ignore[no-untyped-def]
    """``linkaudit check --no-cache PATH`` was "No such option": the flag is the global one's twin on
    each command that reads files, and, like it, neither reads nor writes the cache."""
    root = tmp_path / "c"
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(root))
    after = run_cli(argv[0], "--no-cache", *argv[1:])
    assert after.exit_code in (0, 1), after.stderr
    assert not root.exists()  # nothing written
    assert cache.active() is None
    before = run_cli("--no-cache", *argv)
    assert before.exit_code == after.exit_code and not root.exists()
    run_cli(*argv)
    assert _entries(root)  # without the flag the same command does use the cache


def test_a_cached_wheel_is_not_inflated_again(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "c"))
    whl = _wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl")
    _old(whl)
    cold = _report(run_cli, "check", str(whl))
    assert cold["summary"]["audited"] == 2  # both members streamed, placed and read

    def never(*_a: object, **_k: object) -> None:
        raise AssertionError("a cached member was inflated")

    monkeypatch.setattr("linkaudit.packages.members.stream_member", never)
    monkeypatch.setattr("linkaudit.packages.wheel.write_member", never)
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def counting_open(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(getattr(name, "filename", name))
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", counting_open)
    from linkaudit.packages import inflate

    def counting_member(zf, info):  # type: ignore[no-untyped-def]  # ISA-L's reader opens without zipfile
        opened.append(info.filename)
        return inflate.open_zip_member(zf, info)

    monkeypatch.setattr("linkaudit.packages.wheel.open_zip_member", counting_member)
    monkeypatch.setattr("linkaudit.packages.members.open_zip_member", counting_member)
    assert _report(run_cli, "check", str(whl)) == cold
    assert opened == []  # every member sniffed from the cached heads: none opened, none inflated


def _repacked(data: bytes, name: str, change, fix_crc: bool = True) -> bytes:  # type: ignore[no-untyped-def]
    """The entry file ``data`` with its JSON part changed by ``change`` (header and CRC-32 made to
    match unless ``fix_crc`` is false: a foreign entry that is well formed as a file)."""
    import struct
    import zlib

    header = struct.Struct("<8sIIQII")
    magic, reader, head_size, _blob_size, crc, zero = header.unpack_from(data)
    value = json.loads(data[header.size : header.size + head_size])
    blob = data[header.size + head_size :]
    head = json.dumps(change(value)).encode()
    crc = zlib.crc32(blob, zlib.crc32(head)) if fix_crc else crc
    return header.pack(magic, reader, len(head), len(blob), crc, zero) + head + blob


def test_corrupt_and_foreign_entries_are_ignored_and_rewritten(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    target, plain, entries = _warmed(run_cli, tmp_path, monkeypatch)
    good = entries[0].read_bytes()
    name = entries[0].stem

    def bad_offsets(value: dict) -> dict:  # type: ignore[type-arg]
        value["binaries"][0]["symbols"]["name_offsets"] = [0, 10**9]  # a column far past the blob
        return value

    spoiled = [
        b"",
        b"\x80garbage",
        b"[" * 100_000,
        good[:-1],
        good + b"\0",
        good.replace(b"LAcache", b"LAcachf", 1),
        _repacked(good, name, lambda v: {**v, "reader": 999}),
        _repacked(good, name, lambda v: {**v, "magic": "something-else"}),
        _repacked(good, name, lambda v: {**v, "binaries": [{"format": "elf"}]}),
        _repacked(good, name, bad_offsets),
        _repacked(good, name, lambda v: {**v, "written": v["written"] + 1}, fix_crc=False),
    ]
    for i, entry in enumerate(entries):
        entry.write_bytes(spoiled[i % len(spoiled)])
    assert unpack(good, name) is not None
    for data in spoiled:
        assert unpack(data, name) is None
    assert _report(run_cli, "check", str(target)) == plain
    for entry in entries:  # rewritten: every one valid again
        assert unpack(entry.read_bytes(), entry.stem) is not None


def test_an_entry_of_a_file_changed_within_the_racy_window_is_not_trusted(tmp_path: Path) -> None:
    """Same size, same stat (as a change within the timestamp granularity leaves it): the entry
    was written within the granularity of the mtime, so the content is compared and differs."""
    store = Cache(str(tmp_path / "c"))
    lib = tmp_path / "libx.so"
    lib.write_bytes((SAMPLES / "broken/libtorch_cuda.so").read_bytes())
    fd = os.open(lib, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        key = file_key(fd, st, "x")
        store.put(key, tuple(read_path(str(lib))))
        assert store.get(key) is not None  # racy, but the content matches
        data = bytearray(lib.read_bytes())
        data[-1] ^= 1
        lib.write_bytes(bytes(data))  # same size; the old stat stands for "no visible change"
        assert store.get(file_key(fd, st, "x")) is None
    finally:
        os.close(fd)


def test_an_old_file_is_trusted_by_its_stat_without_hashing(tmp_path: Path) -> None:
    store = Cache(str(tmp_path / "c"))
    lib = tmp_path / "libx.so"
    lib.write_bytes((SAMPLES / "broken/libtorch_cuda.so").read_bytes())
    _old(lib)
    st = lib.stat()
    hashed = []
    key = Key(
        file_key(0, st, "x").name,
        max(st.st_mtime_ns, st.st_ctime_ns) - 10 * GRANULARITY_NS,
        lambda: hashed.append(1) or "h",
    )  # type: ignore[func-returns-value]
    store.put(key, tuple(read_path(str(lib))))
    assert store.get(key) is not None and not hashed


def test_concurrent_writers_never_leave_half_an_entry(tmp_path: Path) -> None:
    store = Cache(str(tmp_path / "c"))
    binaries = tuple(read_path(str(SAMPLES / "broken/libtorch_cuda.so")))
    key = Key("ab" * 32, 0, lambda: "")
    seen: list[bool] = []

    def write() -> None:
        for _ in range(30):
            store.put(key, binaries)
            seen.append(store.get(key) is not None)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(seen) and len(seen) == 120
    assert not list((tmp_path / "c").rglob(".tmp-*"))  # every temporary renamed into place


def test_two_processes_sharing_a_cache_give_the_uncached_report(tmp_path: Path) -> None:
    env = {**os.environ, "LINKAUDIT_CACHE_DIR": str(tmp_path / "c")}
    argv = [sys.executable, "-m", "linkaudit", "check", "--no-config", "--format", "json", str(SAMPLES / "broken")]
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE) for _ in range(3)]
    outs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    plain = json.loads(
        subprocess.run([*argv[:3], "--no-cache", *argv[3:]], env=env, capture_output=True, check=False).stdout
    )
    for report in [*outs, plain]:
        report["summary"].pop("seconds", None)
    assert outs == [plain] * 3


def test_the_least_recently_used_entries_are_evicted(tmp_path: Path) -> None:
    store = Cache(str(tmp_path / "c"), max_bytes=1 << 40)
    binaries = tuple(read_path(str(SAMPLES / "broken/libtorch_cuda.so")))
    keys = [Key(f"{i:02x}" * 32, 0, lambda: "") for i in range(3)]
    for k in keys:
        store.put(k, binaries)
    size = store.info().size // 3
    store.max_bytes = 2 * size
    os.utime(store._path(keys[0].name), ns=(1, 1))  # the oldest use
    assert store.evict() == 1 and store.get(keys[0]) is None and store.get(keys[1]) is not None


def test_writes_scan_the_cache_once_until_it_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scan of every entry per 64 writes made a cold run over N files quadratic (10,000 tiny
    members: 16 s of 34): writes count their bytes, and the cache is scanned again only once
    they pass the bound — then down to an eighth below it, so scans stay few."""
    scans: list[int] = []
    real = Cache.entries

    def counting(self: Cache) -> list[tuple[float, int, str]]:
        scans.append(1)
        return real(self)

    monkeypatch.setattr(Cache, "entries", counting)
    store = Cache(str(tmp_path / "c"))
    binaries = tuple(read_path(str(SAMPLES / "broken/libtorch_cuda.so")))
    for i in range(300):
        store.put(Key(f"{i:064x}", 0, lambda: ""), binaries)
    assert len(scans) == 1  # the first write counts what is there (5 scans before)
    size = store.info().size // 300
    scans.clear()
    bounded = Cache(str(tmp_path / "c"), max_bytes=100 * size)
    for i in range(300, 600):
        bounded.put(Key(f"{i:064x}", 0, lambda: ""), binaries)
    assert len(scans) <= 1 + 300 // 12  # the first count, then one per eighth of the bound refilled
    assert bounded.info().size <= bounded.max_bytes and bounded.evict() == 0


def test_cache_info_and_clear(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "c"))
    run_cli("check", "--no-config", str(SAMPLES / "broken"))
    info = run_cli("cache", "info")
    assert info.exit_code == 0 and str(tmp_path / "c") in info.stdout
    count = len(_entries(tmp_path / "c"))
    assert f"entries: {count}" in info.stdout and count > 0
    cleared = run_cli("cache", "clear")
    assert cleared.exit_code == 0 and f"removed {count} entries" in cleared.stdout
    assert not _entries(tmp_path / "c")


def test_the_cached_record_is_the_read_one() -> None:
    for path in ("broken/libtorch_cuda.so", "macho", "pe", "coff", "misc/libisa_v3.so"):
        for target in [SAMPLES / path] if (SAMPLES / path).is_file() else sorted((SAMPLES / path).iterdir())[:6]:
            if not target.is_file():
                continue
            try:
                binaries = read_path(str(target))
            except Exception:
                continue
            from linkaudit.cache.codec import encode_entry

            entry = decode_entry(json.loads(json.dumps(encode_entry("k", 1, None, tuple(binaries)))), "k")
            assert entry is not None
            assert [encode_binary(dataclasses.replace(b, path="")) for b in binaries] == [
                encode_binary(b) for b in entry.binaries
            ]


def _round_trip(binaries: list[Binary]) -> list[Binary] | None:
    from linkaudit.cache.codec import encode_entry

    entry = decode_entry(json.loads(json.dumps(encode_entry("k", 1, None, tuple(binaries)))), "k")
    return None if entry is None else list(entry.binaries)


@pytest.mark.parametrize(("path", "gnu"), [("fixed/libnvrtc.so.12", True), ("misc/libsysvhash.so", False)])
def test_the_symbol_hash_tables_round_trip(path: str, gnu: bool) -> None:
    """Binding looks names up in the providers' DT_GNU_HASH / DT_HASH tables: a cached record keeps
    them (a record without them binds through the slower map: the same bindings, and no one notices)."""
    (read,) = read_path(str(SAMPLES / path))
    table = read.symbols.hash_table
    assert table is not None and table.gnu is gnu
    (cached,) = _round_trip([read]) or [None]
    assert cached is not None and cached.symbols.hash_table is not None
    got = cached.symbols.hash_table
    assert (got.gnu, list(got.buckets), list(got.chain), got.symoffset) == (
        table.gnu, list(table.buckets), list(table.chain), table.symoffset
    )  # fmt: skip


def test_a_hash_table_that_does_not_fit_its_symbols_is_not_trusted() -> None:
    from linkaudit.cache.codec import encode_entry

    (read,) = read_path(str(SAMPLES / "fixed/libnvrtc.so.12"))
    value = json.loads(json.dumps(encode_entry("k", 1, None, (read,))))
    text = json.dumps(value)
    table = value["binaries"][0]["symbols"]["hash_table"]
    table["symoffset"] = 10**6
    assert decode_entry(value, "k") is None
    assert decode_entry(json.loads(text), "k") is not None


def test_entries_that_are_not_files_are_never_waited_on(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A FIFO, a directory or a dangling link where an entry belongs: passed over at once (a FIFO
    opened for reading blocks until a writer comes), the report as without the cache."""
    target, plain, entries = _warmed(run_cli, tmp_path, monkeypatch)
    makers = [os.mkfifo, os.mkdir, lambda p: os.symlink(tmp_path / "nowhere", p)]
    for i, entry in enumerate(entries):
        entry.unlink()
        makers[i % len(makers)](entry)
    assert _report(run_cli, "check", str(target)) == plain


def test_clear_and_eviction_remove_only_what_the_cache_wrote(tmp_path: Path) -> None:
    """A cache folder holding other files, or whose root is a symlink to another folder: ``clear``,
    ``info`` and eviction see only ``XX/<sha256>.bin`` entries (and the cache's own temporary
    files), regular files, never through a symlink."""
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub" / "package.json").write_text("{}")
    linked = tmp_path / "linked"
    linked.symlink_to(victim)
    assert Cache(str(linked)).clear() == 0 and Cache(str(linked)).info().entries == 0
    assert (victim / "sub" / "package.json").exists()
    root = tmp_path / "c"
    store = Cache(str(root))
    name = "ab" + "0" * 62
    planted = [root / "ab" / "notes.bin", root / "zz" / (name + ".bin"), root / "ab" / ("cd" + "0" * 62 + ".bin")]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    (root / "ab" / (name + ".bin")).write_text("{}")
    (root / "ab" / (name[:-1] + "1.bin")).symlink_to(victim / "sub" / "package.json")
    assert store.info().entries == 1 and store.clear() == 1
    assert all(p.exists() for p in planted) and (victim / "sub" / "package.json").exists()


def test_symlinked_entry_folders_are_neither_written_through_nor_read(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every ``XX`` folder planted as a symlink to another directory (a cache restored from an
    untrusted run): ``check`` writes nothing there and reads nothing from there (it wrote its
    entries into the other directory, where ``clear`` and eviction, which skip symlinked folders,
    never saw them, past the size bound; the hostile tester's D4); the report as without the cache."""
    target, plain, entries = _warmed(run_cli, tmp_path, monkeypatch)
    victim = tmp_path / "victim"
    victim.mkdir()
    for entry in entries:  # the warm entries moved to the victim, their folders made links to it
        folder = entry.parent
        if folder.is_symlink():
            continue
        for old in folder.iterdir():
            old.rename(victim / old.name)
        folder.rmdir()
        folder.symlink_to(victim)
    base = entries[0].parent.parent  # ROOT/binaries-vN
    for i in range(256):
        folder = base / f"{i:02x}"
        if not folder.exists() and not folder.is_symlink():
            folder.symlink_to(victim)
    before = sorted(p.name for p in victim.iterdir())
    reads: list[str] = []
    real_load = cache._load

    def counted(path: str) -> bytes | None:
        found = real_load(path)
        if found is not None:
            reads.append(path)
        return found

    monkeypatch.setattr(cache, "_load", counted)
    assert _report(run_cli, "check", str(target)) == plain
    other = SAMPLES / "fixed"  # inputs with no entry yet: every one written, were it allowed
    assert _report(run_cli, "check", str(other)) == _report(run_cli, "--no-cache", "check", str(other))
    assert sorted(p.name for p in victim.iterdir()) == before and before
    assert reads == []


def test_an_entry_with_a_nul_in_a_name_is_not_trusted() -> None:
    from linkaudit.cache.codec import encode_entry

    (read,) = read_path(str(SAMPLES / "fixed/libtorch_cuda.so"))
    value = json.loads(json.dumps(encode_entry("k", 1, None, (read,))))
    value["binaries"][0]["dlopen_names"] = ["", "/", "\u0000"]
    assert decode_entry(value, "k") is None


def test_info_clear_and_eviction_see_every_kind_of_entry_the_cache_writes(tmp_path: Path) -> None:
    """A package member's entries (``<sha256>-0.bin`` / ``-1.bin``: ``member_variant``) are the
    cache's too: ``cache info`` did not count them, ``cache clear`` left them and eviction never saw
    them (after a torch wheel: 9 entries reported of 25 files, 19 MB left behind by ``clear``)."""
    store = Cache(str(tmp_path / "c"), max_bytes=1 << 40)
    binaries = tuple(read_path(str(SAMPLES / "broken/libtorch_cuda.so")))
    base = "ab" * 32
    names = [base, member_variant(base, False), member_variant(base, True)]
    for name in names:
        store.put(Key(name, 0, lambda: ""), binaries)
    on_disk = _entries(tmp_path / "c")
    assert len(on_disk) == 3
    info = store.info()
    assert info.entries == 3 and info.size == sum(p.stat().st_size for p in on_disk)
    store.max_bytes = max(p.stat().st_size for p in on_disk)  # room for one entry
    assert store.evict() == 2
    assert store.clear() == 1 and _entries(tmp_path / "c") == []


def test_a_warm_read_gives_the_path_without_copying_each_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache hit decodes each binary with the path it is read under (an entry stores none): no
    ``dataclasses.replace`` per binary afterwards (``/usr/lib/x86_64-linux-gnu``: 9,490 archive
    members copied once each on a warm run), and the record equals the cold read's."""
    store = cache.configure(True, str(tmp_path / "c"))
    archive = tmp_path / "libx.a"
    archive.write_bytes((SAMPLES / "objects/archive_two/libx.a").read_bytes())
    _old(archive)
    cold = read_path(str(archive))
    replaced: list[object] = []
    real_replace = dataclasses.replace

    def counting_replace(obj, /, **changes):  # type: ignore[no-untyped-def]
        replaced.append(obj)
        return real_replace(obj, **changes)

    monkeypatch.setattr(dataclasses, "replace", counting_replace)
    warm = read_path(str(archive))
    assert store is not None and store.hits
    assert not [b for b in replaced if isinstance(b, Binary)]
    assert warm and [b.path for b in warm] == [str(archive)] * len(warm)
    assert [encode_binary(b) for b in warm] == [encode_binary(b) for b in cold]


@pytest.mark.parametrize("where", ["file", "file/below", "read-only", "/proc/self/cache"])
def test_an_unusable_cache_directory_is_said(run_cli, tmp_path: Path, monkeypatch, where: str) -> None:  # type: ignore[no-untyped-def]
    """``$LINKAUDIT_CACHE_DIR`` where no cache can live (a regular file, a path below one, a
    directory not writable): ``check`` warns once on stderr, naming the path and the OS's reason,
    and runs uncached with its exit status unchanged; ``cache info`` and ``cache clear`` say the
    directory is unusable and exit 2 (they said "entries: 0" and "removed 0", exit 0)."""
    (tmp_path / "file").write_text("not a directory\n")
    if where == "read-only":
        if os.geteuid() == 0:
            pytest.skip("root writes into any directory")
        (tmp_path / "read-only").mkdir(mode=0o500)
    if where.startswith("/proc") and not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    root = tmp_path / where
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(root))
    reasons = {"read-only": "Permission denied", "/proc/self/cache": "No such file or directory"}
    reason = reasons.get(where, "Not a directory")
    uncached = run_cli("--no-cache", "check", "--no-config", str(SAMPLES / "broken"))
    assert "cache" not in uncached.stderr  # --no-cache: nothing to say
    ran = run_cli("check", "--no-config", str(SAMPLES / "broken"))
    assert ran.exit_code == uncached.exit_code
    assert ran.stdout.splitlines()[:-1] == uncached.stdout.splitlines()[:-1]  # the last: the time taken
    warnings = [line for line in ran.stderr.splitlines() if "cache" in line]
    assert len(warnings) == 1 and "warning" in warnings[0] and reason in warnings[0], ran.stderr
    assert str(root) in warnings[0] and "uncached" in warnings[0]
    for command in ("info", "clear"):
        said = run_cli("cache", command)
        assert said.exit_code == 2 and "unusable" in said.stderr and reason in said.stderr, said
        assert "entries" not in said.stdout
    assert (tmp_path / "file").read_text() == "not a directory\n"
