"""The one command that regenerates the claims files: a toy claim added by the recipe of docs/claims.md and
refreshed end to end, and the committed files reproduced byte for byte from the committed records."""

from __future__ import annotations

import shutil
import textwrap

import pandas as pd
import pytest

from helpers.claims import VERDICTS, collect_claims, decide_and_record
from helpers.claims.refresh import claim_packages, refresh_power, registered
from helpers.claims.verdicts import certify, claims_csv
from helpers.paths import REPO_ROOT
from helpers.publish.publishing import apply_published_power

TOY = textwrap.dedent('''
    import numpy as np
    import pandas as pd

    from helpers.claims import Claim, MeanRule, Power, bootstrap_decision

    CLAIMS = (
        Claim(
            id="p9.gain_positive", paper="P9",
            statement="self-training raises F1", source="paper 9, Sec. 4 and Table 2",
            quantity="mean F1 gain over the setups (points)", threshold=0.0, direction=">",
            criterion_source="paper", rationale="the paper's 'raises' as a gain above 0; bootstrap over setups",
            decide=lambda gains: bootstrap_decision(lambda i: float(np.mean(np.asarray(gains)[i])), len(gains),
                                                    detail=pd.DataFrame({"gain": gains})),
            cases={"holds": lambda: {"gains": [2.0, 3.0, 2.5, 3.5]},
                   "fails": lambda: {"gains": [-2.0, -3.0, -2.5, -3.5]}},
            power=Power(MeanRule("gain"), 2.4, "paper 9, Table 2: mean gain 2.4 points", seeds=True),
        ),
    )
''')


@pytest.fixture
def toy_wing(tmp_path, monkeypatch):
    """A temporary registry: package ``toywing.p9_toy`` whose claims module is the recipe's example."""
    pkg = tmp_path / "src" / "toywing" / "p9_toy"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "claims.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    return "toywing"


def test_a_toy_claim_added_by_the_recipe_is_refreshed_end_to_end(tmp_path, toy_wing):
    assert claim_packages(toy_wing) == {"p9_toy": "p9_toy"}
    (claim, notebook), = registered(toy_wing)
    gains = [1.0, 2.5, 0.5, 3.0, 2.0, 1.5, 2.2, 0.8, 1.9, 2.7, 3.1, 1.2]
    results, figures = tmp_path / "results", tmp_path / "figures"
    decide_and_record([claim], {claim.id: {"gains": gains}}, notebook=notebook, results=results)
    (figures / "claims").mkdir(parents=True)
    claims_csv(collect_claims(results)).to_csv(figures / "claims.csv", index=False)
    shutil.copy(results / "claims" / f"{notebook}.{claim.id}.csv", figures / "claims")

    table = refresh_power(figures, wing=toy_wing, quiet=True)
    row = table.set_index("id").loc[claim.id]
    assert row["units"] == "12 units (rows of the detail), unit sd 0.872" and row["power_at"] == "paper"
    assert float(row["size"]) <= float(row["size_high"]) and int(row["size_draws"]) == 2000
    out = apply_published_power(figures).set_index("id").loc[claim.id]
    assert out["interval_verdict"] == "holds" and out["verdict"] in VERDICTS
    # twelve units: the percentile bootstrap's size sits near 0.05, so the holds is certified only if the
    # conservative end of its Monte-Carlo interval is at most 0.05
    assert out["verdict"] == certify("holds", size=row["size"], size_high=row["size_high"],
                                     power_low=row["power_low"], false_fail_high=row["false_fail_high"])
    assert out["effect_source"] == "paper 9, Table 2: mean gain 2.4 points"
    first = {p.name: p.read_bytes() for p in figures.glob("claims*.*")}
    refresh_power(figures, wing=toy_wing, quiet=True)
    apply_published_power(figures)
    assert {p.name: p.read_bytes() for p in figures.glob("claims*.*")} == first  # the same records, the same bytes


def test_refresh_on_the_committed_records_rewrites_the_committed_files_byte_for_byte(tmp_path):
    """Paper 1's rules re-simulated (the others kept), the verdicts re-certified, and the summary, README section and
    reports re-rendered from the committed records: nothing changes."""
    if not (REPO_ROOT / "figures" / "claims_power.csv").exists():
        pytest.skip("no committed claims")
    for part in ("figures", "docs"):
        shutil.copytree(REPO_ROOT / part, tmp_path / part)
    shutil.copy(REPO_ROOT / "README.md", tmp_path / "README.md")
    refresh_power(tmp_path / "figures", only=["01"], quiet=True)
    apply_published_power(tmp_path / "figures", readme=tmp_path / "README.md", reports=tmp_path / "docs" / "reproductions")
    files = ["figures/claims_power.csv", "figures/claims_power.md", "figures/claims.csv", "figures/summary.md",
             "README.md", *(f"docs/reproductions/{p.name}" for p in (REPO_ROOT / "docs/reproductions").glob("*.md"))]
    changed = [f for f in files if (tmp_path / f).read_bytes() != (REPO_ROOT / f).read_bytes()]
    assert not changed, f"python -m helpers claims refresh changes {changed}: regenerate and commit them"
    assert len(pd.read_csv(tmp_path / "figures" / "claims.csv")) == len(registered())


def test_the_refresh_command_on_a_copy_of_the_figures(tmp_path, capsys):
    from helpers.__main__ import main

    if not (REPO_ROOT / "figures" / "claims_power.csv").exists():
        pytest.skip("no committed claims")
    shutil.copytree(REPO_ROOT / "figures", tmp_path / "figures")
    assert main(["claims", "refresh", "--only", "01", "--figures", str(tmp_path / "figures")]) == 0
    said = capsys.readouterr().out
    assert "rules simulated" in said and "claims.csv:" in said
    assert (tmp_path / "figures" / "claims_power.csv").read_bytes() == (
        REPO_ROOT / "figures" / "claims_power.csv").read_bytes()
