"""No import cycle anywhere in the analysis package: every module's imports (top-level or
inside a function, absolute or relative, and those under `if TYPE_CHECKING:`: a cycle
that only type hints close is still two modules that cannot be read apart) read with ast, and the graph of kvlab's own modules must be acyclic. The rooms import only down their
order (ROOM_ORDER: schema, measures, tracking, running, rendering), read from the same
graph. One dialect: pathlib, not os.path or glob, and every function of every module
annotated (each parameter but self/cls, and the return), under `from __future__ import
annotations`."""

import ast
import textwrap
from pathlib import Path

from conftest import REPO


def module_names(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file for every .py under the package folder `root`."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _imports(tree: ast.AST):
    for node in ast.iter_child_nodes(tree):
        yield from _imports_of(node)


def _imports_of(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """module -> the package's modules it imports."""
    modules = module_names(root, package)
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        edges = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")
                    anchor = anchor[:len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules
                           else base for alias in node.names]
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_analysis_package_has_no_import_cycle():
    graph = import_graph(REPO / "analysis" / "kvlab", "kvlab")
    assert len(graph) > 40 and any(graph.values())  # it read the package
    assert find_cycle(graph) is None


def _package(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root / "pkg"


def test_a_planted_cycle_is_found(tmp_path):
    # a -> sub.b at the top; sub.b -> c inside a function; c -> a by an absolute import.
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "def f():\n    from .. import c\n",
        "c.py": "import pkg.a\nimport json\n",
        "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
    })
    graph = import_graph(root, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.d"] == {"pkg.a"}
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (root / "c.py").write_text("import json\n")
    assert find_cycle(import_graph(root, "pkg")) is None


def test_a_cycle_closed_by_a_type_hint_import_is_found(tmp_path):
    # a -> b at run time; b -> a only for its type hints: still a cycle.
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n",
    })
    assert find_cycle(import_graph(root, "pkg")) == ["pkg.a", "pkg.b", "pkg.a"]


# The package's rooms, bottom up (README.md, "Layout"): a room's modules may import their
# own room's and those of the rooms before it, never one after it. The schema (what an
# experiment may say) is below the statistics, so that measures/ and tracking/ read its
# types without the runner. The package's own top-level modules (__init__, __main__) may
# import every room.
ROOM_ORDER = ("schema", "measures", "tracking", "running", "rendering")
# Imports up the order kept on purpose: (importer, imported) -> why. An entry must still be
# an import of the package (the test fails on a stale one).
UPWARD_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {
    ("kvlab.tracking.base_vs_new", "kvlab.rendering.markdown"):
        "`compare BASE NEW` prints a markdown table; markdown.py imports nothing of kvlab",
}


def room_of(module: str, order: tuple[str, ...]) -> str | None:
    """The room of a dotted module name ("kvlab.measures.stats" -> "measures"), None for
    the package's top-level modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in order else None


def upward_imports(graph: dict[str, set[str]], order: tuple[str, ...],
                   allowed: dict[tuple[str, str], str] | None = None) -> list[str]:
    """Every import of a room's module from a room later in `order` (those in `allowed`
    left out), as "importer -> imported", sorted."""
    rank = {room: i for i, room in enumerate(order)}
    found = []
    for module, targets in graph.items():
        here = room_of(module, order)
        for target in targets:
            there = room_of(target, order)
            if (here is not None and there is not None and rank[there] > rank[here]
                    and (module, target) not in (allowed or {})):
                found.append(f"{module} -> {target}")
    return sorted(found)


def test_the_rooms_import_only_down():
    package = REPO / "analysis" / "kvlab"
    rooms = sorted(p.name for p in package.iterdir() if (p / "__init__.py").exists())
    assert rooms == sorted(ROOM_ORDER), "a new room needs its place in ROOM_ORDER"
    graph = import_graph(package, "kvlab")
    assert graph["kvlab.measures.declared_ratios"]  # it read the rooms' imports
    assert upward_imports(graph, ROOM_ORDER, UPWARD_IMPORTS_ALLOWED) == []
    stale = [pair for pair in UPWARD_IMPORTS_ALLOWED if pair[1] not in graph.get(pair[0], ())]
    assert stale == [], "UPWARD_IMPORTS_ALLOWED names imports the package no longer has"


def test_a_planted_upward_import_is_found(tmp_path):
    # measures -> running inside a function; schema -> measures for type hints only;
    # running -> schema points down; the top-level main imports every room, as __main__.
    root = _package(tmp_path, {
        "__init__.py": "",
        "main.py": "from .running import r\nfrom .measures import a\n",
        "schema/__init__.py": "",
        "schema/s.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from ..measures.a import A\n",
        "measures/__init__.py": "",
        "measures/a.py": "def f():\n    from ..running import r\n",
        "running/__init__.py": "",
        "running/r.py": "from ..schema import s\nfrom . import q\n",
        "running/q.py": "",
    })
    graph = import_graph(root, "pkg")
    order = ("schema", "measures", "running")
    assert upward_imports(graph, order) == ["pkg.measures.a -> pkg.running.r",
                                            "pkg.schema.s -> pkg.measures.a"]
    assert upward_imports(graph, order, {("pkg.measures.a", "pkg.running.r"): "why"}) == [
        "pkg.schema.s -> pkg.measures.a"]
    assert room_of("pkg.running", order) == "running" and room_of("pkg.main", order) is None


# Modules left out of the annotation check while they are rewritten: none now. A module
# named here must exist (the test fails on a stale entry).
NOT_YET_ANNOTATED: tuple[str, ...] = ()


def _unannotated(path: Path, root: Path | None = None) -> list[str]:
    """Functions of a module with a parameter (positional, keyword-only, *args or **kwargs;
    self and cls left out) or the return value not annotated, as "FILE:LINE NAME"; FILE is
    relative to `root`, else the file's name."""
    name = path.relative_to(root).as_posix() if root else path.name
    missing = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            arguments = [a for a in args.posonlyargs + args.args + args.kwonlyargs
                         + [a for a in (args.vararg, args.kwarg) if a]
                         if a.arg not in ("self", "cls")]
            if node.returns is None or any(a.annotation is None for a in arguments):
                missing.append(f"{name}:{node.lineno} {node.name}")
    return missing


def _postpones_annotations(path: Path) -> bool:
    """Whether the module has `from __future__ import annotations` (hints never evaluated)."""
    return any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names)
               for node in ast.parse(path.read_text()).body)


def annotation_gaps(package: Path, excluded: tuple[str, ...] = ()) -> list[str]:
    """Every unannotated function of the package's modules, and every module without the
    __future__ import, but those `excluded` (paths relative to `package`)."""
    gaps = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).as_posix() in excluded:
            continue
        if not _postpones_annotations(path):
            gaps.append(f"{path.relative_to(package).as_posix()}: no `from __future__ import "
                        "annotations`")
        gaps += _unannotated(path, package)
    return gaps


def test_one_dialect_pathlib_and_type_hints():
    package = REPO / "analysis" / "kvlab"
    for path in sorted(package.rglob("*.py")):
        names = {alias.name for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, ast.Import) for alias in node.names}
        assert "glob" not in names, f"{path}: pathlib's glob, not the glob module"
        assert "os.path" not in path.read_text(), f"{path}: pathlib, not os.path"
    # Every module is annotated throughout, but those still being rewritten.
    assert all((package / name).is_file() for name in NOT_YET_ANNOTATED)
    assert len(list(package.rglob("*.py"))) > 40  # it read the package
    assert annotation_gaps(package, NOT_YET_ANNOTATED) == []


def test_the_dialect_check_sees_a_missing_hint(tmp_path):
    (tmp_path / "m.py").write_text("def f(a: int) -> int:\n    return a\n\n"
                                   "def g(a):\n    return a\n\nclass C:\n"
                                   "    def h(self) -> None:\n        pass\n")
    assert _unannotated(tmp_path / "m.py") == ["m.py:4 g"]
    # *args and **kwargs count; a module without the __future__ import is named; an
    # excluded module is not read.
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "a.py").write_text("from __future__ import annotations\n\n"
                                          "def k(*args: int, **kwargs) -> None:\n    pass\n")
    (package / "b.py").write_text("def n() -> None:\n    pass\n")
    (package / "c.py").write_text("def u(x):\n    pass\n")
    assert annotation_gaps(package, ("c.py",)) == [
        "b.py: no `from __future__ import annotations`", "sub/a.py:3 k"]
