"""What the error-rate simulations of paper 2's claims take (each claim's ``power=``, :mod:`helpers.claims.power`),
at the default profile's sample: ten models scored on the same 1,500 ID and 1,500 OOD test examples.

Two families of simulated suites, each with two **null** worlds — ``null``: all ten models drawn from one law (no
pair differs in expectation in any metric, so no AUC tail failure, no ranking difference, no model above the
largest and none below the others: every claim at the edge of its criterion, and a maximum over pairs as biased
upward as it can be); ``null_spread``: ten models of increasing quality on which every metric agrees in
expectation (where a yardstick that ignores one metric's noise fails) — the size is the larger of the two — and an
**effect** world (two models changed):

* ``tail`` (the AUC-tail claims): a model's answers are right with probability ``top`` among its 30 % most
  confident and ``rest`` below, confidences uniform in [0.5, 1].  Null: top 0.90, rest 0.85 for all; spread:
  top 0.80 to 0.96 and rest 0.75 to 0.91 in equal steps (AUC and tail accuracy rise together).  Effect:
  ``clean_top`` has top 1.00, rest 0.60 (AUC 0.02 lower, tail accuracy 0.10 higher than the others).
* ``ranking`` (the DiSCA claims): answer i is right when u_i < p (u uniform) and its confidence is
  0.5 + 0.5 sigmoid(s (p - u_i) + N(0, 1)): ``p`` sets the accuracy, ``s`` how well confidence separates right
  from wrong.  Null: p 0.85, s 3 for all (DiSCA -0.9 with an SD of 1.0 between draws, AUC 0.96); spread: p 0.70
  to 0.95 in equal steps (DiSCA flat to p 0.85, then rising: ties or agreement, never an inversion).  Effect:
  ``clean_top`` has p 0.60, s 200 (a monotone curve: DiSCA 1.05, AUC 0.89, accuracy 0.60) and ``bow_sum`` has
  s 0 (confidence unrelated to correctness: DiSCA -3.3).

Paper 2 shows its cases as curves and its Table 2 as scores of its own models, not as effects a simulation can
take, so these effect sizes are ours, fixed before the simulations were first run (the laws' mean metrics over
eight draws are the numbers above).  Simulated rules run the claims' own ``decide`` with 100 bootstrap resamples
(the notebook uses 1,000; the interval ends move by simulation noise only); each draw recomputes every model's
curves on every resample, so these simulations take the longest of all the claims' (minutes per claim).
"""

from __future__ import annotations

import numpy as np

from helpers.claims import SimulatedRule

__all__ = ["LARGEST", "MODELS", "N_EXAMPLES", "answers", "world"]

#: the suite's largest pre-trained transformer (the paper's RoBERTa-LARGE counterpart)
LARGEST = "minilm_finetuned"

N_EXAMPLES = 1500
MODELS = ("bow_sum", "embsum_random", "embsum_minilm", "cnn_random", "cnn_minilm", "lstm_random", "lstm_minilm",
          "minilm_frozen", LARGEST, "clean_top")  # fmt: skip
TAIL = 0.3
#: (family, world) -> {model: law}; "*" for every other model
LAWS = {
    ("tail", "null"): {"*": (0.90, 0.85)},
    ("tail", "null_spread"): {m: (0.80 + 0.16 * i / 9, 0.75 + 0.16 * i / 9) for i, m in enumerate(MODELS)},
    ("tail", "effect"): {"*": (0.90, 0.85), "clean_top": (1.00, 0.60)},
    ("ranking", "null"): {"*": (0.85, 3.0)},
    ("ranking", "null_spread"): {m: (0.70 + 0.25 * i / 9, 3.0) for i, m in enumerate(MODELS)},
    ("ranking", "effect"): {"*": (0.85, 3.0), "clean_top": (0.60, 200.0), "bow_sum": (0.85, 0.0)},
}


def answers(rng: np.random.Generator, n: int, family: str, law: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    if family == "tail":
        top, rest = law
        conf = rng.uniform(0.5, 1.0, n)
        correct = rng.uniform(size=n) < np.where(conf >= np.quantile(conf, 1 - TAIL), top, rest)
        return conf, correct
    p, s = law
    u = rng.uniform(size=n)
    return 0.5 + 0.5 / (1 + np.exp(-(s * (p - u) + rng.normal(0, 1, n)))), u < p


def world(rng: np.random.Generator, kind: str, *, family: str = "ranking", n: int = N_EXAMPLES) -> dict[str, dict]:
    """``{split: {model: (confidence, correct)}}`` for the ID and OOD splits of one simulated suite."""
    laws = LAWS[(family, kind)]
    return {split: {m: answers(rng, n, family, laws[m] if m in laws else laws["*"]) for m in MODELS}
            for split in ("id", "ood")}


def _simulated(draws: int, family: str = "ranking", effect_draws: int | None = None,
               nulls: tuple[str, ...] = ("null", "null_spread")) -> SimulatedRule:  # fmt: skip
    return SimulatedRule(world=lambda rng, kind: {"splits": world(rng, kind, family=family), "n_boot": 100},
                         units_text=f"10 models x {N_EXAMPLES} ID (+ {N_EXAMPLES} OOD) test examples", draws=draws,
                         nulls=nulls, effect_draws=effect_draws)


_WORDS = "ours: paper 2 shows its cases as curves; the effect world of this module"
