"""The house has no import circles: the graph of ``linkaudit`` modules, read with ``ast``, is acyclic.

Every ``import`` counts, those deferred into a function too: a deferred import is how a circle
hides (``configfile`` imported ``config`` inside a function while ``config`` imported it at the
top).  ``from PKG import NAME`` is an edge to ``PKG.NAME`` when that is a module, else to ``PKG``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "linkaudit"


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package ``__init__``)."""
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, *([node.module] if node.module else [])])
    else:
        target = node.module or ""
    out = set()
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        out.add(sub if sub in known else target)
    return out & known


def import_graph() -> dict[str, set[str]]:
    """``{module: {modules it imports}}`` over ``linkaudit``, self-edges left out."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _targets(name, is_package, node, known)
        graph[name] = edges - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path ``[a, b, ..., a]``, or ``None`` when it is acyclic."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_find_cycle_sees_a_circle_hidden_in_a_function() -> None:
    """The checker itself: the old config <-> configfile circle (one import deferred) is found."""
    graph = {"a.config": {"a.configfile"}, "a.configfile": {"a.config"}, "a.cli": {"a.config"}}
    assert find_cycle(graph) == ["a.config", "a.configfile", "a.config"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_config_is_one_room_whose_imports_run_one_way() -> None:
    graph = import_graph()
    config = {m for m in graph if m == "linkaudit.config" or m.startswith("linkaudit.config.")}
    assert config >= {"linkaudit.config.model", "linkaudit.config.file", "linkaudit.config.profiles"}
    assert "linkaudit.configfile" not in graph
    # The model imports nothing else of the room; the file reader builds on the model, never back.
    assert not graph["linkaudit.config.model"] & config
    assert "linkaudit.config.file" not in graph["linkaudit.config.model"]
    # Nothing of the audit, the rules, the CLI or the output is imported by configuration.
    for module in config:
        for target in graph[module]:
            assert not target.startswith(
                ("linkaudit.audit", "linkaudit.rules", "linkaudit.cli", "linkaudit.output", "linkaudit.context")
            ), f"{module} imports {target}"
    sub = {m: graph[m] & config for m in config}
    assert find_cycle(sub) is None


def test_linkaudit_has_no_import_circle() -> None:
    """No module reaches itself through imports (formats once reached loader.fs and back; the
    output package and its format modules imported each other)."""
    graph = import_graph()
    assert len(graph) > 50  # the whole package was read
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_static_link_is_one_room_beside_the_loader() -> None:
    """``linkaudit/link/`` (link lines, the ELF and COFF links, generated sources) reads the model
    and nothing downstream; the old top-level modules are gone; nothing of loader/ and link/
    imports the other (two rooms of one stage)."""
    graph = import_graph()
    room = {m for m in graph if m == "linkaudit.link" or m.startswith("linkaudit.link.")}
    assert room >= {"linkaudit.link.line", "linkaudit.link.elf", "linkaudit.link.coff", "linkaudit.link.sources"}
    assert not {"linkaudit.linker", "linkaudit.coff_link", "linkaudit.sources"} & set(graph)
    downstream = ("linkaudit.rules", "linkaudit.cli", "linkaudit.output", "linkaudit.audit", "linkaudit.context",
                  "linkaudit.report", "linkaudit.loader")  # fmt: skip
    for module in room:
        for target in graph[module]:
            assert not target.startswith(downstream), f"{module} imports {target}"
    for module in (m for m in graph if m.startswith("linkaudit.loader")):
        assert not {t for t in graph[module] if t.startswith("linkaudit.link")}, module
