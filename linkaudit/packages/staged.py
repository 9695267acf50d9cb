"""The inputs after staging, and how a staged host path is written back as ``PACKAGE!member``."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING

from ..errors import InputError
from ..records import dataclass
from ..report import resolve_link, split_member
from .delvewheel import libs_directories
from .metadata import Distribution, distribution
from .site import conda_index_glibc, read_conda_index

if TYPE_CHECKING:  # staging (zipfile, lzma): only once a package was staged
    from ..formats import Container
    from .staging import Clash, StagingRoot


@dataclass
class Staged:
    """The inputs after staging.

    Attributes:
        paths: the inputs to audit: each package replaced by its staging root (once per root),
            every other path unchanged, in the order given.
        errors: members and packages refused or unreadable, each naming ``PACKAGE!member``.
        packages: the packages staged, as given.
        found: every package among the inputs (also those of other installations).
        clashes: paths two packages staged together both install.
        copies: (package, member name) -> how many members of that name the package holds (2 or
            more; the last copy staged and audited: ``Stager.copies``).
        sniffed: host path of each member staged as a file -> what its first bytes are (for the
            walk: ``inputs.collect``'s ``sniffed``).
        tarballs: each directory given -> the tarballs found below it, not staged
            (``prepare.TARBALL_SUFFIXES``: sdists, release archives; audited when given by name).
    """

    paths: list[str]
    errors: list[InputError]
    packages: list[str]
    _sites: list[StagingRoot] = field(default_factory=list)
    _pattern: re.Pattern[str] | None = None
    found: list[str] = field(default_factory=list)
    clashes: list[Clash] = field(default_factory=list)
    copies: dict[tuple[str, str], int] = field(default_factory=dict)
    sniffed: dict[str, Container] = field(default_factory=dict)
    tarballs: dict[str, list[str]] = field(default_factory=dict)
    _roots: dict[str, StagingRoot] | None = None  # staging root -> its site (``label_path``)
    _parent: str | None = None  # the directory every staging root is in, with a "/"
    _stop: re.Pattern[str] | None = None  # a character ``label``'s pattern stops at
    _distributions: dict[str, Distribution] | None = None  # ``distributions``, read once
    _package_of: dict[str, str | None] = field(default_factory=dict)  # ``package_of``, answered once a path

    def member_path(self, entry: str) -> str | None:
        """The staged host path of ``entry`` when it names a package member — ``PACKAGE!member``
        with a package given, or a member path as installed (``torch/_C.cpython-311-x86_64-linux-gnu.so``)
        that some package staged — else ``None``.  The package is the one whose name the ``!`` follows
        (``report.split_member``: a directory ``a!b/`` of the path is no package).  A path through
        a directory symlink of the package (``lib64/libz.so``, ``lib64 -> lib``) is found as it
        opens; the path returned is the one given (a symlink's own: ``os.path.realpath`` reads
        its target)."""
        for site in self._sites:
            package, member = split_member(entry, frozenset(site.labels)) or (None, entry)
            rel = posixpath.normpath(member)
            if rel.startswith(("/", "../")) or rel == "..":
                continue
            if rel in site.owner and (package is None or site.owner[rel] == package):
                return os.path.join(site.host, rel)
            if (
                site.links
                and resolve_link(site.links, rel) in site.files
                and (package is None or site.owner_of(rel) == package)
            ):
                return os.path.join(site.host, rel)
        return None

    def links(self) -> dict[str, str]:
        """Each symlink (or tar hard link) staged that leads inside its staging root -> what it
        resolves to, both written ``PACKAGE!member`` (``Report.links``)."""
        out: dict[str, str] = {}
        for site in self._sites:
            for rel, real in site.links.items():
                out[f"{site.owner_of(rel)}!{rel}"] = f"{site.owner_of(real)}!{real}"
        return out

    def member_directory(self, entry: str) -> bool:
        """True when ``entry`` (``PACKAGE!dir``, a package given) names a directory the package
        installs files into — binaries or not (``StagingRoot.dirs``)."""
        for site in self._sites:
            split = split_member(entry, frozenset(site.labels))
            if split is not None and split[0] in site.dirs.get(posixpath.normpath(split[1]), ()):
                return True
        return False

    def distributions(self) -> dict[str, Distribution]:
        """Each wheel staged (as given) -> what its ``.dist-info`` says (its name, tags, RECORD,
        Requires-Dist), and each conda package -> what its ``info/index.json`` says (name, subdir,
        depends); a package without either is left out.  Read once (each RECORD parsed once: the
        installation model and a rule each asked, and a 16 MiB RECORD's paths were held twice)."""
        if self._distributions is not None:
            return self._distributions
        out: dict[str, Distribution] = {}
        for site in self._sites:
            for label, files in site.dist_files.items():
                out[label] = distribution(f"{label}!{files['where']}", files)
            for label, text in site.conda_index.items():
                owned = [rel for rel, owner in site.owner.items() if owner == label]
                dist = read_conda_index(text, f"{label}!info/index.json", owned)
                if dist is not None:
                    out[label] = dist
        self._distributions = out
        return out

    def conda_glibc(self, label: str) -> tuple[int, int] | None:
        """The ``__glibc >=X.Y`` the lone conda package ``label`` (as given) declares in its
        ``info/index.json``, or ``None``."""
        for site in self._sites:
            if label in site.conda_index:
                return conda_index_glibc(site.conda_index[label])
        return None

    def delvewheel_dll_directories(self) -> tuple[str, ...]:
        """The staged host paths of the top-level ``*.libs`` directories of each wheel that
        delvewheel repaired (``delvewheel.libs_directories``), in staging order: the package's
        patched ``__init__.py`` adds them with ``os.add_dll_directory`` before any import, the same
        as ``--dll-directory``."""
        out: list[str] = []
        for site in self._sites:
            by_label: dict[str, list[str]] = {}
            for rel, listed in site.listed.items():
                by_label.setdefault(listed.package, []).append(rel)
            for files in by_label.values():
                out += libs_directories(files, site.host)
        return tuple(dict.fromkeys(out))

    def holds_packages(self, directory: str) -> bool:
        """True when a package staged was found inside the directory given ``directory``."""
        prefix = directory.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self.found or self.packages)

    def packages_at(self, root: str) -> list[str]:
        """The packages (as given) staged into the staging root ``root`` (a host path), in input
        order; empty when ``root`` is no staging root."""
        site = self._index().get(os.path.normpath(root))
        return [] if site is None else list(site.labels)

    def package_names(self) -> set[str]:
        """Every value ``package_of`` can give for a path of this staging: each root's packages,
        its name and its label for a path no package installs.  A rule that judges only wheels
        returns at once when none of these is named as one (a tarball of 200,000 members: the
        wheel rules cost 1.2 s of 3 asking each member's package)."""
        names: set[str] = set()
        for site in self._sites:
            names.update(site.labels, site.owner.values(), (site.name or "+".join(site.labels),))
        return names

    def package_of(self, path: str) -> str | None:
        """The package (as given) a staged host ``path`` was written from, or ``None``.  Each
        path's answer is kept (the staging is over: owners no longer change): the rules and the
        wheel policies ask it of every binary, 800,000 times for 200,000 members (issue 14)."""
        if path in self._package_of:
            return self._package_of[path]
        site = self._root_of(path)
        found = site.owner_of(path[len(site.host) + 1 :]) if site is not None and path != site.host else None
        self._package_of[path] = found
        return found

    def site_of(self, path: str) -> tuple[str, str] | None:
        """``(staging root, path relative to it)`` of a host ``path`` inside a staging root
        (``"."`` for the root itself), or ``None`` when it is outside every one."""
        normal = os.path.normpath(path)
        site = self._root_of(normal)
        return None if site is None else (site.host, os.path.relpath(normal, site.host))

    def _root_of(self, path: str) -> StagingRoot | None:
        """The staging root the host ``path`` is in (or is), or ``None``: looked up by the path
        component after the roots' directory, not tested against each root (2,000 tarballs given
        together: each of 6,000 binaries was tested against every root)."""
        if not self._sites:
            return None  # nothing staged: the staging room is not imported
        roots = self._index()
        if self._parent is None:
            return next((s for s in self._sites if path == s.host or path.startswith(s.host + "/")), None)
        if not path.startswith(self._parent):
            return None
        cut = path.find("/", len(self._parent))
        return roots.get(path if cut < 0 else path[:cut])

    def directory_owners(self, path: str) -> list[str]:
        """The packages that install files into the host directory ``path`` (or below it), in input order."""
        where = self.site_of(path)
        if where is None:
            return []
        return list(self._index()[where[0]].dirs.get(where[1], ()))

    def label_path(self, path: str) -> str:
        """``label(path)`` for a text that is one host path (a file's or a binary's).  A path
        spelled plainly (normalised, no character the pattern stops at) inside a staging root is
        looked up by its root, not searched for with the pattern (400,000 labels for 200,000
        members: issue 14 §1); any other text goes to ``label``."""
        roots = self._index()
        if self._parent is None or not path.startswith(self._parent):
            return self.label(path)
        cut = path.find("/", len(self._parent))
        site = roots.get(path[:cut]) if cut > 0 else None
        rel = path[cut + 1 :]
        if (
            site is None
            or not rel
            or (self._stop is not None and self._stop.search(rel) is not None)
            or posixpath.normpath(rel) != rel
        ):
            return self.label(path)
        return f"{site.owner_of(rel)}!{rel}"

    def label(self, text: str, quote: Callable[[str], str] | None = None) -> str:
        """``text`` with every staged host path written ``PACKAGE!member`` (the staging root
        alone as ``PACKAGE``); text without one is returned unchanged.  ``quote`` escapes each
        replacement for the document it goes into (a rendered JSON or text report)."""
        if not self._sites:
            return text
        roots = self._index()
        if self._parent is not None and self._parent not in text:  # one test, however many roots
            return text
        if self._parent is None and not any(host in text for host in roots):
            return text
        assert self._pattern is not None
        out: list[str] = []
        done = 0
        while (match := self._pattern.search(text, done)) is not None:
            site = roots.get(match.group(1))
            if site is None:  # a name beside the staging roots, none of them
                out.append(text[done : match.end(1)])
                done = match.end(1)
                continue
            end = _member_end(site, text, match.end(1), match.end())
            rel = text[match.end(1) : end].strip("/")
            if rel:
                rel = posixpath.normpath(rel)  # torch/lib/../../nvidia/x -> nvidia/x, and its owner
                rel = "" if rel == "." else rel
            owner = site.owner_of(rel)
            label = f"{owner}!{rel}" if rel else owner
            out.append(text[done : match.start()])
            out.append(quote(label) if quote is not None else label)
            done = end
        out.append(text[done:])
        return "".join(out)

    def _index(self) -> dict[str, StagingRoot]:
        """Each staging root -> its site, built once with what ``label`` searches for: the
        directory every root is in (``_parent``, one per staging: ``prepare._Roots``) followed by
        one path component, looked up among the roots — one search of a text however many
        packages were staged (2,000 tarballs: every text was searched for each root in turn);
        roots in several directories are searched for by name, the longest first."""
        if self._roots is not None:
            return self._roots
        from .staging import STOP_CHARS  # loaded already: a root was staged

        self._stop = re.compile(f"[{STOP_CHARS}]")
        self._roots = {s.host: s for s in self._sites}
        parents = {os.path.dirname(h) for h in self._roots}
        self._parent = parents.pop() + "/" if len(parents) == 1 else None
        if self._parent is not None:
            head = f"{re.escape(self._parent)}[^/{STOP_CHARS}]+"
        else:
            head = "|".join(re.escape(h) for h in sorted(self._roots, key=lambda h: -len(h)))
        self._pattern = re.compile(f"({head})(/[^{STOP_CHARS}]*)?")
        return self._roots


def _member_end(site: StagingRoot, text: str, at: int, end: int) -> int:
    """Where the member path that starts at ``text[at]`` (a ``/`` after the staging root) ends.

    The pattern stops at characters a member name may hold (a space, a quote, brackets): the
    longest path the package really installs wins over the pattern's guess ``end``.  Such a
    path spells the guess before its first stop character: looked up, not searched for."""
    for known in site.paths_past_stop(text[at + 1 : end]):
        stop = at + len(known) + 1
        if text.startswith("/" + known, at) and (stop == len(text) or not text[stop].isalnum()):
            return stop
    return end
