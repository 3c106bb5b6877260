"""Result tables of paper 1 from a :class:`~helpers.experiments.p1_bounds.pipeline.TaskResult`: Table 1 (recalls), Tables 2–4
(predicted accuracies and absolute errors) and Figure 4 (bounds vs test-subset size).

Confidence baselines (Sec. 4.2) come from :mod:`helpers.estimators` on the sequence confidence (product of the top
beam's token probabilities): MaxProb (γ = 0.5), AC, DoC and ATC (MC score, |FP−FN| sweep), the last two fitted
on the ID dev set; Maxprob (Oracle) and the discriminator bounds from :mod:`helpers.estimators.bounds`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from helpers.errors import InputValidationError
from helpers.estimators import get_estimator
from helpers.estimators.bounds import bounds_table, maxprob_oracle_bounds
from helpers.estimators.bracketing import accuracy_from_recalls, bracketed_gold_range
from helpers.experiments.p1_bounds.tasks import discriminator_text
from helpers.metrics import correct_recall, incorrect_recall, roc_auc
from helpers.validation import check_binary

__all__ = [
    "BASELINES",
    "estimates_table",
    "recall_table",
    "subset_curve",
    "set_summary",
    "plot_subset_curves",
    "tagging_table",
    "split_by_gold",
    "PAPER_T5_RECALLS",
    "bracketing_table",
    "paper_bracketing_table",
    "error_kind",
    "error_types",
]

#: label -> (estimator name, parameters); the confidence baselines of paper 1, Sec. 4.2.
BASELINES = {
    "MaxProb": ("maxprob", {"gamma": 0.5}),
    "AC": ("average_confidence", {}),
    "DoC": ("doc", {}),
    "ATC": ("atc_mc", {}),
}


def estimates_table(result, *, baselines: dict | None = None) -> pd.DataFrame:
    """Tables 2–4 of paper 1 for every set of one task: one row per (set, method).

    Columns: ``task, set, shift, method, group, accuracy, abs_error, n`` where ``group`` is "confidence",
    "oracle", "discriminators" or "gold"; bounds rows (``Upper``, ``Lower``) have ``abs_error`` NaN, as the paper
    prints "-".  Maxprob (Oracle) uses gold labels (it is the paper's reference, not a label-free method).  An
    unlabelled set gets the label-free rows only (confidence baselines and the discriminators' estimates), with
    ``abs_error`` NaN.
    """
    baselines = BASELINES if baselines is None else baselines
    dev = result.dev
    fitted = {
        label: get_estimator(name, **params).fit(confidence=dev.confidence, correct=dev.correct)
        for label, (name, params) in baselines.items()
    }
    rows = []
    for s in result.sets.values():
        gold = s.accuracy  # NaN on an unlabelled set

        def add(method, group, acc, ae=True, s=s, gold=gold):
            rows.append(
                {
                    "task": result.task,
                    "set": s.name,
                    "shift": s.shift,
                    "method": method,
                    "group": group,
                    "accuracy": float(acc),
                    "abs_error": abs(gold - acc) if ae and s.labelled else np.nan,
                    "n": len(s.predictions),
                }
            )

        for label, est in fitted.items():
            add(label, "confidence", est.estimate(confidence=s.confidence).accuracy)
        if s.labelled and 0 < s.correct.sum() < len(s.correct):
            o = maxprob_oracle_bounds(s.confidence, s.correct, votes=s.votes)
            add("Oracle Upper", "oracle", o.upper, ae=False)
            add("Oracle Lower", "oracle", o.lower, ae=False)
            add("Oracle Mean", "oracle", o.accuracy)
        bt = bounds_table(s.votes, s.correct if s.labelled else None).set_index("estimate")
        add("Mean_discrim", "discriminators", bt.loc["mean_discrim", "accuracy"])
        add("Upper", "discriminators", bt.loc["upper", "accuracy"], ae=False)
        add("Lower", "discriminators", bt.loc["lower", "accuracy"], ae=False)
        add("Mean_bounds", "discriminators", bt.loc["mean_bounds", "accuracy"])
        if s.labelled:
            add("Gold", "gold", gold)
    return pd.DataFrame(rows)


def recall_table(result) -> pd.DataFrame:
    """Table 1 of paper 1: Correct-/Incorrect-Recall (Eq. 3) of a single discriminator (mean over the members),
    Upper (Ensemble_correct) and Lower (Ensemble_incorrect), one row per labelled set.

    An extra diagnostic column, ``Vote AUC``: the AUC of the fraction of members voting Correct for telling the
    parser's correct outputs from its wrong ones on that set (NaN when one class is absent).  The members are
    selected by AUC on negatives mined from parser snapshots; this says how well they judge the final parser's
    actual outputs, which is what the bounds need.
    """
    rows = []
    for s in (s for s in result.sets.values() if s.labelled):
        g = s.correct.astype(bool)
        row = {"task": result.task, "set": s.name, "shift": s.shift}
        preds = {"Upper": s.votes.any(1), "Lower": s.votes.all(1)}
        singles = [s.votes[:, k].astype(bool) for k in range(s.votes.shape[1])]
        for tag, fn in (("CR", correct_recall), ("IR", incorrect_recall)):
            ok = g.any() if tag == "CR" else (~g).any()
            row[f"Single {tag}"] = (
                float(np.mean([fn(predicted_correct=p, gold_correct=g) for p in singles])) if ok else np.nan
            )
            for name, p in preds.items():
                row[f"{name} {tag}"] = fn(predicted_correct=p, gold_correct=g) if ok else np.nan
        row["Vote AUC"] = roc_auc(scores=s.votes.mean(1), labels=g.astype(int))
        rows.append(row)
    cols = ["task", "set", "shift"] + [f"{m} {t}" for m in ("Single", "Upper", "Lower") for t in ("CR", "IR")]
    cols.append("Vote AUC")
    return pd.DataFrame(rows)[cols]


def subset_curve(
    votes, correct, *, sizes: Iterable[int], n_draws: int = 50, level: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Figure 4 of paper 1: upper/lower bounds and gold accuracy on random test subsets of each size.

    For every size, ``n_draws`` subsets are drawn without replacement; the frame has one row per (size, quantity)
    with the mean over draws, the central ``level`` interval (percentiles) and ``within`` = the fraction of draws
    with lower ≤ gold ≤ upper.
    """
    v = check_binary(votes, "votes")
    g = check_binary(correct, "correct")
    if v.ndim != 2 or g.ndim != 1 or v.shape[0] != g.shape[0]:
        raise InputValidationError(
            f"votes/correct: expected shapes (n, K) and (n,), got {v.shape} and {g.shape}"
        )
    if n_draws < 1 or not 0 < level < 1:
        raise InputValidationError(f"n_draws >= 1 and 0 < level < 1 expected, got {n_draws} and {level}")
    up, lo = v.any(1), v.all(1)
    rng = np.random.default_rng(seed)
    a = (1 - level) / 2
    rows = []
    for size in sizes:
        size = int(size)
        if not 1 <= size <= len(g):
            raise InputValidationError(f"sizes: expected sizes in [1, {len(g)}], got {size}")
        idx = np.stack([rng.choice(len(g), size=size, replace=False) for _ in range(n_draws)])
        vals = {"upper": up[idx].mean(1), "lower": lo[idx].mean(1), "gold": g[idx].mean(1)}
        within = float(((vals["lower"] <= vals["gold"]) & (vals["gold"] <= vals["upper"])).mean())
        for q, x in vals.items():
            rows.append(
                {
                    "size": size,
                    "quantity": q,
                    "mean": float(x.mean()),
                    "low": float(np.quantile(x, a)),
                    "high": float(np.quantile(x, 1 - a)),
                    "within": within,
                    "level": level,
                    "n_draws": n_draws,
                }
            )
    return pd.DataFrame(rows)


def set_summary(estimates: pd.DataFrame, *, baselines: Sequence[str] = tuple(BASELINES)) -> pd.DataFrame:
    """One row per set: gold, lower, upper, whether gold is within, Mean_bounds AE, ATC AE and the best
    confidence baseline (lowest AE among ``baselines``).  An unlabelled set has NaN gold and errors and
    ``within_bounds`` NaN."""
    rows = []
    for (task, name, shift), f in estimates.groupby(["task", "set", "shift"], sort=False):
        acc = f.set_index("method")["accuracy"]
        labelled = "Gold" in acc.index
        ae = f.set_index("method")["abs_error"]
        conf = ae.reindex(list(baselines)).dropna()
        best = conf.idxmin() if len(conf) else None
        rows.append(
            {
                "task": task,
                "set": name,
                "shift": shift,
                "gold": acc["Gold"] if labelled else np.nan,
                "lower": acc["Lower"],
                "upper": acc["Upper"],
                "width": acc["Upper"] - acc["Lower"],
                "within_bounds": bool(acc["Lower"] <= acc["Gold"] <= acc["Upper"]) if labelled else np.nan,
                "mean_bounds": acc["Mean_bounds"],
                "mean_discrim": acc["Mean_discrim"],
                **{f"{b.lower()}_estimate": acc.get(b, np.nan) for b in baselines},
                "mean_bounds_ae": ae["Mean_bounds"],
                "mean_discrim_ae": ae["Mean_discrim"],
                "atc_ae": ae.get("ATC", np.nan),
                "best_baseline": best,
                "best_baseline_ae": conf.min() if len(conf) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def plot_subset_curves(curves: dict[str, pd.DataFrame], *, ncols: int = 3):
    """Figure 4 of paper 1: one panel per set, mean and ``level`` interval of upper, lower and gold vs size."""
    import matplotlib.pyplot as plt

    if not curves:
        raise InputValidationError("curves: expected at least one set")
    n = len(curves)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    colours = {"upper": "tab:green", "lower": "tab:red", "gold": "black"}
    names = {"upper": "upper bound", "lower": "lower bound", "gold": "gold accuracy"}
    for ax, (name, f) in zip(axes.flat, curves.items()):
        for q, c in colours.items():
            d = f[f["quantity"] == q].sort_values("size")
            ax.plot(d["size"], d["mean"], marker="o", color=c, label=names[q])
            ax.fill_between(d["size"], d["low"], d["high"], color=c, alpha=0.15)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(FixedLocator(sorted(f["size"].unique())))  # the sizes drawn, as plain numbers
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())  # no 2x10^1-style minor labels colliding with them
        ax.set_title(name)
        ax.set_xlabel("test-subset size (log scale)")
        ax.set_ylabel("accuracy")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    first = next(iter(curves.values()))
    level = float(first["level"].iloc[0]) if "level" in first else None
    draws = int(first["n_draws"].iloc[0]) if "n_draws" in first else None
    handles, _ = axes.flat[0].get_legend_handles_labels()
    if level is not None:
        band = f"shaded: central {level:.0%} of {draws} random subsets" if draws else f"shaded: central {level:.0%}"
        handles.append(Patch(color="grey", alpha=0.3, label=band))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.06 / nrows, 1, 1))  # room for the legend below the panels
    return fig


def tagging_table(result, train: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """The POS parser next to the most-frequent-tag baseline (fitted on ``train``) on every labelled set: sentence
    exact match, token accuracy and the share of outputs with the wrong number of tags, one row per (set, tagger)."""
    from helpers.seq2seq.tagging import MostFrequentTagger, tagging_scores

    mft = MostFrequentTagger().fit([x for x, _ in train], [y for _, y in train])
    rows = []
    for s in (s for s in result.sets.values() if s.labelled):
        for tagger, preds in (("parser", s.predictions), ("most-frequent tag", mft.predict(s.inputs))):
            rows.append({"set": s.name, "shift": s.shift, "tagger": tagger, **tagging_scores(preds, s.golds)})
    return pd.DataFrame(rows)


def split_by_gold(summary: pd.DataFrame, *, min_gold: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Labelled sets with a real share of correct outputs (gold ≥ ``min_gold``) and those with gold ≈ 0.

    A set on which the parser is (almost) always wrong makes "gold within the bounds" and the comparison with
    confidence baselines nearly trivial (any estimator near 0 wins), so the claims are counted on the first block
    and the second is reported apart.  Unlabelled sets are in neither.
    """
    labelled = summary[summary["gold"].notna()]
    keep = labelled["gold"] >= min_gold
    return labelled[keep], labelled[~keep]


#: Paper 1's T5 discriminators, per set: gold accuracy (Tables 2-4) and Table 1's recalls (upper CR, upper IR,
#: lower CR, lower IR; fractions).  Table 1's "Upper"/"Lower" columns are Ensemble_correct/Ensemble_incorrect (its
#: caption swaps the names, see :mod:`helpers.estimators.bounds`).  On the seven semantic-parsing and POS sets the
#: identity of :func:`~helpers.estimators.bounds.bracketed_gold_range` rebuilds the printed bounds within 0.002;
#: on AMR and the two constituency-parsing sets it does not (their Table 4 bounds differ by up to 0.15).
PAPER_T5_RECALLS: dict[str, tuple[float, float, float, float, float]] = {
    "MCD1": (0.578, 0.992, 0.698, 0.929, 0.945),
    "MCD2": (0.229, 0.834, 0.779, 0.717, 0.922),
    "COGS": (0.914, 0.998, 0.894, 0.985, 0.969),
    "TOP": (0.730, 0.922, 0.447, 0.825, 0.789),
    "POS-Brown": (0.610, 0.940, 0.260, 0.522, 0.847),
    "POS-COGS": (0.857, 0.999, 0.844, 0.987, 0.892),
    "Syn-Brown": (0.338, 0.693, 0.739, 0.297, 0.960),
    "AMR 2.0": (0.143, 0.709, 0.841, 0.291, 0.991),
    "POS-WSJ": (0.653, 0.930, 0.265, 0.524, 0.848),
    "Syn-WSJ": (0.376, 0.662, 0.731, 0.205, 0.970),
}


def _with_verdicts(rows: list[dict]) -> pd.DataFrame:
    out = pd.DataFrame(rows)
    out["within"] = (out["lower"] <= out["gold"]) & (out["gold"] <= out["upper"])
    out["gold_short_of_g_min"] = (out["g_min"] - out["gold"]).clip(lower=0)
    return out


def bracketing_table(table1: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Which gold accuracies each set's bounds could bracket, given its recalls: ``[g_min, g_max]`` of
    :func:`~helpers.estimators.bracketing.bracketed_gold_range`, beside the gold accuracy and the bounds.

    Parameters
    ----------
    table1 : DataFrame
        :func:`recall_table` rows (``task``, ``set``, ``shift``, ``Upper CR``, ``Upper IR``, ``Lower CR``,
        ``Lower IR``).
    summary : DataFrame
        :func:`set_summary` rows (gold, lower, upper per ``task``/``set``).

    Returns
    -------
    DataFrame
        ``source`` ("this run"), ``set``, ``shift``, ``gold``, ``lower``, ``upper``, ``g_min``, ``g_max`` (NaN
        where a recall is undefined: no correct or no wrong output), ``within`` (lower ≤ gold ≤ upper, which equals
        ``g_min ≤ gold ≤ g_max`` where those are defined) and ``gold_short_of_g_min`` (``max(0, g_min − gold)``:
        how much more accurate the parser would have to be, at unchanged recalls, for the lower bound to hold).
    """
    need = {"task", "set", "Upper CR", "Upper IR", "Lower CR", "Lower IR"}
    if missing := need - set(table1.columns):
        raise InputValidationError(f"table1: expected recall_table() columns, missing {sorted(missing)}")
    bounds = summary.set_index(["task", "set"])
    rows = []
    for _, r in table1.iterrows():
        lo, hi = bracketed_gold_range(upper_cr=float(r["Upper CR"]), upper_ir=float(r["Upper IR"]),
                                      lower_cr=float(r["Lower CR"]), lower_ir=float(r["Lower IR"]))  # fmt: skip
        b = bounds.loc[(r["task"], r["set"])]
        rows.append({"source": "this run", "set": r["set"], "shift": r["shift"], "gold": b["gold"],
                     "lower": b["lower"], "upper": b["upper"], "g_min": lo, "g_max": hi})  # fmt: skip
    return _with_verdicts(rows)


def paper_bracketing_table() -> pd.DataFrame:
    """:func:`bracketing_table` for the paper's T5 sets (:data:`PAPER_T5_RECALLS`), ``source`` "paper 1, T5"; the
    bounds are rebuilt from the recalls and gold by :func:`~helpers.estimators.bracketing.accuracy_from_recalls`."""
    rows = []
    for name, (gold, ucr, uir, lcr, lir) in PAPER_T5_RECALLS.items():
        lo, hi = bracketed_gold_range(upper_cr=ucr, upper_ir=uir, lower_cr=lcr, lower_ir=lir)
        rows.append({"source": "paper 1, T5", "set": name, "shift": "", "gold": gold,
                     "lower": accuracy_from_recalls(gold, lcr, lir), "upper": accuracy_from_recalls(gold, ucr, uir),
                     "g_min": lo, "g_max": hi})  # fmt: skip
    return _with_verdicts(rows)


#: the kinds :func:`error_kind` tells apart, in table order
SEQUENCE_ERRORS = ("prefix", "shorter", "longer", "same length")
TAGGING_ERRORS = ("1 tag wrong", "2 tags wrong", "3+ tags wrong", "wrong length")


def error_kind(prediction: str, gold: str, *, tagging: bool) -> str:
    """What kind of wrong output ``prediction`` is, compared token by token with ``gold``.

    Sequence tasks: ``"prefix"`` (a strict prefix of the gold: the output stops early), ``"shorter"`` (other
    shorter outputs), ``"longer"``, ``"same length"``.  Tagging (``tagging=True``): ``"1 tag wrong"``,
    ``"2 tags wrong"``, ``"3+ tags wrong"`` (Hamming distance) or ``"wrong length"``.  A prediction equal to the
    gold (up to whitespace) is not an error and raises.
    """
    p, g = prediction.split(), gold.split()
    if p == g:
        raise InputValidationError(f"prediction {prediction!r} equals its gold: expected a wrong output")
    if tagging:
        if len(p) != len(g):
            return "wrong length"
        wrong = sum(a != b for a, b in zip(p, g))
        return "1 tag wrong" if wrong == 1 else "2 tags wrong" if wrong == 2 else "3+ tags wrong"
    if len(p) < len(g):
        return "prefix" if g[: len(p)] == p else "shorter"
    return "longer" if len(p) > len(g) else "same length"


def error_types(result, train: Sequence[tuple[str, str]], *, tagging: bool) -> pd.DataFrame:
    """Shares of error kinds (:func:`error_kind`) in the discriminators' training negatives and in the final
    parser's wrong outputs on the dev set and every labelled test set.

    The discriminators learn from wrong beam outputs of the parser's snapshots (paper 1, Sec. 3.1); the bounds
    need them to recognise the *final* parser's errors.  When the two differ in kind, the members judge errors
    they rarely saw.  One row per source (``"snapshot negatives"``, ``"final: <set>"``) with ``n_errors`` and one
    share column per kind (each row sums to 1); ``train`` gives the gold output of every mined training input.
    """
    render = discriminator_text(result.task)
    gold_of = {x: render(y) for x, y in train}
    d = result.disc_train
    missing = [x for x, y in zip(d.inputs, d.labels) if y == 0 and x not in gold_of]
    if missing:
        raise InputValidationError(
            f"train: no gold output for {len(missing)} mined inputs, e.g. {missing[0]!r}"
        )
    sources = {
        "snapshot negatives": [(o, gold_of[x]) for x, o, y in zip(d.inputs, d.outputs, d.labels) if y == 0]
    }
    for s in [result.dev, *result.sets.values()]:
        if s.labelled:
            wrong = ~s.correct.astype(bool)
            sources[f"final: {s.name}"] = [
                (render(p), render(g)) for p, g, w in zip(s.predictions, s.golds, wrong) if w
            ]
    kinds = TAGGING_ERRORS if tagging else SEQUENCE_ERRORS
    rows = []
    for source, pairs in sources.items():
        found = [error_kind(p, g, tagging=tagging) for p, g in pairs]
        shares = {k: (found.count(k) / len(found) if found else np.nan) for k in kinds}
        rows.append({"task": result.task, "source": source, "n_errors": len(found), **shares})
    return pd.DataFrame(rows)
