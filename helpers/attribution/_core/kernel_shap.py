"""KernelSHAP (Lundberg & Lee 2017) through ``shap.KernelExplainer`` over binary token masks.

A coalition z ∈ {0,1}^T keeps the tokens with z_t = 1 and replaces the others by the mask token (length and
positions fixed, so pair segments stay aligned); the background is the all-masked sequence, so
Σ_t φ_t = f(x) − f(all masked).
"""

from __future__ import annotations

import numpy as np

from helpers.attribution._core.runner import Options, _Runner, per_example_scores
from helpers.attribution.tokenizers import Encoded


def attribute(runner: _Runner, encs: list[Encoded], targets: np.ndarray, options: Options):
    """KernelSHAP values of every token of every example (NaN convergence deltas)."""
    import shap

    mask_id = options.mask_id

    def explain(e, tgt, ids, free, row):
        def f(z):
            rows = np.repeat(ids[None, :], len(z), axis=0)
            sub = rows[:, free]
            sub[np.asarray(z) < 0.5] = mask_id
            rows[:, free] = sub
            return runner(rows, e.segments)[:, tgt]

        explainer = shap.KernelExplainer(f, np.zeros((1, len(free))))
        n_samples = min(options.n_samples, 2 ** len(free) + 2) if len(free) < 12 else options.n_samples
        state = np.random.get_state()  # KernelSHAP samples coalitions from the global numpy RNG
        np.random.seed(options.seed)
        try:
            phi = explainer.shap_values(np.ones((1, len(free))), nsamples=n_samples, silent=True, l1_reg=False)
        finally:
            np.random.set_state(state)
        row[free] = np.asarray(phi).reshape(-1)

    return per_example_scores(encs, targets, options.mask_special, explain)
