"""LIME (Ribeiro et al. 2016) through ``lime.lime_text.LimeTextExplainer(bow=False)``.

Each token is rendered as a unique placeholder word, so LIME's word masking maps back to token positions exactly;
the classifier function rebuilds the id sequences of all perturbed samples and runs the model in batches.
"""

from __future__ import annotations

import numpy as np

from helpers.attribution._core.runner import Options, _Runner, per_example_scores
from helpers.attribution.tokenizers import Encoded


def attribute(runner: _Runner, encs: list[Encoded], targets: np.ndarray, options: Options):
    """LIME weights of every token of every example (NaN convergence deltas)."""
    from lime.lime_text import LimeTextExplainer

    mask_id = options.mask_id
    explainer = LimeTextExplainer(bow=False, split_expression=r"\s+", mask_string="MASKED", random_state=options.seed)

    def explain(e, tgt, ids, free, row):
        def classifier_fn(strings):
            rows = np.repeat(ids[None, :], len(strings), axis=0)
            for r, s in enumerate(strings):
                for j, w in enumerate(s.split(" ")):
                    if w == "MASKED":
                        rows[r, free[j]] = mask_id
            return runner(rows, e.segments)

        text = " ".join(f"w{p}" for p in free)
        exp = explainer.explain_instance(
            text, classifier_fn, labels=(int(tgt),), num_features=len(free), num_samples=options.n_samples
        )
        for feat, weight in exp.as_map()[int(tgt)]:
            row[int(exp.domain_mapper.indexed_string.word(feat)[1:])] = weight

    return per_example_scores(encs, targets, options.mask_special, explain)
