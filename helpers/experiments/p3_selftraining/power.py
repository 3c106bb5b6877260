"""What the error-rate simulations of paper 3's claims take (each claim's ``power=``, :mod:`helpers.claims.power`),
at the default profile's sample (the setups, pairs and runs of the published run), with the paper's effects from its
Table 1 where it gives numbers.

Figure 2's ablations and the self-training gain are shown as curves only; their effects are ours: the smallest
change we would call a gain (2 points of F1, 1 point of MAE), fixed before the simulations were first run.
"""

from __future__ import annotations

from helpers.experiments.p3_selftraining.tables import PAPER_TABLE1

__all__ = ["PAPER_SETUPS"]

#: the Table 1 setups the default profile runs, in the order of the claims' detail
PAPER_SETUPS = (("amazon", "typical"), ("digits", "typical"), ("digits", "dann"))
_MAE = ("Avg Conf", "Ens Avg Conf", "Proxy Risk")
_F1 = ("MSP", "Trust Score", "Proxy Risk")


def _gap(setup: tuple[str, str], methods: tuple[str, ...], column: int, *, higher_is_better: bool) -> float:
    rm = PAPER_TABLE1[(*setup, "Ours (RM)")][column]
    others = [PAPER_TABLE1[(*setup, m)][column] for m in methods]
    return round(max(others) - rm if higher_is_better else rm - min(others), 6)


MAE_GAPS = tuple(_gap(s, _MAE, 0, higher_is_better=False) for s in PAPER_SETUPS)
F1_GAPS = tuple(_gap(s, _F1, 2, higher_is_better=True) for s in PAPER_SETUPS)

