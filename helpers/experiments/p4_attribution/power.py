"""Size and power of paper 4's claims (:mod:`helpers.claims_power`), at the default profile's sample (the settings,
informative pairs and architecture-suite cells of the published run), with the paper's effects from its Tables 1-4.
"""

from __future__ import annotations

from helpers.claims_power import GroupsRule, Power, ShareRule
from helpers.experiments.p4_attribution.claims import PAPER_T1, PAPER_T2

__all__ = ["POWER", "PAPER_T3", "PAPER_T4"]

_MSGS = {"MSGS-MORPH": "morph", "MSGS-VERB": "verb", "MSGS-ADJECT": "adject"}
#: the six settings of the claims' detail, with the paper's ACC and CONF ranking accuracy (%)
PAPER_ACC = {s: PAPER_T1[k]["ACC"] for s, k in _MSGS.items()} | {s: PAPER_T2[(s, "ACC")] for s in
                                                                   ("PAWS", "HANS-SUB", "HANS-CON")}  # fmt: skip
PAPER_CONF = {s: PAPER_T1[k]["CONF"] for s, k in _MSGS.items()} | {s: PAPER_T2[(s, "CONF")] for s in
                                                                     ("PAWS", "HANS-SUB", "HANS-CON")}  # fmt: skip
#: paper 4, Table 3 (architecture suites, HANS/PAWS pooled): ACC, GUESS and the general factors (%)
PAPER_T3 = {"ACCURACY": 61.0, "GUESS": 72.0, "MAX-DIFF": 72.6, "INDEX-DIFF": 83.0, "SUM-DIFF": 83.1, "FIRST-TOK": 69.4}
#: paper 4, Table 4: pairwise ranking accuracy (%) of each factor on five model pairs of different architectures
PAPER_T4 = {"SWAP-MAX-DIFF": (57.6, 57.6, 70.6, 65.6, 42.6), "SWAP-AVG": (93.4, 93.4, 65.0, 47.6, 17.0),
            "MAX-DIFF": (63.2, 63.2, 39.2, 4.8, 0.2), "INDEX-DIFF": (0.0, 0.0, 99.6, 99.6, 15.0),
            "SUM-DIFF": (99.8, 100.0, 0.0, 0.0, 88.0), "FIRST-TOK": (1.2, 100.0, 99.6, 0.0, 0.0)}  # fmt: skip
#: (setting, attribution) of the claims' detail: does the paper's factor rank at least as well as ACC?
FACTORS_MATCH = tuple(PAPER_T1[k][a] >= PAPER_T1[k]["ACC"] for k in ("morph", "verb", "adject")
                      for a in ("ig", "shap", "lime")) + tuple(
    PAPER_T2[(s, f)] >= PAPER_T2[(s, "ACC")] for s, f in (("HANS-SUB", "INDEX-DIFF"), ("HANS-CON", "CONST"),
                                                          ("PAWS", "SWAP-AVG")))  # fmt: skip
EXTREME_CELLS = tuple(v <= 5 or v >= 95 for row in PAPER_T4.values() for v in row)
_GENERAL = ("MAX-DIFF", "INDEX-DIFF", "SUM-DIFF", "FIRST-TOK")
_SETTINGS = tuple(sorted(PAPER_ACC))
#: a setting's ranking accuracy over its informative pairs, the models resampled (the pairs share them)
_MODELS = "the setting's model pairs (its models resampled)"

POWER: dict[str, Power] = {
    "p4.acc_strong_baseline": Power(GroupsRule("mean", of=_MODELS), tuple(PAPER_ACC[s] for s in _SETTINGS),
                                    "paper 4, Tables 1-2: ACC per setting", seeds=True),  # fmt: skip
    "p4.conf_below_acc": Power(GroupsRule("max", of=_MODELS), tuple(PAPER_CONF[s] - PAPER_ACC[s] for s in _SETTINGS),
                               "paper 4, Tables 1-2: CONF - ACC per setting", seeds=True),  # fmt: skip
    "p4.conf_near_random": Power(GroupsRule("mean", of=_MODELS), tuple(PAPER_CONF[s] for s in _SETTINGS),
                                 "paper 4, Tables 1-2: CONF per setting", seeds=True),  # fmt: skip
    "p4.factors_match_acc": Power(ShareRule(), sum(FACTORS_MATCH) / len(FACTORS_MATCH), "paper 4, Tables 1-2: "
                                  "7 of the 12 (setting, factor, attribution) combinations", seeds=True,
                                  paper_units=FACTORS_MATCH),  # fmt: skip
    "p4.factors_match_acc_heldout": Power(ShareRule(), sum(FACTORS_MATCH) / len(FACTORS_MATCH), "paper 4, Tables "
                                          "1-2 (as for the a-priori reading)", seeds=True,
                                          paper_units=FACTORS_MATCH),  # fmt: skip
    "p4.guess_beats_acc_arch": Power(GroupsRule("mean", groups=1), PAPER_T3["GUESS"] - PAPER_T3["ACCURACY"],
                                     "paper 4, Table 3: GUESS 72.0 - ACC 61.0", seeds=True),  # fmt: skip
    "p4.factors_beat_acc_arch": Power(GroupsRule("mean", groups=1),
                                      min(PAPER_T3[f] for f in _GENERAL) - PAPER_T3["ACCURACY"],
                                      "paper 4, Table 3: the lowest general factor 69.4 - ACC 61.0", seeds=True),
    "p4.factors_decide_consistently": Power(ShareRule(), sum(EXTREME_CELLS) / len(EXTREME_CELLS), "paper 4, Table "
                                            "4: 15 of its 30 cells at <= 5 % or >= 95 %", seeds=True,
                                            paper_units=EXTREME_CELLS),  # fmt: skip
}
