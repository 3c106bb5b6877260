"""What the error-rate simulations of paper 4's claims take (each claim's ``power=``, :mod:`helpers.claims.power`),
at the default profile's sample (the settings, informative pairs and architecture-suite cells of the published run),
with the paper's effects from its Tables 1-4.
"""

from __future__ import annotations

__all__ = ["PAPER_T1", "PAPER_T2", "PAPER_T3", "PAPER_T4"]

#: paper 4, Table 1 (MSGS): ranking accuracy (%) of ACC, CONF and the window factor per attribution method
PAPER_T1 = {"morph": dict(ACC=90.9, CONF=50.9, ig=89.2, shap=90.6, lime=92.8),
            "verb": dict(ACC=94.5, CONF=58.0, ig=92.1, shap=94.0, lime=94.9),
            "adject": dict(ACC=89.9, CONF=50.5, ig=87.4, shap=92.1, lime=93.5)}  # fmt: skip
#: paper 4, Table 2 (SHAP): ranking accuracy (%) of the baselines and the factor the paper names per setting
PAPER_T2 = {("PAWS", "ACC"): 88.7, ("HANS-SUB", "ACC"): 90.6, ("HANS-CON", "ACC"): 81.6,
            ("PAWS", "CONF"): 9.2, ("HANS-SUB", "CONF"): 40.4, ("HANS-CON", "CONF"): 52.8,
            ("PAWS", "SWAP-AVG"): 91.4, ("HANS-SUB", "INDEX-DIFF"): 91.3, ("HANS-CON", "CONST"): 87.1}  # fmt: skip

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

