"""A site layout keeps the directories above the files listed as a tree sharing their prefixes (a
tester's RECORD of lines 2,000 directories deep, each directory above each line kept by its full
path: 6.4 MB of RECORD took 7.2 GB and exit 3 under a limit); it answers as the paths did."""

from __future__ import annotations

import posixpath
import random
import tracemalloc
from pathlib import Path

from linkaudit.packages.metadata import Distribution
from linkaudit.packages.site import Site, SiteLayout


def _deep_site(root: Path, lines: int, depth: int) -> Site:
    """One distribution listing ``lines`` paths, each under its own top directory, ``depth`` deep."""
    deep = "/".join(["a"] * depth)
    files = ("foo/_x.so", *(f"t{i:x}/{deep}/f.py" for i in range(lines)))
    return Site(str(root), (Distribution("foo", "1.0", str(root), files=files),))


def test_deep_record_lines_cost_memory_linear_in_their_bytes(tmp_path: Path) -> None:
    """Bytes allocated building the layout (``tracemalloc``'s peak: no RSS, no timing) stay within a
    small multiple of the bytes listed: by full paths they were ~depth / 2 times them (~500x here)."""
    site = _deep_site(tmp_path, 50, 1000)
    listed = sum(len(f) for d in site.distributions for f in d.files)
    tracemalloc.start()
    try:
        layout = SiteLayout((site,))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * listed + 256 * 1024, (peak, listed)
    assert layout.directory_owners(str(tmp_path / "t0")) == ["foo"]


def test_directories_deep_inside_a_listed_path_have_their_owners(tmp_path: Path) -> None:
    """100 lines 2,000 deep: each directory above them owned, none beside them (under a second)."""
    site = _deep_site(tmp_path, 100, 2000)
    layout = SiteLayout((site,))
    for top in ("t0", "t63"):
        for depth in (0, 1, 999, 2000):
            assert layout.directory_owners(str(tmp_path / top / "/".join(["a"] * depth))) == ["foo"]
        assert layout.directory_owners(str(tmp_path / top / "/".join(["a"] * 2001))) == []
        assert layout.directory_owners(str(tmp_path / top / "/".join(["a"] * 999) / "b")) == []
    assert layout.directory_owners(str(tmp_path / "t64")) == []
    assert layout.directory_owners(str(tmp_path / "foo")) == ["foo"]
    assert layout.directory_owners(str(tmp_path)) == []


def _by_paths(site: Site) -> dict[str, dict[str, None]]:
    """Each directory above each file, by its path, with its owners: what the layout kept before."""
    dirs: dict[str, dict[str, None]] = {}
    for dist in site.distributions:
        for rel in dist.files:
            parent = posixpath.dirname(rel)
            while parent and not parent.startswith(".."):
                dirs.setdefault(parent, {})[dist.name] = None
                parent = posixpath.dirname(parent)
    return dirs


def test_directory_owners_are_those_each_directory_kept_by_its_path_had(tmp_path: Path) -> None:
    """Random sites (components sharing prefixes, names shared by two distributions, ``..x``
    directories): every directory above a file, and its near misses, answer as before."""
    rng = random.Random(7)
    names = ["a", "ab", "b", "abc", "..x", "a.b"]
    for _ in range(200):
        dists = []
        for k in range(rng.randint(1, 5)):
            files = tuple(
                "/".join(rng.choice(names) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(0, 8))
            )
            dists.append(Distribution(f"d{rng.randint(0, k)}", "1", str(tmp_path), files=files))
        site = Site(str(tmp_path), tuple(dists))
        layout, expected = SiteLayout((site,)), _by_paths(site)
        asked = set(expected) | {f"{d}/{n}" for d in expected for n in names} | {d[:-1] for d in expected}
        asked |= {n for n in names} | {f"{n}/{m}" for n in names for m in names}
        for rel in sorted(a for a in asked if a and posixpath.normpath(a) == a):
            assert layout.directory_owners(str(tmp_path / rel)) == list(expected.get(rel, ())), (rel, dists)
