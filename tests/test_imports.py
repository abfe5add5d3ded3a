"""The house's shape: imports run downward through the layers, with no cycles.

Every import statement in ``core/``, ``toy_models/``, ``benchmarks/``, ``pages/`` and ``app.py`` is
parsed, function-level imports included (a late import hides a dependency, it does not remove it).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Layers from the bottom up: a module may import from its own layer or from any layer listed with a
#: smaller rank.  Two layers of one rank are siblings and must not import each other.
LAYERS: list[tuple[str, float]] = [
    ("toy_models", 0),
    ("core.errors", 1),
    ("core.data", 2),
    ("core.bounds", 3),
    ("core.rules", 4),
    ("core", 4),               # the package's own __init__: a façade over data and rules
    ("core.analysis", 5),
    ("core.decoding", 5),
    ("core.bench", 6),
    ("core.training", 6),
    ("core.sweep", 6),
    ("core.claims", 6.5),       # claims decided on the analysis and, over families, on the sweep engine
    ("core.cli", 7),
    ("core.__main__", 7.5),     # the entry point above the command line
    ("benchmarks", 8),
    ("pages.ui", 8),
    ("pages", 9),
    ("app", 10),
]
PROJECT_ROOTS = ("core", "toy_models", "benchmarks", "pages", "app")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def project_files() -> dict[str, Path]:
    files = [ROOT / "app.py"]
    for top in ("core", "toy_models", "benchmarks", "pages"):
        files += sorted((ROOT / top).rglob("*.py"))
    return {module_name(f): f for f in files}


MODULES = project_files()


def layer(module: str) -> tuple[str, float]:
    """The most specific layer that contains ``module``."""
    best = None
    for prefix, rank in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    assert best is not None, f"{module} is in no layer; add it to LAYERS"
    return best


def resolve(importer: str, node: ast.AST) -> list[str]:
    """The project modules an import statement loads (``from pkg import sub`` loads ``pkg.sub``)."""
    is_package = MODULES[importer].name == "__init__.py"
    out = []
    if isinstance(node, ast.Import):
        out = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = importer.split(".")
            base = base[: len(base) - node.level + (1 if is_package else 0)]
            mod = ".".join(base + ([node.module] if node.module else []))
        else:
            mod = node.module or ""
        for alias in node.names:
            out.append(f"{mod}.{alias.name}" if f"{mod}.{alias.name}" in MODULES else mod)
    return [m for m in out if m.split(".")[0] in PROJECT_ROOTS and m in MODULES]


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(m for m in resolve(name, node) if m != name)
    return graph


def third_party(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_every_module_is_in_a_layer_and_the_graph_is_not_empty():
    graph = import_graph()
    for name in MODULES:
        layer(name)
    assert sum(map(len, graph.values())) > 50
    assert "core.rules.base" in graph["core.rules.block"]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for importer, targets in graph.items():
        (lp, lr) = layer(importer)
        for target in targets:
            (tp, tr) = layer(target)
            if tr > lr or (tr == lr and tp != lp and {tp, lp} != {"core", "core.rules"}):
                bad.append(f"{importer} ({lp}) imports {target} ({tp})")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return sccs


def test_imports_run_downward():
    bad = upward_imports(import_graph())
    assert not bad, "imports from a lower layer to a higher or sibling one:\n" + "\n".join(bad)


def test_no_import_cycles():
    assert not cycles(import_graph())


def test_the_checks_catch_an_upward_import_a_sibling_import_and_a_cycle():
    graph = import_graph()
    graph["core.data.nodes"].add("core.analysis.exact")
    graph["core.analysis.exact"].add("core.decoding.pairs")
    assert upward_imports(graph) == [
        "core.analysis.exact (core.analysis) imports core.decoding.pairs (core.decoding)",
        "core.data.nodes (core.data) imports core.analysis.exact (core.analysis)"]
    assert any({"core.analysis.exact", "core.data.nodes"} <= set(c) for c in cycles(graph))


def test_toy_models_is_a_leaf():
    for name, path in MODULES.items():
        if name.startswith("toy_models"):
            assert not (third_party(path) & {"core", "pages", "app", "benchmarks"}), name


def test_core_never_imports_the_app_stack_and_figures_live_in_one_place():
    for name, path in MODULES.items():
        deps = third_party(path)
        if name.startswith("core") or name.startswith("toy_models"):
            assert not deps & {"streamlit", "plotly", "pages"}, name
        if name != "pages.ui.figures" and not name.startswith("pages.ui.figures."):
            assert "plotly" not in deps, f"{name} draws a figure outside pages/ui/figures/"


@pytest.mark.parametrize("code", [
    "import core; core.method_names()",
    "import core; [core.get_verifier(m) for m in core.method_names() if m != 'lp_optimal']",
    "from core.bounds import claimed_cic, greedy_relaxation, single_token_optimum",
])
def test_listing_rules_imports_neither_scipy_nor_torch(code):
    probe = (f"import sys; {code}; "
             "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'torch', 'transformers'}); "
             "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""
