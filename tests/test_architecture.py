"""The two wings (README "Architecture"): the library never imports the experiments wing, and imports point down.

Layers, bottom to top:

* base: ``errors``, ``paths``, ``validation``, ``registry``, ``cache``, ``tables``, ``progress``;
* library: ``data``, ``models``, ``training``, ``estimators``, ``selective``, ``metrics``, ``attribution``,
  ``seq2seq``, ``selftraining``, ``benchmark``, ``byod`` (knows datasets, models and methods, no notebook);
* plumbing: ``claims`` (registry, decision, seeds, power, verdicts), ``plotting``, ``run`` (runner, profiles, notebook parameters, graph), ``publish`` (records,
  summary, reports, publishing), ``__main__``;
* experiments: ``helpers.experiments.p1_bounds`` ... ``p6_benchmark``, one per notebook.

A module may import its own layer and the layers below it.  Inside the library the package graph has no cycle, and
inside the experiments wing ``pN`` imports only ``pM`` with ``M < N``.  Every ``import`` statement counts, also the
ones inside functions.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

HELPERS = Path(__file__).resolve().parent.parent / "helpers"
BASE = {"errors", "paths", "validation", "registry", "cache", "tables", "progress", "__init__"}
LIBRARY = {"data", "models", "training", "estimators", "selective", "metrics", "attribution", "seq2seq",
           "selftraining", "benchmark", "byod", "parallel", "monitoring"}  # fmt: skip
PLUMBING = {"claims", "plotting", "run", "publish", "__main__"}
LAYER = {**dict.fromkeys(BASE, 0), **dict.fromkeys(LIBRARY, 1), **dict.fromkeys(PLUMBING, 2), "experiments": 3}
MAX_LIBRARY_LINES = 500
MAX_FUNCTION_LINES = 120


def _modules() -> list[Path]:
    return sorted(p for p in HELPERS.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = path.relative_to(HELPERS.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``helpers.*`` module name imported anywhere in ``path`` (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _dotted(path) if path.name == "__init__.py" else _dotted(path).rpartition(".")[0]
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # `from helpers import mde` names a module
    return {m for m in found if m == "helpers" or m.startswith("helpers.")}


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _layer_of(path: Path) -> tuple[str, int]:
    top = path.relative_to(HELPERS).parts[0].removesuffix(".py")
    if top not in LAYER:
        pytest.fail(f"{path.relative_to(HELPERS.parent)}: module {top!r} is in no layer; add it to {__name__}")
    return top, LAYER[top]


def _graph() -> dict[Path, set[str]]:
    return {p: _imports(p) for p in _modules()}


def test_every_module_is_in_a_layer():
    for path in _modules():
        _layer_of(path)


def test_nothing_outside_the_experiments_wing_imports_it():
    bad = [
        f"{p.relative_to(HELPERS.parent)} imports {m}"
        for p, mods in _graph().items()
        if _layer_of(p)[0] != "experiments"
        for m in mods
        if _top(m) == "experiments"
    ]
    assert not bad, "the library, base and plumbing must not import helpers.experiments:\n" + "\n".join(bad)


def test_no_upward_import():
    bad = []
    for path, mods in _graph().items():
        top, layer = _layer_of(path)
        for m in mods:
            target = _top(m)
            if target in LAYER and LAYER[target] > layer:
                bad.append(f"{path.relative_to(HELPERS.parent)} ({top}, layer {layer}) imports {m} (layer {LAYER[target]})")
    assert not bad, "imports must point to the same or a lower layer:\n" + "\n".join(bad)


def _package_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the package graph ``edges`` (``a -> b``: a module of ``a`` imports ``b``) as a path, or None."""
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return [*trail, node, nxt]
            if nxt not in state and (found := visit(nxt, [*trail, node])):
                return found
        state[node] = 2
        return None

    for name in sorted(edges):
        if name not in state and (found := visit(name, [])):
            return found
    return None


def _edges(group: set[str]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in group}
    for path, mods in _graph().items():
        top, _ = _layer_of(path)
        if top in group:
            edges[top] |= {t for m in mods if (t := _top(m)) in group and t != top}
    return edges


@pytest.mark.parametrize("layer", ["library", "plumbing"])
def test_packages_of_a_layer_form_no_cycle(layer):
    cycle = _package_cycle(_edges(LIBRARY if layer == "library" else PLUMBING))
    assert cycle is None, f"{layer} import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_sees_a_planted_cycle():
    # the seam it guards: claims imported publish's records while publish imported claims
    assert _package_cycle({"claims": {"publish"}, "publish": {"claims", "run"}, "run": set()}) == [
        "claims", "publish", "claims"]
    assert _package_cycle({"claims": {"run"}, "publish": {"claims", "run"}, "run": set()}) is None


def test_experiments_import_only_earlier_notebooks():
    bad = []
    for path, mods in _graph().items():
        rel = path.relative_to(HELPERS)
        if rel.parts[0] != "experiments" or len(rel.parts) < 3 and rel.name == "__init__.py":
            continue
        own = rel.parts[1].removesuffix(".py")
        for m in mods:
            parts = m.split(".")
            if len(parts) > 2 and parts[1] == "experiments" and parts[2] != own and parts[2] > own:
                bad.append(f"{rel} imports {m}")
    assert not bad, "an experiment may import only experiments of earlier notebooks:\n" + "\n".join(bad)


def _docstring_lines(node: ast.FunctionDef) -> int:
    first = node.body[0]
    is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    return first.end_lineno - first.lineno + 1 if is_doc else 0


def test_library_modules_and_functions_stay_small():
    """Library modules under 500 lines; every function of the package (both wings) under 120 lines, its docstring
    not counted (a long parameter list deserves its documentation)."""
    long_modules, long_functions = [], []
    for path in _modules():
        top, layer = _layer_of(path)
        text = path.read_text(encoding="utf-8")
        if layer == 1 and text.count("\n") > MAX_LIBRARY_LINES:
            long_modules.append(f"{path.relative_to(HELPERS.parent)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1 - _docstring_lines(node)
                if n > MAX_FUNCTION_LINES:
                    long_functions.append(f"{path.relative_to(HELPERS.parent)}:{node.lineno} {node.name} ({n} lines)")
    assert not long_modules, f"library modules over {MAX_LIBRARY_LINES} lines:\n" + "\n".join(long_modules)
    assert not long_functions, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long_functions)


def test_the_checker_sees_a_violation(tmp_path):
    """The import scan is not vacuous: a function-local import of the experiments wing is found."""
    bad = tmp_path / "mod.py"
    bad.write_text("def f():\n    from helpers.experiments import p5_mde\n    import helpers.experiments.p1_bounds\n")
    assert {"helpers.experiments", "helpers.experiments.p5_mde", "helpers.experiments.p1_bounds"} <= _imports(bad)


def _package(module: str) -> str:
    """The package a module belongs to for the public/private rule: ``helpers.<top>``, or ``helpers.experiments.pN``."""
    parts = module.split(".")
    return ".".join(parts[:3] if len(parts) > 2 and parts[1] == "experiments" else parts[:2])


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(dotted: str) -> bool:
    path = HELPERS.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _private_imports(path: Path) -> list[str]:
    """Private names of another package used in ``path`` (dunders allowed): ``from helpers.X import _y``, a private
    module (``helpers.X._m``, imported or named in a ``from``), and ``m._y`` on a helpers module bound to ``m``."""
    me = _dotted(path) if path.is_relative_to(HELPERS) else "outside"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad, modules = [], {}  # local name -> the helpers module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("helpers"):
                    if any(_is_private(part) for part in alias.name.split(".")) and _package(alias.name) != _package(me):
                        bad.append(f"import {alias.name}")
                    if alias.asname:
                        modules[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("helpers"):
            foreign = _package(node.module) != _package(me)
            if foreign and any(_is_private(part) for part in node.module.split(".")):
                bad.append(f"from {node.module} import ...")
            for alias in node.names:
                if _is_private(alias.name) and foreign:
                    bad.append(f"from {node.module} import {alias.name}")
                elif _is_module(f"{node.module}.{alias.name}"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and _is_private(node.attr) and _package(modules[node.value.id]) != _package(me)):  # fmt: skip
            bad.append(f"{node.value.id}.{node.attr} ({modules[node.value.id]})")
    return bad


def test_no_private_name_crosses_a_package():
    """A name another package or a script needs is public in its home module (tests may reach into
    internals)."""
    scripts = sorted((HELPERS.parent / "scripts").glob("*.py"))
    bad = [f"{p.relative_to(HELPERS.parent)}: {imp}" for p in [*_modules(), *scripts] for imp in _private_imports(p)]
    assert not bad, "private names imported across packages (make them public):\n" + "\n".join(bad)


def test_the_private_import_rule_sees_a_planted_import(tmp_path):
    planted = tmp_path / "mod.py"
    planted.write_text("from helpers.metrics import _pearson\nfrom helpers.metrics import pearson_r\n")
    assert _private_imports(planted) == ["from helpers.metrics import _pearson"]
    planted.write_text("import helpers.publish.times as t\nfrom helpers import claims\nfrom helpers.data._x import y\n"
                       "t._rows()\nclaims._flag(1)\nclaims.tally\n")  # fmt: skip
    assert sorted(_private_imports(planted)) == ["claims._flag (helpers.claims)", "from helpers.data._x import ...",
                                                 "t._rows (helpers.publish.times)"]  # fmt: skip


def _named_in_architecture() -> list[str]:
    """The ``helpers`` modules and packages that ``docs/architecture.md`` names in its tree and its text."""
    text = (HELPERS.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text[text.index("```\nhelpers/") : text.index("```", text.index("```\nhelpers/") + 3)]
    names = set()
    package = ""
    for line in tree.splitlines()[2:]:
        left = line[:52]
        if "(" in left:  # "run/ (runner profiles ...)": modules of that package
            package, inner = left.split("(")[0].strip().rstrip("/"), left.split("(")[1].split(")")[0]
            names |= {f"{package}/{m}" for m in inner.split()} | {package}
            continue
        nested = "experiments/" if line.startswith("    ") else ""  # the experiments' packages, indented below it
        names |= {nested + w.rstrip("/") for w in left.split()}
    names |= {n.strip("`").removeprefix("helpers/").rstrip("/") for n in re.findall(r"`helpers/[\w/]+`", text)}
    return sorted(n for n in names if n and "NN" not in n)


def test_the_architecture_page_names_only_what_exists_and_every_top_level_module():
    named = _named_in_architecture()
    missing = [n for n in named if not ((HELPERS / n).is_dir() or (HELPERS / f"{n}.py").exists())]
    assert not missing, f"docs/architecture.md names what is not in helpers/: {missing}"
    tops = {p.stem if p.is_file() else p.name for p in HELPERS.iterdir() if p.suffix == ".py" or
            (p.is_dir() and (p / "__init__.py").exists())} - {"__init__"}  # fmt: skip
    omitted = sorted(tops - {n.split("/")[0] for n in named})
    assert not omitted, f"docs/architecture.md omits top-level modules of helpers/: {omitted}"
    experiments = {f"experiments/{p.name}" for p in (HELPERS / "experiments").iterdir() if (p / "__init__.py").exists()}
    assert not experiments - set(named), f"docs/architecture.md omits experiments: {sorted(experiments - set(named))}"


def test_benchmark_names_one_thing():
    """"Benchmark" is notebook 06's comparison of the estimators (helpers/benchmark, p6_benchmark, its figures);
    the scripts beside the notebooks and their records are studies, not a second benchmark."""
    root = HELPERS.parent
    assert not (root / "benchmarks").exists()
    tracked = [p.name for p in (root / "figures").iterdir() if "benchmark" in p.name]
    assert all(name.startswith("06_benchmark") for name in tracked), tracked
    dirs = sorted(p.relative_to(root).as_posix() for p in root.glob("helpers/**/*benchmark*") if p.is_dir())
    assert dirs == ["helpers/benchmark", "helpers/experiments/p6_benchmark"], dirs
