"""``linkaudit tree PATH...``: the dependency tree of each import root, as its loader would build it
(ld.so for ELF; the Windows search order for PE and dyld for Mach-O, drawn by ``output.imagetree``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import click

from ..audit import analyze_inputs, dll_directories, installation_target, staged_entries
from ..errors import ConfigError
from ..loader.dyld import analyze_dyld
from ..loader.images import ImageLoad, ImageLoader
from ..loader.windows import analyze_windows
from ..output import text_safe, utf8_tree
from ..packages.installation import installation_model
from .cacheflag import no_cache_option
from .emit import emit
from .options import loader_options, target_from_options
from .pictures import PICTURE_FORMATS, format_option, load_graphs, render_picture
from .reading import Inputs, per_installation, together_option


def owners_of(inputs: Inputs) -> Callable[[str], str | None] | None:
    """Who installs each path, for naming it (``packages.installation``): ``None`` without metadata."""
    model = installation_model(inputs.staged, inputs.sites())
    return model.owner if model is not None else None


def run_analysis(
    inputs: Inputs, options: dict[str, Any], bind_all: bool = False, quiet: bool = False
) -> tuple[Any, int]:
    """Emulate the loader over the inputs read with the options given; returns (analysis, exit status).

    Unreadable inputs are reported on stderr unless ``quiet`` (``check`` reports them itself; exit
    status 2); the others are still analysed.  An
    installed site among the inputs is loaded against its most demanding tag's policy, as by ``check``.
    """
    env = installation_target(target_from_options(**options), options["target_env"], inputs.staged, inputs.sites())
    errors = list(inputs.errors)
    entries = staged_entries(inputs.entries(options.get("entries", ())), inputs.staged)
    analysis, more = analyze_inputs(inputs.binaries, env, entries, bind_all=bind_all, verify_all=True)
    errors.extend(more)
    for problem in errors if not quiet else ():
        click.echo(f"linkaudit: error: {text_safe(inputs.staged.label(str(problem)))}", err=True)
    if analysis is None:
        raise ConfigError("the loader emulation could not run (see the errors above)")
    return analysis, 2 if errors else 0


def run_images(inputs: Inputs, options: dict[str, Any]) -> list[ImageLoad]:
    """The image loads with the loader options given: the Windows loads of the PE inputs, then the
    dyld loads of the Mach-O inputs (none without inputs of the format), from the roots ``--entry``
    names as for ELF.  Entries, loader directories and ``--executable-path`` may name package
    members (``--dll-directory torch/lib``), as for ``check``."""

    def staged(option: str) -> tuple[str, ...]:
        given = options.get(option) or ()
        return staged_entries(inputs.entries(given) if option == "entries" else given, inputs.staged)

    executable = (
        staged_entries((options["executable_path"],), inputs.staged)[0] if options.get("executable_path") else None
    )
    windows = analyze_windows(
        inputs.binaries,
        dll_directories(options.get("dll_directories") or (), inputs.staged, inputs.sites()),
        options.get("preload_dlls", ()),
        path=staged("windows_path"),
        entries=staged("entries"),
    )
    dyld = analyze_dyld(
        inputs.binaries,
        executable,
        library_path=staged("dyld_library_path"),
        fallback_library_path=staged("dyld_fallback_library_path"),
        entries=staged("entries"),
    )
    return [*windows, *dyld]


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@format_option("each root's load")
@click.option("--verbose", "-v", is_flag=True, help="List every path tried, for found libraries too.")
@click.option("--all-roots", is_flag=True, help="Also draw inputs no root reaches (loaded alone as a dlopen).")
@click.option(
    "--bind",
    is_flag=True,
    help="Also bind every undefined symbol of every loaded object and count the outcome (PE and Mach-O: "
    "every import, through forwarders and re-exports, counted per load and per image; JSON: each load's bind).",
)
@together_option
@loader_options
@no_cache_option
def tree(
    paths: tuple[str, ...], fmt: str, verbose: bool, all_roots: bool, bind: bool, together: bool, **options: Any
) -> int:
    """Draw the dependency tree of each import root as its platform's loader would load it:
    glibc's ld.so for ELF, the Windows search order for PE, dyld for Mach-O.

    Each library is shown with the path it resolved to and why (RPATH or RUNPATH of
    which object, LD_LIBRARY_PATH, ld.so.cache, system directory, LC_RPATH of which
    image, DYLD_LIBRARY_PATH, the DLL's directory, PATH, already loaded); missing
    ones with every path tried. Never executes or loads the inputs.
    Exit status 1 when a root's load would fail (with ``--bind``: also a PE or Mach-O import its
    library does not export), 2 when an input cannot be read.
    """
    return per_installation(
        paths, together, fmt, lambda inputs: _tree(inputs, fmt, verbose, all_roots, bind, options), max
    )


def _tree(inputs: Inputs, fmt: str, verbose: bool, all_roots: bool, bind: bool, options: dict[str, Any]) -> int:
    """Run ``tree`` over ``inputs`` and print in ``fmt`` (see :func:`tree`); returns the exit
    status: the analysis' own when not 0, else 1 when a drawn load fails (:func:`_failed`)."""
    from ..loader.image_binding import ImageBinder
    from ..output.imagetree import render_image_bind_text, render_image_loads_text
    from ..output.tree import render_json, render_text

    analysis, status = run_analysis(inputs, options, bind_all=bind)
    loads = [ld for ld, root in zip(analysis.loads, analysis.roots, strict=True) if root.reached or all_roots]
    # as for ELF, an input no root reaches (loaded alone) is drawn with --all-roots only
    images = [ld for ld in run_images(inputs, options) if ld.reached or all_roots]
    # --bind: every import of every image of each PE and Mach-O load, bound in that load
    binder = ImageBinder(inputs.binaries, images) if bind and images else None
    image_bindings = [binder.bind_load(ld) for ld in images] if binder is not None else []
    if fmt in PICTURE_FORMATS:
        emit(render_picture(fmt, load_graphs(inputs, loads, images, owners_of(inputs), analysis.system_dirs)))
    elif fmt == "json":
        doc = json.loads(render_json(analysis, loads, verbose, owners_of(inputs)))
        _add_image_roots(doc, images, image_bindings if binder is not None else None)
        emit(inputs.relabel(json.dumps(utf8_tree(doc), indent=2, ensure_ascii=False) + "\n", fmt))
    else:
        text = render_text(analysis, loads, verbose, owners_of(inputs)) if loads else ""
        emit(inputs.relabel(text + (render_image_loads_text(images, verbose) if images else ""), fmt))
    if bind and fmt == "text":
        _emit_elf_binding(inputs, fmt, analysis, loads)
        for ld, bindings in zip(images, image_bindings, strict=True):
            if bindings:
                emit(inputs.relabel(render_image_bind_text(ld, bindings), fmt))
    return status or (1 if _failed(analysis, loads, images, image_bindings) else 0)


def _add_image_roots(doc: dict[str, Any], images: list[ImageLoad], image_bindings: list[Any] | None) -> None:
    """Add the PE and Mach-O loads to the JSON document ``doc`` as ``windows_roots`` and
    ``dyld_roots`` (each only when it has a load); with ``image_bindings`` (--bind: one list of
    ``ImportBinding`` per load of ``images``), each load's bind summary."""
    from ..output.imagetree import bind_summary, image_load_to_dict

    for loader, key in ((ImageLoader.WINDOWS, "windows_roots"), (ImageLoader.DYLD, "dyld_roots")):
        mine = []
        for i, ld in enumerate(images):
            if ld.loader is loader:
                entry = image_load_to_dict(ld)
                if image_bindings is not None:
                    entry["bind"] = bind_summary(ld, image_bindings[i])
                mine.append(entry)
        if mine:
            doc[key] = mine


def _emit_elf_binding(inputs: Inputs, fmt: str, analysis: Any, loads: list[Any]) -> None:
    """Print, for ``tree --bind``, each drawn ELF load's binding: the undefined symbols bound, the
    strong ones bound nowhere (the first 20) and how many weak ones (GCC's hooks not counted)."""
    hooks = ("__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "_Jv_RegisterClasses")
    for load in loads:
        bounds = [(obj, b) for (root, obj), bs in analysis.bindings.items() if root == load.root for b in bs]
        strong = sorted(
            {
                f"{b.symbol.display_name()} (in {obj.rsplit('/', 1)[-1]})"
                for obj, b in bounds
                if b.provider is None and not b.symbol.weak
            }
        )
        weak = sum(1 for _o, b in bounds if b.provider is None and b.symbol.weak and b.symbol.name not in hooks)
        emit(
            inputs.relabel(
                text_safe(
                    f"{load.root}: {len(bounds)} undefined symbols bound over {len(load.objects)} objects, "
                    f"{len(strong)} unresolved, {weak} weak unresolved (compiler hooks not counted)"
                ),
                fmt,
            )
            + "\n"
        )
        for line in strong[:20]:
            emit(text_safe(f"  unresolved: {line}") + "\n")
        if len(strong) > 20:
            emit(f"  … (+{len(strong) - 20} more; --format json lists the load)\n")


def _failed(analysis: Any, loads: list[Any], images: list[ImageLoad], image_bindings: list[Any]) -> bool:
    """True when a drawn load would fail: a library found nowhere (not a system or weak one), a
    load error, a missing symbol version, or (--bind) a plain import its library does not export."""
    from ..loader.image_binding import ImportOutcome

    shown = {ld.root for ld in loads}
    return (
        any(res.path is None and not (res.system or res.optional) for w in images for res in w.resolutions.values())
        or any(not res.found or res.error for res in _own_resolutions(loads))
        or any(ld.errors for ld in loads)
        or any(root in shown for root, _f in analysis.version_failures)
        # --bind: a plain import its library does not export stops the load (Windows, dyld)
        or any(
            b.outcome in (ImportOutcome.NOT_EXPORTED, ImportOutcome.FLAT_UNRESOLVED) and not b.weak
            for bindings in image_bindings
            for b in bindings
        )
    )


def _own_resolutions(loads: list[Any]) -> Iterator[Any]:
    """Every resolution of ``loads``, each part (``Load.below``) read once: linear in what was
    loaded, not in roots times their closures (lib0 needs lib1 ... needs lib9999, each a root)."""
    seen: set[int] = set()
    for load in loads:
        for part, _hops in load.iter_parts():
            if id(part) in seen:
                break  # this part and every part below it were read with an earlier load
            seen.add(id(part))
            yield from part.own_resolutions().values()
