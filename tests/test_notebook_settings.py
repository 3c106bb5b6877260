"""Each notebook's parameters as one typed object: fields equal the parameters cell, every profile gives valid
settings, the notebook reads its parameters only through the object, and bad values fail where it is made."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import pkgutil
import re
from typing import Any

import pytest

import helpers.experiments
from helpers.errors import InputValidationError
from helpers.run.notebook_params import declared_parameters
from helpers.run.profiles import notebooks_dir
from helpers.run.settings import NotebookSettings, check_field


def _settings_classes() -> dict[type, str]:
    """Every NotebookSettings subclass of the experiments' ``settings`` modules, found by import, and the name its
    notebook gives the object (``X = ....this_run(globals())`` in the notebook's code)."""
    found = {}
    for pkg in pkgutil.iter_modules(helpers.experiments.__path__):
        try:
            module = importlib.import_module(f"helpers.experiments.{pkg.name}.settings")
        except ModuleNotFoundError:
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and issubclass(obj, NotebookSettings) and obj is not NotebookSettings \
                    and obj.__module__ == module.__name__:  # fmt: skip
                source = (notebooks_dir() / f"{obj.NOTEBOOK}.ipynb").read_text(encoding="utf-8")
                var = re.search(r'"(\w+) = [\w.]*this_run\(globals\(\)\)', source)
                found[obj] = var.group(1) if var else "?"
    return found


#: settings class and the name the notebook gives the object
SETTINGS = _settings_classes()


def test_every_notebook_reads_its_parameters_through_one_settings_object():
    from helpers.run.profiles import list_notebooks

    assert "?" not in SETTINGS.values(), SETTINGS  # each notebook makes its object with this_run(globals())
    assert sorted(cls.NOTEBOOK for cls in SETTINGS) == sorted(p.stem for p in list_notebooks())


@pytest.mark.parametrize("cls", SETTINGS)
def test_the_fields_are_the_notebook_parameters_in_order(cls):
    declared = list(declared_parameters(notebooks_dir() / f"{cls.NOTEBOOK}.ipynb"))
    assert [f.name for f in dataclasses.fields(cls)] == declared


@pytest.mark.parametrize("profile", ["smoke", "default", "full"])
@pytest.mark.parametrize("cls", SETTINGS)
def test_every_profile_gives_valid_settings(cls, profile):
    s = cls.for_profile(profile)
    assert isinstance(s, cls) and cls.from_mapping(s.as_dict()) == s


def parameter_reads(source: str, names: set[str]) -> list[str]:
    """Bare reads of ``names`` in ``source`` (not attributes, not keyword-argument names), f-strings included."""
    tree = ast.parse(source)
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names]
    return [n.id for n in sorted(reads, key=lambda n: (n.lineno, n.col_offset))]


@pytest.mark.parametrize("cls", SETTINGS)
def test_after_the_settings_are_made_the_notebook_reads_parameters_only_through_them(cls):
    var = SETTINGS[cls]
    path = notebooks_dir() / f"{cls.NOTEBOOK}.ipynb"
    names = set(declared_parameters(path))
    marker = f"{var} = "
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    first = next(i for i, src in enumerate(cells) if f"\n{marker}" in src and ".this_run(globals())" in src)
    tail = cells[first].split(f"\n{marker}", 1)[1]
    reads = parameter_reads(tail, names) + [
        n for src in cells[first + 1 :] for n in parameter_reads(src, names)
    ]
    assert reads == [], f"{cls.NOTEBOOK} reads {sorted(set(reads))} directly instead of {var}.<name>"


def test_the_read_scan_finds_a_planted_bare_read():
    assert parameter_reads("x = f(n_boot, seed=S.seed)\ny = S.n_boot", {"n_boot", "seed"}) == ["n_boot"]
    assert parameter_reads('print(f"{min_gold:.0%} and {S.seed}")', {"min_gold", "seed"}) == ["min_gold"]


@pytest.mark.parametrize("cls", SETTINGS)
def test_a_renamed_or_mistyped_parameter_fails_when_the_settings_are_made(cls):
    good = cls.for_profile("smoke").as_dict()
    first = next(iter(good))
    renamed = {**{k: v for k, v in good.items() if k != "seed"}, "sead": 0}
    with pytest.raises(InputValidationError, match=r"missing \['seed'\], unknown \['sead'\]"):
        cls.from_mapping(renamed)
    with pytest.raises(InputValidationError, match="seed: expected int"):
        cls.from_mapping({**good, "seed": "0"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(cls.from_mapping(good), first, None)


@dataclasses.dataclass(frozen=True)
class _Demo(NotebookSettings):
    n: int
    x: float
    flag: bool
    names: list[str]
    sizes: dict[str, float]
    limit: int | None
    extra: Any


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("n", True, "n: expected int"),
        ("n", 1.5, "n: expected int"),
        ("x", "1", "x: expected float"),
        ("flag", 1, "flag: expected bool"),
        ("names", "ab", "names: expected a list of str"),
        ("names", ["a", 2], r"names\[\]: expected str"),
        ("sizes", {1: 1.0}, "sizes: expected a dict with str keys"),
        ("sizes", {"a": "b"}, r"sizes\['a'\]: expected float"),
        ("limit", 2.0, "limit: expected int"),
    ],
)
def test_each_annotation_refuses_a_wrong_value_naming_the_field(field, value, message):
    good = dict(n=1, x=2, flag=False, names=["a"], sizes={"a": 1}, limit=None, extra=object())
    _Demo(**good)  # the good values pass (an int for a float, None for int | None, anything for Any)
    with pytest.raises(InputValidationError, match=message):
        _Demo(**{**good, field: value})


def test_a_union_takes_the_first_alternative_the_value_fits_and_names_them_all_otherwise():
    hint = int | dict[str, int] | None  # notebook 01's n_train: one size, a size per task, or every pair
    for ok in (5, {"scan": 3}, None):
        check_field("n_train", ok, hint)
    with pytest.raises(InputValidationError, match=r"n_train: expected int or dict or None, got 'x'"):
        check_field("n_train", "x", hint)
    with pytest.raises(InputValidationError, match="expected int or str, got 1.5"):
        check_field("v", 1.5, int | str)
