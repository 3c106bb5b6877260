"""Paper 3's domain pairs (notebook 03): one labelled source (training part + held-out test part) and one target.

Amazon reviews (Blitzer et al. 2007, the paper's own data): each of the four domains is a source (split into a
training part D and a held-out source test part D^test for the MSP / Trust Score thresholds) and every other
domain is the unlabelled target U (all 2,000 reviews) -- 12 pairs.  Texts become TF-IDF vectors with 5,000
features (sklearn ``TfidfVectorizer(max_features=5000)``) **fitted on the source training texts only**, so nothing
about the target enters f; the target is transformed with the source vocabulary.

Digits: scikit-learn's 8x8 digits and USPS downsampled to 8x8 with histogram-matched intensities
(:func:`helpers.data.usps_to_digits`), both scaled to [0, 1]; targets are the other dataset or seeded corruptions
(:func:`helpers.data.corruptions.corrupt`) of digits the source never saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from helpers.cache import cache_key
from helpers.errors import InputValidationError

__all__ = ["DomainPair", "amazon_pairs", "digits_pairs"]


@dataclass
class DomainPair:
    """One training-test pair: labelled source (train + held-out test) and labelled target (labels for scoring)."""

    kind: str
    source: str
    target: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_heldout: np.ndarray
    y_heldout: np.ndarray
    x_target: np.ndarray
    y_target: np.ndarray
    num_classes: int
    info: dict[str, Any] = field(default_factory=dict)
    #: the held-out source inputs before featurisation (Amazon: the review texts; ``None``: ``x_heldout`` is raw)
    raw_heldout: Any = None
    #: raw inputs -> model inputs (Amazon: the source's TF-IDF transform; ``None``: identity)
    featurize: Callable[[Any], np.ndarray] | None = None

    @property
    def name(self) -> str:
        return f"{self.source}→{self.target}"

    @property
    def source_key(self) -> str:
        """Identifies the source training data (models trained on D only are shared across targets)."""
        if "_source_key" not in self.info:
            self.info["_source_key"] = cache_key({"x": self.x_train, "y": self.y_train})[:16]
        return self.info["_source_key"]

    @property
    def key(self) -> str:
        if "_key" not in self.info:
            self.info["_key"] = cache_key({"s": self.source_key, "xt": self.x_target, "xh": self.x_heldout})[
                :16
            ]
        return self.info["_key"]


# --------------------------------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------------------------------
def _split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    cut = int(round(fraction * n))
    return np.sort(order[:cut]), np.sort(order[cut:])


def _tfidf(vectorizer: Any, texts: Any) -> np.ndarray:
    return vectorizer.transform(texts).toarray().astype(np.float32)


def amazon_pairs(
    *,
    domains: Sequence[str] = ("books", "dvd", "electronics", "kitchen"),
    pairs: Sequence[tuple[str, str]] | None = None,
    max_features: int = 5000,
    train_fraction: float = 0.8,
    max_target: int | None = None,
    seed: int = 0,
) -> list[DomainPair]:
    """The Amazon source→target pairs with TF-IDF features fitted on each source's training texts.

    Parameters
    ----------
    domains : the four Blitzer domains by default (12 ordered pairs).
    pairs : explicit (source, target) list instead of all ordered pairs of ``domains``.
    max_features : TF-IDF vocabulary size [5,000].
    train_fraction : share of the source's 2,000 reviews used as D (the rest is the held-out source test set).
    max_target : subsample each target to this many reviews (stratified by nothing; ``None`` = all 2,000).
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    from helpers.data import load_amazon

    wanted = list(pairs) if pairs is not None else [(s, t) for s in domains for t in domains if s != t]
    frames = {d: load_amazon(domain=d) for d in sorted({d for p in wanted for d in p})}
    out, vecs = [], {}
    for s, t in wanted:
        src, tgt = frames[s], frames[t]
        tr, ho = _split(len(src), train_fraction, seed)
        if s not in vecs:
            vecs[s] = TfidfVectorizer(max_features=max_features).fit(src.text.iloc[tr])
        vec = vecs[s]
        ti = np.arange(len(tgt))
        if max_target is not None and max_target < len(tgt):
            ti = np.sort(np.random.default_rng(seed + 1).choice(len(tgt), max_target, replace=False))

        out.append(
            DomainPair(
                "amazon",
                s,
                t,
                _tfidf(vec, src.text.iloc[tr]),
                src.label.to_numpy()[tr],
                _tfidf(vec, src.text.iloc[ho]),
                src.label.to_numpy()[ho],
                _tfidf(vec, tgt.text.iloc[ti]),
                tgt.label.to_numpy()[ti],
                2,
                {
                    "tfidf_fitted_on": f"{s} training texts ({len(tr)} reviews)",
                    "vocabulary": len(vec.vocabulary_),
                },
                raw_heldout=list(src.text.iloc[ho]),
                featurize=partial(_tfidf, vec),
            )
        )
    return out


def digits_pairs(
    *,
    targets: Sequence[str] = (
        "digits->usps",
        "usps->digits",
        "digits->gaussian_noise:5",
        "digits->contrast:5",
    ),
    n_usps_train: int = 2000,
    heldout_fraction: float = 0.2,
    seed: int = 0,
) -> list[DomainPair]:
    """Digits ↔ USPS pairs and corrupted-digit targets, all 8x8 in [0, 1].

    Pair names: ``"digits->usps"`` (target: the 2,007 USPS test images), ``"usps->digits"`` (target: all 1,797
    sklearn digits), ``"digits-><corruption>:<severity>"`` (target: the digits kept out of the source, corrupted),
    ``"usps-><corruption>:<severity>"`` (target: all sklearn digits, corrupted).  The digits source uses 60 % of
    the sklearn digits for D, 15 % as held-out test and 25 % as the pool for corrupted targets; the USPS source uses
    ``n_usps_train`` USPS training images (a ``heldout_fraction`` of them held out).
    """
    from helpers.data import load_digits, load_usps, usps_to_digits
    from helpers.data.corruptions import corrupt

    dg = load_digits()
    xd = (dg.x / 16.0).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(xd))
    n = len(xd)
    d_tr, d_ho, d_pool = (
        np.sort(order[: int(0.6 * n)]),
        np.sort(order[int(0.6 * n) : int(0.75 * n)]),
        np.sort(order[int(0.75 * n) :]),
    )
    usps = load_usps()
    ur = np.random.default_rng(seed).permutation(len(usps["train"].y))[:n_usps_train]
    xu_tr = (usps_to_digits(usps["train"].x[ur], method="histogram") / 16.0).astype(np.float32)
    yu_tr = usps["train"].y[ur]
    u_tr, u_ho = _split(len(ur), 1.0 - heldout_fraction, seed)
    xu_te = (usps_to_digits(usps["test"].x, method="histogram") / 16.0).astype(np.float32)
    sources = {
        "digits": (xd[d_tr], dg.y[d_tr], xd[d_ho], dg.y[d_ho]),
        "usps": (xu_tr[u_tr], yu_tr[u_tr], xu_tr[u_ho], yu_tr[u_ho]),
    }
    out = []
    for name in targets:
        try:
            s, t = name.split("->")
        except ValueError:
            raise InputValidationError(f"digits pair {name!r}: expected 'source->target'") from None
        if s not in sources:
            raise InputValidationError(f"digits pair {name!r}: source must be 'digits' or 'usps'")
        if t == "usps":
            xt, yt = xu_te, usps["test"].y
        elif t == "digits":
            xt, yt = xd, dg.y
        else:
            corr, sev = t.split(":")
            base = d_pool if s == "digits" else np.arange(n)
            xt = corrupt(xd[base], corr, int(sev), seed=seed, value_range=(0.0, 1.0)).astype(np.float32)
            yt = dg.y[base]
            t = f"digits-{corr}{sev}"
        out.append(DomainPair("digits", s, t, *sources[s], xt, yt, 10))
    return out
