"""A notebook's parameters: their names, defaults and types, checked before anything runs.

Every notebook declares its parameters in the cell tagged ``parameters``; each default fixes the parameter's type
(``bool``, ``int``, ``float``, ``str``, ``list``, ``dict``).  Where the default is ``None``, or where more than one
type is accepted, a type comment declares them, ``|``-separated, in papermill's syntax::

    n_train = None  # type: int  IMDb training reviews (None keeps all)
    n_train = 2500  # type: int|dict  per task, or one size for all
    max_negative_ratio = 1.0  # type: float|None  negatives kept per positive (None: all)

A ``None`` default always accepts ``None``; an ``int`` is accepted where a ``float`` is expected (never a ``bool``
for a number).  The same checks run in two places: the runner checks every profile value and ``-p`` override before
it starts anything (:func:`check_parameters`), and each notebook's first cell after its parameters calls
:func:`check_notebook_parameters`, so that a notebook executed by plain papermill or run in JupyterLab gets them
too.  Under plain papermill, that cell also applies ``-p profile smoke`` (the profile's values for every parameter
not given explicitly) and refuses a parameter the notebook does not declare (papermill only warns).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from helpers.errors import InputValidationError, ProfileError
from helpers.run.profiles import PROFILES, load_profile, notebooks_dir

__all__ = [
    "TYPE_NAMES",
    "declared_parameters",
    "parameter_types",
    "check_value",
    "check_parameters",
    "injected_names",
    "check_notebook_parameters",
    "notebook_parameters",
    "namespace_parameters",
]

#: the types a parameter may declare, by the name used in its type comment
TYPE_NAMES: dict[str, type] = {
    "bool": bool, "int": int, "float": float, "str": str, "list": list, "dict": dict, "None": type(None),
}  # fmt: skip
#: the first line of the cell papermill injects with the given parameters
INJECTED_HEADER = "# Parameters"


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """Names, defaults (source text) and declared types of the notebook's ``parameters`` cell (papermill's
    ``inspect_notebook``)."""
    import papermill

    params = papermill.inspect_notebook(str(notebook))
    if not params:
        raise ProfileError(f"{Path(notebook).name}: no cell tagged 'parameters' (every notebook needs one)")
    return params


def parameter_types(notebook: Path) -> dict[str, tuple[str, ...]]:
    """``{name: accepted type names}`` of every parameter of ``notebook``.

    The declared type comment where there is one, else the type of the default; a ``None`` default accepts
    ``None`` besides.  A ``None`` default without a declared type is an error of the notebook (its type would be
    unknown).
    """
    out = {}
    for name, info in declared_parameters(notebook).items():
        default_type = _default_type(info["default"])
        declared = info.get("inferred_type_name")
        if declared and declared != "None":
            names = tuple(t.strip() for t in str(declared).split("|") if t.strip())
            bad = [t for t in names if t not in TYPE_NAMES]
            if bad:
                raise ProfileError(
                    f"{Path(notebook).name}: parameter {name!r} declares unknown type(s) {bad}; "
                    f"expected |-separated names among {', '.join(TYPE_NAMES)}"
                )
        elif default_type is None:
            raise ProfileError(
                f"{Path(notebook).name}: parameter {name!r} defaults to None without a type; "
                f"declare it, e.g. '{name} = None  # type: int  ...'"
            )
        elif default_type == "?":
            raise ProfileError(
                f"{Path(notebook).name}: parameter {name!r}: the type of its default {info['default']!r} is not "
                f"plain; declare it, e.g. '{name} = ...  # type: float'"
            )
        else:
            names = (default_type,)
        if default_type is None and "None" not in names:
            names += ("None",)
        out[name] = names
    return out


def _default_type(source: str) -> str | None:
    """The type name of a default given as source text (None for ``None``; ``"?"`` when not a plain literal)."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, (ast.Dict, ast.DictComp)):
        return "dict"
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return "?"
    return None if value is None else type(value).__name__


def _accepts(value: Any, type_name: str) -> bool:
    if type_name == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, TYPE_NAMES[type_name])


def check_value(name: str, value: Any, types: tuple[str, ...], *, notebook: str = "") -> None:
    """Raise :class:`InputValidationError` naming ``name``, the expected type(s) and ``value`` unless ``value`` has
    one of ``types``."""
    if any(_accepts(value, t) for t in types):
        return
    where = f" of notebook {notebook}" if notebook else ""
    hint = ""
    if "list" in types and isinstance(value, str):
        hint = f"; a list is written in brackets, e.g. -p '{name}=[{value}]'"
    elif isinstance(value, str) and any(t in ("int", "float", "bool") for t in types):
        hint = "; write the number or true/false without quotes"
    raise InputValidationError(
        f"parameter {name!r}{where}: expected {' or '.join(types)}, got {value!r} ({type(value).__name__}){hint}"
    )


def check_parameters(notebook: Path, parameters: Mapping[str, Any]) -> None:
    """Every name of ``parameters`` is declared by ``notebook`` and every value has its declared type.

    Raises
    ------
    ProfileError
        A name the notebook does not declare.
    InputValidationError
        A value of the wrong type (message: parameter, expected type, value).
    """
    notebook = Path(notebook)
    types = parameter_types(notebook)
    unknown = sorted(set(parameters) - set(types))
    if unknown:
        raise ProfileError(
            f"{notebook.name}: parameter(s) {', '.join(unknown)} not declared in its parameters cell; "
            f"declared: {', '.join(sorted(types))}"
        )
    for name, value in parameters.items():
        check_value(name, value, types[name], notebook=notebook.stem)


def injected_names(history: list[str] | None) -> list[str]:
    """The names assigned by the last cell papermill injected (``# Parameters``) among the executed cells
    ``history`` (IPython's ``In``); empty when there is none (JupyterLab, a run without parameters)."""
    for source in reversed(history or []):
        if isinstance(source, str) and source.lstrip().startswith(INJECTED_HEADER):
            tree = ast.parse(source)
            return [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)]  # fmt: skip
    return []


def check_notebook_parameters(stem: str, namespace: MutableMapping[str, Any]) -> dict[str, Any]:
    """Inside a notebook, right after its parameters: apply an injected profile and check every parameter.

    Under plain papermill (``papermill nb.ipynb out.ipynb -p profile smoke``) the profile's values are set for
    every parameter that was not itself injected (under the runner, and in JupyterLab where nothing is injected,
    this changes nothing).  An injected name the notebook does not declare, or a value of the wrong type, raises.

    Parameters
    ----------
    stem : str
        The notebook's name without ``.ipynb`` (its profile file's name).
    namespace : mutable mapping
        The notebook's ``globals()``.

    Returns
    -------
    dict
        The parameters now in force, ``{name: value}``.
    """
    notebook = notebooks_dir() / f"{stem}.ipynb"
    types = parameter_types(notebook)
    injected = injected_names(namespace.get("In"))
    unknown = sorted(set(injected) - set(types))
    if unknown:
        raise ProfileError(
            f"{notebook.name}: parameter(s) {', '.join(unknown)} not declared in its parameters cell; "
            f"declared: {', '.join(sorted(types))}"
        )
    profile = namespace.get("profile")
    if "profile" in injected:
        if profile not in PROFILES:
            raise InputValidationError(
                f"parameter 'profile': expected one of {', '.join(PROFILES)}, got {profile!r}"
            )
        for name, value in load_profile(profile).get(stem, {}).items():
            if name not in injected:
                namespace[name] = value
    for name in types:
        check_value(name, namespace[name], types[name], notebook=stem)
    return {name: namespace[name] for name in types}


def notebook_parameters(notebook: str, profile: str = "default", **overrides: Any) -> dict[str, Any]:
    """A notebook's parameters for ``profile``: its ``parameters`` cell's defaults, updated by its profile file and
    then by ``overrides`` (an unknown name is an error, not ignored).  How one notebook reads another's settings
    (and so its cache), e.g. notebook 06 reading 05's and 01's."""
    import ast

    from helpers.errors import InputValidationError

    declared = declared_parameters(notebooks_dir() / f"{notebook}.ipynb")
    params = {name: ast.literal_eval(info["default"]) for name, info in declared.items()}
    params.update(load_profile(profile).get(notebook, {}))
    unknown = sorted(set(overrides) - set(params))
    if unknown:
        raise InputValidationError(f"overrides: {unknown} are not parameters of notebook {notebook}")
    params.update(overrides)
    return params


def namespace_parameters(notebook: str, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The running notebook's parameters, read from its namespace (``globals()``) by the names of its
    ``parameters`` cell: the same mapping :func:`notebook_parameters` gives another notebook."""
    return {name: namespace[name] for name in declared_parameters(notebooks_dir() / f"{notebook}.ipynb")}
