"""``linkaudit why PATH LIBRARY|SYMBOL``: why a library is loaded, or where a symbol binds."""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import click

from ..config.baseline import original_names, unhashed
from ..loader.fs import FileSystemView
from ..loader.image_binding import ImageBinder, ImportOutcome
from ..loader.images import ImageLoad, ImageLoader, ImageOutcome
from ..model import Binary
from ..output import SCHEMA_VERSION, text_safe, utf8_tree
from ..output.graph import restrict
from ..rules.data import driver_index
from .cacheflag import no_cache_option
from .emit import emit
from .options import loader_options
from .pictures import PICTURE_FORMATS, format_option, load_graphs, render_picture
from .reading import Inputs, per_installation, together_option
from .tree import owners_of, run_analysis, run_images
from .whydefs import definition_lines, elf_definitions, image_definitions


def _base(path: str | None) -> str:
    return (path or "").rsplit("/", 1)[-1]


def _root_label(load: ImageLoad) -> str:
    """The root as the text names it: a slice of a universal Mach-O file with its architecture
    (``universal.dylib(arm64)``), since each slice is a load of its own."""
    image = load.images.get(load.root)
    return image.display_path if image is not None and image.member else load.root


def _image_uses(images: list[ImageLoad], binaries: Sequence[Binary], target: str) -> list[dict[str, Any]]:
    """Every import named ``target`` of every image of the PE and Mach-O loads, bound in its load
    (``loader.image_binding``): from which library, to which image, through which forwarders or
    re-exports, or why nowhere.  A Mach-O name may be given with its leading underscore."""
    binder: ImageBinder | None = None
    uses: list[dict[str, Any]] = []
    for load in images:
        dyld = load.loader is ImageLoader.DYLD
        for path in load.objects:
            image = load.images.get(path)
            if image is None:
                continue
            for sym in image.symbols.iter_undefined():
                if sym.name != target and not (dyld and "_" + sym.name == target):
                    continue
                binder = binder or ImageBinder(binaries, images)
                b = binder.bind(load, path, sym)
                uses.append(
                    {
                        "root": load.root,
                        "user": path,
                        "reference": sym.name,
                        "weak": sym.weak,
                        "binds_to": b.provider,
                        "scope": None if b.provider is None else "flat" if b.flat else "library",
                        "defined_in_scope": [{"path": p, "versions": [None]} for p in binder.exporters(load, sym.name)],
                        "kind": load.kind,
                        "loader": load.loader.value,
                        "machine": load.machine,
                        "root_display": _root_label(load),
                        "chain": load.chain(path),
                        "library": b.library,
                        "outcome": b.outcome.value,
                        "provider_symbol": b.provider_symbol,
                        "via": [{"path": p, "symbol": n} for p, n in b.via],
                        "reason": b.reason,
                    }
                )
    return uses


def _image_use_lines(u: dict[str, Any]) -> list[str]:
    """The text of one PE or Mach-O use: the importer's chain, the library named, where it binds."""
    chain = " → ".join(_base(p) for p in u["chain"])
    weak = " (weak)" if u["weak"] else ""
    source = f"from {u['library']}" if u["library"] else "by flat lookup"
    head = f"{u['root_display']} [{u['kind']}]: {chain} uses {u['reference']}{weak} {source}: "
    if u["binds_to"]:
        renamed = f" as {u['provider_symbol']}" if u["provider_symbol"] != u["reference"] else ""
        how = f" ({u['reason']})" if u["reason"] else ""
        lines = [head + f"binds to {u['binds_to']}{renamed}{how}"]
        if len(u["via"]) > 1:
            what = "forwarded" if u["loader"] == ImageLoader.WINDOWS.value else "re-exported"
            steps = " → ".join(f"{_base(v['path'])} ({v['symbol']})" for v in u["via"])
            lines.append(f"    {what}: {steps}")
    else:
        judged = u["outcome"] not in (ImportOutcome.SYSTEM.value, ImportOutcome.NOT_JUDGED.value)
        where = "binds nowhere" if judged else "not judged"
        lines = [head + f"{where}: {u['reason']}"]
        if len(u["via"]) > 1:
            lines.append("    looked in: " + " → ".join(f"{_base(v['path'])} ({v['symbol']})" for v in u["via"]))
    lines.extend(f"    exported by {d['path']}" for d in u["defined_in_scope"])
    return lines


def _soft_lines(soft: list[dict[str, Any]], target: str, fs: FileSystemView | None) -> list[str]:
    """One line per file keeping ``target``'s name in .rodata (``soft``: its root and object
    path each), however many roots and paths reach it (``torch/lib/../../nvidia/cu13/lib/x`` and
    ``nvidia/cu13/lib/x`` are one file: one (device, inode) in ``fs``); two files of one name are
    told apart by their paths."""
    files: dict[object, str] = {}
    for path in sorted({x["object"] for x in soft}, key=len):  # the shortest path of a file names it
        st = fs.stat(path) if fs is not None else None
        files.setdefault((st.st_dev, st.st_ino) if st is not None else path, path)
    names = Counter(_base(p) for p in files.values())
    return [
        f"{_base(p) if names[_base(p)] == 1 else p} keeps the name {target} in .rodata: a soft dependency "
        "it may dlopen() (not a DT_NEEDED, so not loaded with it)"
        for p in sorted(files.values(), key=lambda p: (_base(p), p))
    ]


def _names_it(load: ImageLoad, needed: str, path: str | None, target: str) -> bool:
    """True when ``target`` names the import ``needed`` (found at ``path``) of an image load."""
    if load.loader is ImageLoader.WINDOWS:
        return target.lower() in {needed.lower(), _base(path).lower()}
    found = load.images.get(path) if path else None
    names = {needed, _base(needed), _base(path)}
    if found is not None and found.soname:
        names.update((found.soname, _base(found.soname)))
    return target in names


def _picture(
    inputs: Inputs, fmt: str, targets: Sequence[str], analysis: Any, images: list[ImageLoad], uses: list[dict[str, Any]]
) -> str:
    """The chains of ``why`` as a picture: each load (reached or not) cut down to the paths from its
    root to the nodes TARGET names (a library by DT_NEEDED, file or install name, or the names a
    repair tool gave it, ``targets``; a symbol: the objects using it and those it binds to)."""
    users = {inputs.staged.label(p) for u in uses for p in (u.get("user"), u.get("binds_to"), u.get("importer")) if p}
    names = set(targets)
    graphs = []
    for g in load_graphs(inputs, analysis.loads, images, owners_of(inputs), analysis.system_dirs):
        named = {e.target for e in g.edges if e.name in names or _base(e.name) in names}
        named |= {n.id for n in g.nodes if n.label in names or _base(n.path) in names or n.path in users}
        if named:
            graphs.append(restrict(g, sorted(named)))
    return render_picture(fmt, graphs)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(), metavar="PATH...")
@click.argument("target", metavar="LIBRARY|SYMBOL")
@format_option("only the chains from each root to TARGET (or to the objects using the symbol)")
@together_option
@loader_options
@no_cache_option
def why(paths: tuple[str, ...], target: str, fmt: str, together: bool, **options: Any) -> int:
    """Explain TARGET in the loads of PATH... (files, directories or packages: several wheels
    given together make one site-packages).

    For a LIBRARY (a DT_NEEDED name, SONAME or file name): every chain of DT_NEEDED
    entries by which an import root pulls it in, and where it resolved or which
    paths were tried. For a SYMBOL: which definition each use binds to, in which
    scope, and every object in that scope that defines it; for PE and Mach-O, each
    image importing it, from which library, the image it binds to (through PE
    forwarders and Mach-O re-exports; a flat lookup to the first image of the load
    that exports it), or why none does. A universal file's slice is named
    (universal.dylib(arm64)). A LIBRARY no load has may be named as it was before a
    repair tool renamed it with a hash (libjpeg.so.62 for auditwheel's
    libjpeg-25f93ad1.so.62.4.0, msvcp140.dll for delvewheel's msvcp140-<32 hex>.dll):
    the renamed file is taken, and said. Exit status 1 when TARGET appears nowhere.
    """
    return per_installation(
        paths, together, fmt, lambda inputs: _why(inputs, " ".join(paths), target, fmt, options), _found_anywhere
    )


def _found_anywhere(statuses: list[int]) -> int:
    """The exit status of ``why`` over several installations: 2 when an input of one could not be
    read, else 0 when TARGET appears in one, else 1."""
    if 2 in statuses:
        return 2
    return 0 if 0 in statuses else 1


def _why(inputs: Inputs, path: str, target: str, fmt: str, options: dict[str, Any]) -> int:
    """Run ``why`` over ``inputs`` (named ``path`` in messages) and print in ``fmt``: the chains
    that load a library named ``target`` or, when none does, where a symbol of that name binds;
    plus the dlopen() names that mention it. Returns the exit status (1 when ``target`` appears
    nowhere, the analysis' own status when not 0)."""
    analysis, status = run_analysis(inputs, options)
    images = run_images(inputs, options)
    chains, renamed = _library_chains(analysis, owners_of(inputs), images, target)
    soft = _elf_soft(analysis, target)
    uses: list[dict[str, Any]] = []
    defined: list[dict[str, Any]] = []
    if not chains:
        uses = _elf_uses(analysis, target)
        uses.extend(_image_uses(images, inputs.binaries, target))
    if not chains and not uses:  # a symbol exported in the load that nothing uses: where it is defined
        defined = elf_definitions(analysis, target) + image_definitions(images, inputs.binaries, target)
    if fmt in PICTURE_FORMATS:
        emit(_picture(inputs, fmt, [target, *renamed], analysis, images, uses))
    elif fmt == "json":
        doc = {
            "schema": SCHEMA_VERSION,
            "target": target,
            "renamed": renamed,
            "library_chains": chains,
            "symbol_uses": uses,
            "unused_definitions": defined,
            "dlopen_names": soft,
        }
        emit(inputs.relabel(json.dumps(utf8_tree(doc), indent=2, ensure_ascii=False) + "\n", fmt))
    else:
        lines = [
            f"{target}: no library of that name; taken as {name}, the copy a repair tool renamed" for name in renamed
        ]
        lines.extend(line for c in chains for line in _chain_lines(c))
        lines.extend(line for u in uses for line in _use_lines(u))
        lines.extend(line for d in defined for line in definition_lines(target, d))
        lines.extend(_soft_lines(soft, target, analysis.search_context.fs if analysis.search_context else None))
        if not lines:
            lines = _nowhere_lines(analysis, images, target, path, inputs, status)
        if lines:
            emit(inputs.relabel("\n".join(text_safe(line) for line in lines) + "\n", fmt))
    if status:
        return status
    return 0 if chains or uses or soft or defined else 1


def _nowhere_lines(
    analysis: Any, images: list[ImageLoad], target: str, path: str, inputs: Inputs, status: int
) -> list[str]:
    """The text when ``target`` appears nowhere: said so, with the libraries whose names begin with
    it; nothing when no input could be read (its error said why: no verdict on nothing), and said
    to be over what could be read when some input could not."""
    if status == 2 and not inputs.binaries:
        return []
    read = " (what could be read of it: an input could not be, see above)" if status == 2 else ""
    lines = [f"{target}: not a library or symbol of any load of {path}{read}"]
    similar = _similar_names(analysis, images, target)
    if similar:  # auditwheel and delocate rename what they vendor: libgfortran-040039e1-….so.5
        lines.append(f"libraries of the loads whose names begin with it: {', '.join(similar)}")
    return lines


def _library_chains(
    analysis: Any, owners: Callable[[str], str | None] | None, images: list[ImageLoad], target: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """The chains loading a library named ``target`` (``_elf_chains``, ``_image_chains``) and, when
    none does, those loading the libraries repair tools renamed from it (``_renamed_from``); with
    the renamed names taken (empty when ``target`` named a library as it is)."""
    chains = _elf_chains(analysis, owners, target)
    chains.extend(_image_chains(images, target))
    if chains:
        return chains, []
    renamed = _renamed_from(analysis, images, target)
    seen: set[tuple[str, tuple[str, ...], str | None]] = set()
    for name in renamed:  # a file's name and its SONAME may both be renamed ones: each chain once
        for chain in (*_elf_chains(analysis, owners, name), *_image_chains(images, name)):
            key = (chain["root"], tuple(chain["chain"]), chain["path"])
            if key not in seen:
                seen.add(key)
                chains.append(chain)
    return chains, renamed


def _renamed_from(analysis: Any, images: list[ImageLoad], target: str) -> list[str]:
    """The names of the loads' libraries (file names, SONAMEs, DT_NEEDED and import names) that a
    repair tool gave a library named ``target``: ``target`` is one of its ``original_names`` (the
    hash taken out by ``unhashed``'s rule: auditwheel's ``libjpeg-25f93ad1.so.62.4.0`` for
    ``libjpeg.so.62`` or ``libjpeg.so.62.4.0``, delvewheel's ``msvcp140-2631…a746.dll`` for
    ``msvcp140.dll``, a DLL name without case), sorted."""
    names: set[str] = set()
    for part in analysis.parts():  # each part once
        for o in part.part.own_objects():
            names.update((posixpath.basename(o.path), o.binary.soname or ""), (n.name for n in o.binary.needed))
    for image_load in images:
        names.update(posixpath.basename(p) for p in image_load.images)
        names.update(needed for _requester, needed in image_load.resolutions)
    wanted = target.lower() if target.lower().endswith(".dll") else target
    found: dict[str, str] = {}  # a DLL's name written in two cases is one name
    for name in sorted(names):
        dll = name.lower().endswith(".dll")
        if wanted in (tuple(n.lower() for n in original_names(name)) if dll else original_names(name)):
            found.setdefault(name.lower() if dll else name, name)
    return sorted(found.values())


def _similar_names(analysis: Any, images: list[Any], target: str, most: int = 5) -> list[str]:
    """File names of the loaded libraries (ELF objects, PE and Mach-O images) that begin with
    ``target``, as written or with a repair tool's content hash taken out (``libgfortran`` ->
    ``libgfortran-040039e1-0352e75f.so.5.0.0``, ``msvcp140.dll`` -> ``msvcp140-2631…a746.dll``: the
    names auditwheel and delvewheel give their vendored copies), sorted, at most ``most``."""
    names = {posixpath.basename(o.path) for load in analysis.loads for o in load.objects}
    names.update(posixpath.basename(p) for load in images for p in load.images)
    stem = target.rsplit("/", 1)[-1]
    if not stem:
        return []
    # also with the repair tool's hash taken out: msvcp140.dll -> msvcp140-2631…a746.dll (delvewheel),
    # libavif.so.16 -> libavif-c6062d5f.so.16.4.2 (auditwheel)
    return sorted(
        n for n in names if n != stem and (n.startswith(stem) or unhashed(n).replace("-*", "").startswith(stem))
    )[:most]


def _elf_chains(analysis: Any, owners: Callable[[str], str | None] | None, target: str) -> list[dict[str, Any]]:
    """The ELF loads' resolutions of a library named ``target`` (as needed, by its file name or
    its DT_SONAME), with the chain from each root, where it was found (and who installs it,
    through ``owners``) or the paths tried and why not.

    Each part of the loads is read once (``LinkageAnalysis.parts``): a resolution many loads share
    (lib0 needs lib1 ... needs lib999, each a root) is told for the first ``ROOTS_SHOWN`` loads
    holding it, the last of them counting the others (``more_roots``); in load order, as before."""
    holders = analysis.holders()
    found: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for part in analysis.parts():
        held = holders[id(part.part)]
        for pos, ((requester, needed), res) in enumerate(part.part.own_resolutions().items()):
            if not _elf_names_it(analysis, part.part, held.first[0], needed, res.path, target):
                continue
            for i in held.first:
                chain = _elf_chain(analysis, i, requester, needed, res, owners)
                if i == held.first[-1] and held.count > len(held.first):
                    chain["more_roots"] = held.count - len(held.first)
                found.append(((i, analysis.loads[i].height - part.part.height, pos), chain))
    found.sort(key=lambda x: x[0])
    return [chain for _key, chain in found]


def _elf_names_it(analysis: Any, part: Any, first: int, needed: str, path: str | None, target: str) -> bool:
    """True when ``target`` names the DT_NEEDED ``needed`` found at ``path``: as needed, by the file's
    name or by its DT_SONAME (the object looked up from ``part`` down, else in load ``first``)."""
    if target in (needed, _base(path)):
        return True
    obj = (part.object(path) or analysis.loads[first].object(path)) if path else None
    return obj is not None and obj.binary.soname == target


def _elf_chain(
    analysis: Any, index: int, requester: str, needed: str, res: Any, owners: Callable[[str], str | None] | None
) -> dict[str, Any]:
    """How load ``index`` meets ``requester``'s DT_NEEDED ``needed`` (resolved as ``res``)."""
    load = analysis.loads[index]
    return {
        "root": load.root,
        "kind": load.kind.value,
        "reached": analysis.roots[index].reached,
        "chain": [*load.chain(requester), needed],
        "path": res.path,
        "source": res.source.value if res.source else None,
        "owner": res.owner,
        "distribution": owners(res.path) if owners is not None and res.path else None,
        "tried": [a.path for a in res.attempts if a.outcome.value != "driver-absent"] if not res.found else [],
        "driver_absent": any(a.outcome.value == "driver-absent" for a in res.attempts),
        "error": res.error,
    }


def _elf_soft(analysis: Any, target: str) -> list[dict[str, Any]]:
    """The objects of the ELF loads keeping ``target`` in .rodata (for ``dlopen``), with a root
    holding each: each part read once, the first ``ROOTS_SHOWN`` loads holding it named."""
    holders = analysis.holders()
    found: list[tuple[tuple[int, int, int], dict[str, Any]]] = []
    for part in analysis.parts():
        held = holders[id(part.part)]
        for pos, o in enumerate(part.part.own_objects()):
            if target in o.binary.dlopen_names:
                found.extend(
                    (
                        (i, analysis.loads[i].height - part.part.height, pos),
                        {"root": analysis.loads[i].root, "object": o.path},
                    )
                    for i in held.first
                )
    found.sort(key=lambda x: x[0])
    return [entry for _key, entry in found]


def _image_chains(images: list[ImageLoad], target: str) -> list[dict[str, Any]]:
    """The PE and Mach-O image loads' resolutions of a library named ``target``: a DLL name
    compares without case (as Windows compares), a dylib by its install name, its leaf name
    (@rpath/libX.dylib is libX.dylib), or the file's name and install name where it was found."""
    chains: list[dict[str, Any]] = []
    for image_load in images:
        for (requester, needed), ires in image_load.resolutions.items():
            if not _names_it(image_load, needed, ires.path, target):
                continue
            source = "system" if ires.system else ires.source
            chains.append(
                {
                    "root": image_load.root,
                    "kind": image_load.kind,
                    "reached": image_load.reached,
                    "chain": [*image_load.chain(requester), needed],
                    "path": ires.path or (needed if ires.system else None),
                    "source": source,
                    "owner": None,
                    "tried": [a.path for a in ires.attempts] if ires.path is None and not ires.system else [],
                    # the GPU driver's library (nvcuda.dll, libcuda.dylib): never shipped, driver-link's finding
                    "driver_absent": ires.path is None and driver_index().is_driver(needed),
                    "error": None,
                    "loader": image_load.loader.value,
                    "machine": image_load.machine,
                    "root_display": _root_label(image_load),
                    "optional": ires.optional,
                    "skipped": [
                        {"path": a.path, "outcome": str(a.outcome), "detail": a.detail}
                        for a in ires.attempts
                        if a.outcome in (ImageOutcome.WRONG_MACHINE, ImageOutcome.INVALID)
                    ],
                }
            )
    return chains


def _elf_uses(analysis: Any, target: str) -> list[dict[str, Any]]:
    """Every reference to symbol ``target`` (by name or ``name@version``) in the ELF loads: where
    it binds (global or local scope, or nowhere) and every object of its lookup scope defining it."""
    uses: list[dict[str, Any]] = []
    for (root_path, obj_path), bounds in analysis.bindings.items():
        load = next(ld for ld in analysis.loads if ld.root == root_path)
        for b in bounds:
            if b.symbol.name != target and b.symbol.display_name() != target:
                continue
            scope = load.scope_for(obj_path)
            definers = []
            for p in scope:
                o = load.object(p)
                if o is None:
                    continue
                defs = o.binary.symbols.definitions().get(b.symbol.name)
                if defs:
                    definers.append({"path": p, "versions": [d.version for d in defs]})
            uses.append(
                {
                    "root": root_path,
                    "user": obj_path,
                    "reference": b.symbol.display_name(),
                    "weak": b.symbol.weak,
                    "binds_to": b.provider,
                    "scope": "global" if b.provider in load.global_scope else "local" if b.provider else None,
                    "defined_in_scope": definers,
                }
            )
    return uses


def _chain_lines(c: dict[str, Any]) -> list[str]:
    """The text lines for one chain of ``_elf_chains`` / ``_image_chains``: root, chain and the
    path found (how, installed by whom), or why not with the paths tried; then the paths skipped."""
    lines: list[str] = []
    chain = _chain_text(c["chain"])
    root = c.get("root_display", c["root"])
    if c["path"]:
        how = f"{c['source']}" + (f" of {_base(c['owner'])}" if c["owner"] else "")
        owned = f" (installed by {c['distribution']})" if c.get("distribution") else ""
        lines.append(f"{root} [{c['kind']}]: {chain} => {c['path']} [{how}]{owned}")
    else:
        why_not = "error: " + c["error"] if c["error"] else "not found"
        if c["driver_absent"] and c.get("loader"):
            why_not = "not found (GPU driver library: only the driver installs it, no package ships it)"
        elif c["driver_absent"]:
            why_not = "not found (GPU driver library: absent in driverless mode; --with-driver looks for it)"
        elif c.get("optional"):
            why_not = "not found (a weak dylib: allowed)"
        lines.append(f"{root} [{c['kind']}]: {chain} => {why_not}")
        lines.extend(f"    tried {t}" for t in c["tried"])
    lines.extend(f"    skipped {s['path']}: {s['outcome']} ({s['detail']})" for s in c.get("skipped", ()))
    if c.get("more_roots"):
        how = " → ".join(_base(p) for p in c["chain"][-2:])
        lines.append(f"    and {c['more_roots']} more roots load it the same way ({how})")
    return lines


#: A chain longer than this is told by its first and last ``CHAIN_ENDS`` steps and how many lie between.
MAX_CHAIN = 16
CHAIN_ENDS = 6


def _chain_text(chain: Sequence[str]) -> str:
    """``a → b → c``, the file names of ``chain``; past ``MAX_CHAIN`` steps, ``a → … (988 more) → z``
    (``--format json`` has every step)."""
    names = [_base(p) for p in chain]
    if len(names) > MAX_CHAIN:
        names = [*names[:CHAIN_ENDS], f"… ({len(names) - 2 * CHAIN_ENDS} more)", *names[-CHAIN_ENDS:]]
    return " → ".join(names)


def _use_lines(u: dict[str, Any]) -> list[str]:
    """The text lines for one symbol use: an image import (``_image_use_lines``) or an ELF
    reference of ``_elf_uses``, with where it binds and each definition in its scope."""
    if "loader" in u:
        return _image_use_lines(u)
    where = f"binds to {u['binds_to']} ({u['scope']} scope)" if u["binds_to"] else "binds nowhere"
    lines = [f"{u['root']}: {_base(u['user'])} uses {u['reference']}{' (weak)' if u['weak'] else ''}: {where}"]
    for d in u["defined_in_scope"]:
        versions = ", ".join(v or "unversioned" for v in d["versions"])
        lines.append(f"    defined in {d['path']} ({versions})")
    return lines
