"""Why a set-level score that tracks accuracy within one model can fail to rank models (a script, not a test):
``python scripts/ranking_scale.py``.

On notebook 08's cifar zoo (the four ResNets on notebook 05's default held-out and unseen sets, read from the
cache): per model, Spearman's ρ between the score and the accuracy over the sets (the dataset-centric use the
scores were made for), and per set, ρ between the score and the accuracy over the models (the model-centric use);
with each model's mean score, mean penultimate-feature norm and accuracy.  Writes
``figures/study_ranking_scale.csv`` and ``.md``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from helpers.estimators import get_estimator  # noqa: E402
from helpers.experiments.p8_ranking import zoo_collections  # noqa: E402
from helpers.tables import to_markdown  # noqa: E402

SCORES = {"gdscore": -1, "mde_normalized": 1, "nuclear_norm": 1}


def main() -> None:
    rows = []
    for c in zoo_collections(["cifar"], "default", cifar_backbones=[20, 32, 44, 56]):
        for m in c.models:
            o = c.outputs[m]
            row = {"set": c.target, "model": m, "accuracy": float((o["logits"].argmax(1) == c.labels).mean()),
                   "feature_norm": float(np.linalg.norm(o["features"], axis=1).mean())}  # fmt: skip
            for s in SCORES:
                est = get_estimator(s)
                row[s] = est.measure(**{k: v for k, v in o.items() if k in est.target_inputs}).score
            rows.append(row)
    df = pd.DataFrame(rows)
    per_model = df.groupby("model").agg(accuracy=("accuracy", "mean"), feature_norm=("feature_norm", "mean"),
                                        **{f"mean_{s}": (s, "mean") for s in SCORES})  # fmt: skip
    for s, sign in SCORES.items():
        per_model[f"rho_over_sets_{s}"] = df.groupby("model").apply(lambda g, s=s: spearmanr(g[s], g["accuracy"]).statistic)
        across = df.groupby("set").apply(lambda g, s=s, sign=sign: spearmanr(sign * g[s], g["accuracy"]).statistic)
        per_model.loc["mean rho over models, per set (oriented)", f"rho_over_sets_{s}"] = float(across.mean())
    out = Path(__file__).resolve().parent.parent / "figures" / "study_ranking_scale"
    per_model.reset_index().to_csv(f"{out}.csv", index=False)
    meta = (f"cifar zoo of notebook 08 (default profile): {df['set'].nunique()} sets x {df['model'].nunique()} "
            f"ResNets, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    Path(f"{out}.md").write_text(f"# A score within one model and across models\n\n{meta}\n\n"
                                 f"{to_markdown(per_model.reset_index().round(4))}\n", encoding="utf-8")
    print(to_markdown(per_model.reset_index().round(4)))


if __name__ == "__main__":
    main()
