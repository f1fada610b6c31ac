"""No import cycles between a package's modules (issue 29 item 4: "the real cycles are
removed"; the issue names client <-> training.token_in, rubric <-> classic_scoring and
Environment <-> generation through a lazy import).

The graph is read from the source with `ast`; nothing of the packages is imported. A module's
edges are its run-time imports, those inside functions (lazy imports) and
`importlib.import_module("a.literal.name")` included, because a lazy import that closes a cycle
is still two modules that cannot be understood apart. Left out:
- imports under `if TYPE_CHECKING:` (the type checker reads them; Python never runs them), and
- package `__init__` modules, which only re-export what their submodules define.
`CHECKER_CASES` test the checker itself on small synthetic trees; a failure names each
cycle's modules and the imports (file:line) that join them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGES_DIR = Path(__file__).resolve().parents[2]

# (src folder, top-level package): each package whose module graph is pinned acyclic.
CHECKED_PACKAGES = [
    ("verifiers/src", "verifiers"),
    ("hub-server/src", "prime_hub"),
    ("cli/src", "prime_cli"),
    ("viewer/src", "verifiers_viewer"),
]

Edges = dict[str, dict[str, int]]  # module -> {imported module: line of the first such import}


def _modules(src: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package `__init__`)."""
    modules = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        is_init = parts[-1] == "__init__"
        if is_init:
            parts.pop()
        modules[".".join(parts)] = (path, is_init)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _literal_import_module(call: ast.Call) -> str | None:
    """The name in `importlib.import_module("name")` / `import_module("name")`, if literal."""
    func = call.func
    named = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if named != "import_module" or len(call.args) != 1:
        return None
    arg = call.args[0]
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None


def _imports(tree: ast.AST, module: str) -> list[tuple[list[str], int]]:
    """Each run-time import in `tree` as (the dotted names it may load, line)."""
    found: list[tuple[list[str], int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            found.append(([alias.name for alias in node.names], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import name` loads pkg and, when `name` is a submodule, pkg.name.
            found.append(([target] + [f"{target}.{a.name}" for a in node.names], node.lineno))
        elif isinstance(node, ast.Call) and (literal := _literal_import_module(node)):
            found.append(([literal], node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph(src: Path, package: str) -> Edges:
    """The run-time import edges between the non-`__init__` modules of `package` under `src`."""
    modules = _modules(src, package)
    graph: Edges = {}
    for name, (path, is_init) in modules.items():
        if is_init:
            continue
        edges = graph.setdefault(name, {})
        for names, line in _imports(ast.parse(path.read_text(), str(path)), name):
            for target in names:
                if target != name and target in modules and not modules[target][1]:
                    edges.setdefault(target, line)
    return graph


def cycles(graph: Edges) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return sorted(components)


def describe(graph: Edges, component: list[str], src: Path) -> str:
    """A cycle's modules and the edges between them, each with the importing file and line."""
    members = set(component)
    lines = [f"cycle of {len(component)}: {', '.join(component)}"]
    for module in component:
        path = src.joinpath(*module.split(".")).with_suffix(".py")
        if not path.exists():
            path = src.joinpath(*module.split("."), "__init__.py")
        rel = path.relative_to(src)
        for target, line in sorted(graph[module].items()):
            if target in members:
                lines.append(f"  {module} -> {target}  ({rel}:{line})")
    return "\n".join(lines)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "pkg" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


# Each synthetic tree: the files under package `pkg`, and the cycles the checker must report.
CHECKER_CASES = {
    "direct": (
        {"__init__.py": "", "a.py": "import pkg.b\n", "b.py": "from pkg.a import x\n"},
        [["pkg.a", "pkg.b"]],
    ),
    "lazy import in a function": (
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": "def f():\n    from pkg.a import x\n    return x\n",
        },
        [["pkg.a", "pkg.b"]],
    ),
    "relative import through a subpackage": (
        {
            "__init__.py": "",
            "a.py": "from .sub import c\n",
            "sub/__init__.py": "",
            "sub/c.py": "from ..a import x\n",
        },
        [["pkg.a", "pkg.sub.c"]],
    ),
    "importlib.import_module of a literal name": (
        {
            "__init__.py": "",
            "a.py": "import importlib\nB = importlib.import_module('pkg.b')\n",
            "b.py": "from importlib import import_module\nimport_module('pkg.a')\n",
        },
        [["pkg.a", "pkg.b"]],
    ),
    "three modules": (
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "from . import c\n",
            "c.py": "from .a import x\n",
            "d.py": "from .a import x\n",
        },
        [["pkg.a", "pkg.b", "pkg.c"]],
    ),
    "TYPE_CHECKING import is no cycle": (
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": (
                "import typing\nfrom typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.a import X\n"
                "if typing.TYPE_CHECKING:\n    import pkg.a\n"
            ),
        },
        [],
    ),
    "the else of a TYPE_CHECKING block runs": (
        {
            "__init__.py": "",
            "a.py": "from pkg import b\n",
            "b.py": "if TYPE_CHECKING:\n    pass\nelse:\n    from pkg.a import X\n",
        },
        [["pkg.a", "pkg.b"]],
    ),
    "package __init__ re-export is no cycle": (
        {
            "__init__.py": "from pkg.a import A\nfrom pkg.b import B\n",
            "a.py": "from pkg import B\nA = 1\n",
            "b.py": "from pkg import A\nB = 2\n",
        },
        [],
    ),
}


@pytest.mark.parametrize("case", list(CHECKER_CASES))
def test_checker_flags_exactly_the_run_time_cycles(tmp_path: Path, case: str) -> None:
    """The checker on synthetic trees: direct, lazy and relative imports close a cycle;
    TYPE_CHECKING imports and `__init__` re-exports do not."""
    files, expected = CHECKER_CASES[case]
    src = _tree(tmp_path, files)
    assert cycles(import_graph(src, "pkg")) == expected


def test_failure_names_the_modules_and_the_closing_edges(tmp_path: Path) -> None:
    """The report of a cycle lists each edge inside it with the file and line that imports."""
    files, _ = CHECKER_CASES["lazy import in a function"]
    src = _tree(tmp_path, files)
    graph = import_graph(src, "pkg")
    [component] = cycles(graph)
    assert describe(graph, component, src) == (
        "cycle of 2: pkg.a, pkg.b\n  pkg.a -> pkg.b  (pkg/a.py:1)\n  pkg.b -> pkg.a  (pkg/b.py:2)"
    )


@pytest.mark.parametrize(("src", "package"), CHECKED_PACKAGES, ids=[p for _, p in CHECKED_PACKAGES])
def test_package_has_no_import_cycle(src: str, package: str) -> None:
    """Issue 29: a package's modules import each other without cycles, lazy imports included."""
    root = PACKAGES_DIR / src
    graph = import_graph(root, package)
    assert graph, f"no modules found under {root / package}"
    found = cycles(graph)
    assert not found, "\n".join(describe(graph, c, root) for c in found)
