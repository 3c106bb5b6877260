"""Parameters checked by name and type: by the runner before anything runs, and inside each notebook (#44 item 2)."""

from __future__ import annotations

import json

import nbformat
import papermill
import pytest

from helpers.errors import InputValidationError, ProfileError
from helpers.run import runner
from helpers.run.notebook_params import (
    check_notebook_parameters,
    check_parameters,
    injected_names,
    parameter_types,
)
from tests.conftest import write_notebook

EVERY_TYPE = """profile = "default"  # smoke | default | full
flag = True
epochs = 5
lr = 0.1
name = "tiny"
tasks = ["scan", "cogs"]
overrides = {"scan": 1}
n_limit = None  # type: int  None: no limit
size = 10  # type: int|dict  one size or a dict per task"""


@pytest.fixture
def nb_dir(tmp_path, monkeypatch):
    d = tmp_path / "notebooks"
    (d / "profiles").mkdir(parents=True)
    write_notebook(
        d / "01_types.ipynb",
        EVERY_TYPE,
        [
            'from helpers.run.notebook_params import check_notebook_parameters\ncheck_notebook_parameters("01_types", globals())',
            "print('in force:', epochs, name)",
        ],
    )
    (d / "profiles" / "01_types.yaml").write_text("smoke: {epochs: 1, name: small}\n")
    monkeypatch.setenv("HELPERS_NOTEBOOKS", str(d))
    return d


def test_types_come_from_defaults_and_type_comments(nb_dir):
    types = parameter_types(nb_dir / "01_types.ipynb")
    assert types["flag"] == ("bool",) and types["epochs"] == ("int",) and types["lr"] == ("float",)
    assert types["tasks"] == ("list",) and types["overrides"] == ("dict",) and types["name"] == ("str",)
    assert types["n_limit"] == ("int", "None") and types["size"] == ("int", "dict")


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("flag", "yes", "expected bool, got 'yes'"),
        ("flag", 1, "expected bool, got 1"),
        ("epochs", "five", "expected int, got 'five'"),
        ("epochs", 1.5, "expected int, got 1.5"),
        ("epochs", True, "expected int, got True"),
        ("lr", "fast", "expected float, got 'fast'"),
        ("name", 3, "expected str, got 3"),
        (
            "tasks",
            "pos",
            r"expected list, got 'pos' \(str\); a list is written in brackets, e\.g\. -p 'tasks=\[pos\]'",
        ),
        ("overrides", [1], r"expected dict, got \[1\]"),
        ("n_limit", "all", "expected int or None, got 'all'"),
        ("size", [3], r"expected int or dict, got \[3\]"),
    ],
)
def test_a_value_of_the_wrong_type_names_parameter_type_and_value(nb_dir, name, value, expected):
    with pytest.raises(InputValidationError, match=rf"parameter '{name}' of notebook 01_types: {expected}"):
        check_parameters(nb_dir / "01_types.ipynb", {name: value})


def test_accepted_values(nb_dir):
    check_parameters(
        nb_dir / "01_types.ipynb",
        {"lr": 1, "n_limit": None, "size": {"pos": 3}, "tasks": [], "flag": False, "epochs": 0},
    )  # an int where a float is expected, None where declared, either of two declared types


def test_every_parameter_of_every_notebook_has_a_type_and_every_profile_value_fits():
    for nb in runner.list_notebooks():
        parameter_types(nb)  # a None default without a declared type raises
        for profile in runner.PROFILES:
            check_parameters(nb, runner.load_profile(profile).get(nb.stem, {}))


def test_every_notebook_checks_its_parameters_right_after_them():
    for nb in runner.list_notebooks():
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        i = next(i for i, c in enumerate(cells) if "parameters" in c["metadata"].get("tags", []))
        assert f'check_notebook_parameters("{nb.stem}", globals())' in "".join(cells[i + 1]["source"]), (
            nb.name
        )


def test_the_runner_refuses_a_wrong_type_before_anything_runs(nb_dir):
    with pytest.raises(
        InputValidationError, match="parameter 'epochs' of notebook 01_types: expected int, got 'five'"
    ):
        runner.run_notebooks(profile="smoke", parameters={"epochs": "five"}, echo=False)
    assert not (runner.runs_dir() / "smoke").exists()  # nothing written


def test_injected_names_are_read_from_the_cell_papermill_injects():
    history = [
        "",
        'profile = "default"\nepochs = 5',
        '# Parameters\nprofile = "smoke"\nepochs = 2\n',
        "x = 1",
    ]
    assert injected_names(history) == ["profile", "epochs"]
    assert injected_names(["x = 1"]) == [] and injected_names(None) == []


def test_in_the_notebook_an_injected_profile_applies_to_what_was_not_given(nb_dir):
    ns = {"profile": "smoke", "flag": True, "epochs": 7, "lr": 0.1, "name": "tiny", "tasks": [], "overrides": {},
          "n_limit": None, "size": 10}  # fmt: skip
    ns["In"] = ["", "...", '# Parameters\nprofile = "smoke"\nepochs = 7\n']
    params = check_notebook_parameters("01_types", ns)
    assert params["epochs"] == 7  # given explicitly: kept
    assert params["name"] == "small" and ns["name"] == "small"  # from the smoke profile
    ns_lab = {**ns, "profile": "default", "name": "mine", "In": ["", "..."]}  # JupyterLab: nothing injected
    assert check_notebook_parameters("01_types", ns_lab)["name"] == "mine"


def test_in_the_notebook_unknown_and_mistyped_parameters_fail(nb_dir):
    ns = {"profile": "default", "flag": True, "epochs": 5, "lr": 0.1, "name": "tiny", "tasks": [], "overrides": {},
          "n_limit": None, "size": 10}  # fmt: skip
    with pytest.raises(ProfileError, match="epoch not declared"):
        check_notebook_parameters("01_types", {**ns, "epoch": 3, "In": ["# Parameters\nepoch = 3\n"]})
    with pytest.raises(
        InputValidationError, match="parameter 'epochs' of notebook 01_types: expected int, got 'five'"
    ):
        check_notebook_parameters(
            "01_types", {**ns, "epochs": "five", "In": ['# Parameters\nepochs = "five"\n']}
        )
    with pytest.raises(InputValidationError, match="parameter 'profile': expected one of"):
        check_notebook_parameters(
            "01_types", {**ns, "profile": "quick", "In": ['# Parameters\nprofile = "quick"\n']}
        )


def test_plain_papermill_applies_the_profile_and_refuses_an_unknown_parameter(nb_dir, tmp_path):
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(str(nb_dir / "01_types.ipynb"), str(out), parameters={"profile": "smoke"},
                               progress_bar=False)  # fmt: skip
    printed = "".join(o.get("text", "") for o in nbformat.read(out, as_version=4).cells[-1].outputs)
    assert (
        "in force: 1 small" in printed
    )  # the smoke profile's values, not the parameters cell's 5 and "tiny"
    with pytest.raises(papermill.PapermillExecutionError, match="epoch not declared"):
        papermill.execute_notebook(str(nb_dir / "01_types.ipynb"), str(out), parameters={"epoch": 3},
                                   progress_bar=False)  # fmt: skip
