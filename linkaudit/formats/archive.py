"""Static archives (``ar``): each ELF or COFF member read into a ``Binary``, without extracting to disk.

Windows libraries (``.lib``) are ``ar`` archives too (Microsoft "Archive (Library) File Format"):
a first and a second linker member (both named ``/``), the ``//`` long-name table (names ending
with a NUL), then COFF objects (a static library) or short import members (an import library),
read by ``coff.read_coff_binary``.

Layouts (System V / GNU ``ar(5)``, BSD ``ar``): the global header ``!<arch>\\n``
(``!<thin>\\n`` for GNU thin archives, whose members are files beside the archive),
then members, each a 60-byte header — name[16], date[12], uid[6], gid[6],
mode[8], size[10] (decimal), ``\\x60\\n`` — followed by the data, padded to even
size.  Special members: ``/`` and ``/SYM64/`` (the symbol index, 32- and 64-bit
offsets), ``//`` (GNU long-name table; members then say ``/123``, an offset into
it, names ending ``/\\n``), ``__.SYMDEF`` (BSD symbol index); BSD long names are
``#1/N`` with the name in the first N bytes of the data.

The PyPI ``ar`` package was evaluated for the container: it reads neither thin
archives nor the ``/SYM64/`` index and raises plain ``ValueError`` on malformed
headers, so the container is read here (bounds-checked, every fault an
``InputError`` naming the archive and offset); the ELF members go through our
ELF reader.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

from ..errors import InputError, PartialRead, shown
from ..model import Binary
from .coff import (
    ImportMember,
    import_binary,
    is_coff_object,
    is_import_member,
    name_gnu_import_dlls,
    read_coff_binary,
    read_import_member,
)
from .elf import read_elf
from .filebytes import READER_FAULTS, Buffer, FileBytes, fault_reason, file_bytes, open_file

AR_MAGIC = b"!<arch>\n"
THIN_MAGIC = b"!<thin>\n"
HEADER = 60
#: No real archive has more members (libc.a has about 2,000).
MAX_MEMBERS = 1 << 20
#: Symbol-index member names: System V / GNU (32- and 64-bit offsets) and BSD.
#: Budgets of one thin archive: members named, and bytes of the distinct member files read
#: (each file once however often it is named; only the linkage tables of each are read).
MAX_THIN_MEMBERS = 1 << 16
MAX_THIN_BYTES = 4 << 30
#: Members not read that an archive's error names one by one; the rest are counted in one more.
MAX_MEMBER_ERRORS_NAMED = 20
#: Windows libraries (Microsoft "Archive (Library) File Format") name both their first and second linker
#: members ``/``, and ARM64EC ones add ``/<ECSYMBOLS>/``.
INDEX_NAMES = frozenset({"/", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED", "/<ECSYMBOLS>/"})


def _is_thin(path: str, buf: Buffer) -> bool:
    """True for a thin archive (``!<thin>\\n``), False for a regular one (``!<arch>\\n``).

    Raises:
        InputError: neither magic.
    """
    magic = bytes(buf[0:8])
    if magic not in (AR_MAGIC, THIN_MAGIC):
        raise InputError(path, "not an ar archive (bad magic)", 0)
    return magic == THIN_MAGIC


def iter_members(path: str, buf: Buffer, size: int) -> Iterator[tuple[str, int, int, bool]]:
    """Yield ``(member name, data offset, data size, thin)`` for every regular member, in order.

    For a thin archive the data lives in the file named by the member (relative to the archive's
    directory) and ``offset`` is 0.

    Raises:
        InputError: bad magic, a header outside the file or without its ``\\x60\\n`` terminator, a
            size that is not a decimal number or runs past the end, a long-name reference outside the
            table, too many members.
    """
    thin = _is_thin(path, buf)
    pos = 8
    long_names = b""
    named: dict[int, str] = {}  # long-name offset -> the name: members naming one offset share it
    count = 0
    while pos < size:
        if pos + HEADER > size:
            raise InputError(path, f"truncated ar member header ({size - pos} of {HEADER} bytes)", pos)
        header = bytes(buf[pos : pos + HEADER])
        if header[58:60] != b"`\n":
            raise InputError(path, "ar member header does not end with its terminator", pos + 58)
        raw_name = header[0:16].decode("ascii", "replace").rstrip(" ")
        size_text = header[48:58].decode("ascii", "replace").strip()
        if not size_text.isdigit() or not size_text.isascii():
            raise InputError(path, f"ar member size {size_text!r} is not a decimal number", pos + 48)
        data_size = int(size_text)
        data = pos + HEADER
        count += 1
        if count > MAX_MEMBERS:
            raise InputError(path, f"more than {MAX_MEMBERS} ar members", pos)
        special = raw_name in INDEX_NAMES or raw_name == "//"
        # Thin archives store the data of the symbol index and name table, not of members.
        stored = not thin or special
        if stored and data + data_size > size:
            raise InputError(path, f"ar member of {data_size} bytes runs past the end of the file", pos + 48)
        if raw_name == "//":
            long_names = bytes(buf[data : data + data_size])
            named.clear()
        if special:
            name = raw_name  # the symbol index or the long-name table: not yielded
        elif raw_name.startswith("/") and raw_name[1:].isdigit():
            name = _long_name(path, long_names, raw_name, pos, named)
        elif raw_name.startswith("#1/") and raw_name[3:].isdigit():
            length = int(raw_name[3:])
            if length > data_size:
                raise InputError(path, "BSD ar long name is longer than its member", pos)
            name = bytes(buf[data : data + length]).rstrip(b"\0").decode("utf-8", "surrogateescape")
            data += length
            data_size -= length
        else:
            name = raw_name[:-1] if raw_name.endswith("/") else raw_name
        if not special:
            yield name, (0 if thin else data), data_size, thin
        # The next header: after the data (BSD names included), padded to an even offset.
        pos = (data + data_size) if stored else (pos + HEADER)
        pos += pos & 1


#: The longest member name read from the ``//`` table (a path's limit, PATH_MAX): a name that runs on
#: past it is refused (a table of 1 MB with no terminator made every member's name the whole table:
#: 1.2 GB for 400 members).
MAX_LONG_NAME = 4096


def _long_name(path: str, long_names: bytes, raw_name: str, pos: int, named: dict[int, str]) -> str:
    """The member name a ``/123`` reference names in the ``//`` table, read once per offset.

    Raises:
        InputError: the offset lies outside the table, or the name has no end within ``MAX_LONG_NAME`` bytes.
    """
    offset = int(raw_name[1:]) if len(raw_name) <= 12 else len(long_names)
    found = named.get(offset)
    if found is not None:
        return found
    if offset >= len(long_names):
        raise InputError(path, f"ar long-name reference {raw_name[:24]} lies outside the name table", pos)
    # GNU ends a long name with "/\n", Microsoft's libraries with a NUL; the table's end ends it too.
    stop = offset + MAX_LONG_NAME + 2
    ends = [e for e in (long_names.find(b"/\n", offset, stop), long_names.find(b"\0", offset, stop)) if e >= 0]
    end = min(ends, default=len(long_names) if len(long_names) < stop else -1)
    if end < 0 or end - offset > MAX_LONG_NAME:
        raise InputError(path, f"ar long name at {raw_name[:24]} has no end within {MAX_LONG_NAME} bytes", pos)
    name = named[offset] = long_names[offset:end].decode("utf-8", "surrogateescape")
    return name


def read_archive(path: str, buf: Buffer, size: int) -> list[Binary]:
    """Read every ELF or COFF member of the archive at ``path`` into a ``Binary`` (``member`` set).

    A member's ``member`` is its name, and for the second, third... member of one name (``ar q``
    appends a second ``foo.o``; a Windows import library names its descriptor objects after the
    DLL) ``NAME#2``, ``NAME#3``..., counted over the archive's members in order as ``ar``'s ``N``
    count modifier counts them (``ar xN 2 libx.a foo.o``), so each is a file of its own
    (``libx.a(foo.o#2)``) in ``check``'s list and ``diff``'s pairing; a folded import record takes
    its first short member's.  Other members (LLVM bitcode, text) are left out; the reader never
    writes a member to disk.  A thin archive's members are read from their own files, each
    distinct file once, within the archive's budgets ``MAX_THIN_MEMBERS`` and ``MAX_THIN_BYTES``;
    a file the archive names again is left out after its first mention (a link pulls a member
    only for a symbol still undefined, which the first copy already defines; 1,500 mentions of
    one object used to cost 1,500 readings and audits).  A member that cannot be read (malformed,
    a thin member's file missing) does not stop the others, as with ``nm``; past a thin budget
    no further member is read.

    Raises:
        PartialRead: some members were not read (the others' records and each member's error).
        InputError: a malformed container (see ``iter_members``), or every member that holds a
            binary failed (the first member's error, naming ``member NAME: reason``).
    """
    out: list[Binary | None] = []
    failed: list[InputError] = []  # the first MAX_MEMBER_ERRORS_NAMED, the rest counted
    more = 0
    thin = _ThinMembers(path)
    imports = _ImportMembers(path)
    members = list(iter_members(path, buf, size))
    for (name, offset, data_size, is_thin), label in zip(members, _labels([m[0] for m in members]), strict=True):
        try:
            binary = _member(path, buf, (name, label), offset, data_size, is_thin, thin, imports, len(out))
        except InputError as exc:
            if len(failed) < MAX_MEMBER_ERRORS_NAMED:
                failed.append(exc)
            else:
                more += 1
            if isinstance(exc, _OverBudget):
                break
            continue
        if binary is _PLACE:
            out.append(None)  # a place kept for the DLL's folded record (one per DLL)
        elif isinstance(binary, Binary):
            out.append(replace(binary, path=path, member=label, member_file=thin.file_of(name) if is_thin else None))
    for place, binary in imports.folded():
        out[place] = binary
    binaries = name_gnu_import_dlls([b for b in out if b is not None])
    if not failed:
        return binaries
    if not binaries:
        raise failed[0]
    if more:
        failed.append(
            InputError(path, f"{more} more members not read, not named one by one (the first {len(failed)} are)")
        )
    raise PartialRead(tuple(binaries), tuple(failed))


def _labels(names: list[str]) -> list[str]:
    """Each member's label: its name, and ``NAME#K`` for the K-th member of one name — K counted
    on past any number whose label another member is literally named (``foo.o``, ``foo.o``,
    ``foo.o#2``: ``foo.o``, ``foo.o#3``, ``foo.o#2``; before, two were ``foo.o#2`` and one of them
    was never read nor diffed)."""
    taken = set(names)
    counts: Counter[str] = Counter()
    labels = []
    for name in names:
        counts[name] += 1
        if counts[name] == 1:
            labels.append(name)
            continue
        while f"{name}#{counts[name]}" in taken:
            counts[name] += 1
        label = f"{name}#{counts[name]}"
        taken.add(label)
        labels.append(label)
    return labels


#: ``_member``'s answer for a short import member that opened its DLL's folded record.
_PLACE = object()


def _member(
    path: str,
    buf: Buffer,
    named: tuple[str, str],
    offset: int,
    data_size: int,
    is_thin: bool,
    thin: _ThinMembers,
    imports: _ImportMembers,
    place: int,
) -> Binary | object | None:
    """The record of one member: a ``Binary``, ``_PLACE`` (a DLL's first short import member,
    folded later), or ``None`` (not a binary, a short import member folded into an earlier one,
    a thin member named before).  ``named``: the member's name and its label, ``NAME#2`` for the
    second of a name (``read_archive``).

    Raises:
        InputError: the member is malformed or its file cannot be read (``_OverBudget``: a thin
            archive's budget is passed).
    """
    name, label = named
    if is_thin:
        return thin.read(name)
    data = buf.view(offset, data_size) if isinstance(buf, FileBytes) else buf[offset : offset + data_size]
    if is_import_member(bytes(data[:6])):
        return _PLACE if imports.add(label, data, place) else None
    return _read_member(path, label, f"{path}({label})", data)


class _OverBudget(InputError):
    """A thin archive names more members, or bytes of member files, than its budget allows."""


class _ImportMembers:
    """The short import members of one Windows library, folded into one ``Binary`` per DLL (and
    machine): an import library holds one member per export (torch_cpu.lib: 60,255), and a record
    each cost more than everything else the audit did with them."""

    def __init__(self, archive: str) -> None:
        self.archive = archive
        self.by_dll: dict[tuple[str, int], tuple[int, str, list[ImportMember], list[int]]] = {}

    def add(self, name: str, data: Buffer, place: int) -> bool:
        """Take the short import member ``name``; ``place``: where its DLL's record goes if it is
        the first of its DLL.  True when it is (a place is then needed).

        Raises:
            InputError: a malformed import member (named ``member NAME: reason``, as other members).
        """
        try:
            member = read_import_member(f"{self.archive}({name})", bytes(data[0 : len(data)]))
        except InputError as exc:
            raise InputError(self.archive, f"member {shown(name)}: {exc.reason}", exc.offset) from exc
        key = (member.dll, member.machine_id)
        found = self.by_dll.get(key)
        if found is None:
            self.by_dll[key] = (place, name, [member], [len(data)])
            return True
        found[2].append(member)
        found[3].append(len(data))
        return False

    def folded(self) -> Iterator[tuple[int, Binary]]:
        """``(place, record)`` of each DLL's folded record, ``member`` the first member's name."""
        for place, name, members, sizes in self.by_dll.values():
            yield place, replace(import_binary(self.archive, members, sum(sizes)), member=name)


def _read_member(path: str, name: str, label: str, data: Buffer) -> Binary | None:
    """The ELF or COFF member ``name`` of archive ``path`` (``label``: how the member is named while
    read); ``None`` for a member of another kind (LLVM bitcode, text).

    Raises:
        InputError: a malformed member, reported against the archive as ``member NAME: reason``.
    """
    head = bytes(data[:4])
    try:
        if head == b"\x7fELF":
            return read_elf(label, data, len(data))
        if is_coff_object(head):
            return read_coff_binary(label, data, len(data))
        return None
    except InputError as exc:
        raise InputError(path, f"member {shown(name)}: {exc.reason}", exc.offset) from exc
    except READER_FAULTS as exc:  # as read_bytes says them
        what = "ELF" if head == b"\x7fELF" else "COFF"
        raise InputError(path, f"member {shown(name)}: {fault_reason(exc, what, len(data))}") from exc


class _ThinMembers:
    """The member files of one thin archive, each read once, within the archive's budgets.

    A member's file is named relative to the archive's directory (GNU ``ar`` thin archives).
    """

    def __init__(self, archive: str) -> None:
        self.archive = archive
        self.base = os.path.dirname(archive)
        self.count = 0
        self.bytes = 0
        self._seen: set[tuple[int, int]] = set()  # (st_dev, st_ino) of the member files read

    def file_of(self, name: str) -> str:
        """The path of member ``name``'s file."""
        return name if os.path.isabs(name) else os.path.join(self.base, name)

    def read(self, name: str) -> Binary | None:
        """The reading of member ``name``; ``None`` when its file is neither ELF nor COFF, or was named before.

        Raises:
            InputError: a NUL in the name, the file missing, unreadable or not a regular file,
                more than ``MAX_THIN_MEMBERS`` members, or distinct member files of more than
                ``MAX_THIN_BYTES`` bytes together; a malformed member.
        """
        self.count += 1
        if self.count > MAX_THIN_MEMBERS:
            raise _OverBudget(self.archive, f"thin archive names more than {MAX_THIN_MEMBERS} members")
        if "\0" in name:
            raise InputError(self.archive, f"thin archive member name {shown(name)} holds a NUL byte")
        member_path = self.file_of(name)
        try:
            fd, st = open_file(member_path)
        except InputError as exc:
            raise InputError(self.archive, f"thin archive member {shown(name)} cannot be read: {exc.reason}") from exc
        try:
            key = (st.st_dev, st.st_ino)
            if key in self._seen:
                return None
            self._seen.add(key)
            self.bytes += st.st_size
            if self.bytes > MAX_THIN_BYTES:
                raise _OverBudget(
                    self.archive, f"thin archive members total more than {MAX_THIN_BYTES >> 30} GiB (distinct files)"
                )
            data = file_bytes(fd, member_path, st.st_size)
            try:
                return _read_member(self.archive, name, f"{self.archive}({name})", data)
            except InputError as exc:
                if exc.path != member_path:
                    raise
                # the member's own file failed (it shrank while read): the archive's error, saying which member
                raise InputError(self.archive, f"thin archive member {shown(name)}: {exc.reason}", exc.offset) from exc
        finally:
            os.close(fd)
