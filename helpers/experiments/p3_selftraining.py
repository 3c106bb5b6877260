"""Data pairs and one-pair runs for the paper-3 notebook (``notebooks/03_self_training.ipynb``).

Amazon reviews (Blitzer et al. 2007, the paper's own data): each of the four domains is a source (split into a
training part D and a held-out source test part D^test for the MSP / Trust Score thresholds) and every other
domain is the unlabelled target U (all 2,000 reviews) -- 12 pairs.  Texts become TF-IDF vectors with 5,000
features (sklearn ``TfidfVectorizer(max_features=5000)``) **fitted on the source training texts only**, so nothing
about the target enters f; the target is transformed with the source vocabulary.

Digits: scikit-learn's 8x8 digits and USPS downsampled to 8x8 with histogram-matched intensities
(:func:`helpers.data.usps_to_digits`), both scaled to [0, 1]; targets are the other dataset or seeded corruptions
(:func:`helpers.data.corruptions.corrupt`) of digits the source never saw.

Every expensive step is cached: pre-trained models through ``fit``'s ``checkpoint_dir`` and all predictions /
self-training rounds through :func:`helpers.cache.cached_arrays`, so re-running the notebook does not retrain.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from torch import nn

from helpers.cache import cache_key, cached_arrays
from helpers.errors import InputValidationError
from helpers.estimators import average_confidence, softmax
from helpers.metrics import error_detection_scores
from helpers.models import build_model
from helpers.paths import cache_dir
from helpers.selftraining.algorithm import (
    SelfTrainingResult,
    self_training,
    train_dann,
    train_pool,
)
from helpers.selftraining.baselines import ProxyRisk, ThresholdErrorDetector, ensemble_average_confidence
from helpers.selftraining.ensembles import RandomInitEnsemble, RepresentationMatchingEnsemble
from helpers.selftraining.trust_score import TrustScore
from helpers.training import predict

__all__ = [
    "DomainPair",
    "RunConfig",
    "amazon_pairs",
    "digits_pairs",
    "pair_baselines",
    "pair_self_training",
    "pair_proxy_risk",
    "evaluate_pair",
    "precompute",
    "settings_table",
    "table1",
    "ablation",
    "METHODS",
    "PAPER_TABLE1",
]

NAMESPACE = "03_self_training"
METHODS = ("Avg Conf", "Ens Avg Conf", "MSP", "Trust Score", "Proxy Risk", "Ours (RI)", "Ours (RM)")


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


@dataclass
class RunConfig:
    """Training settings of one notebook run (paper values in brackets; see the notebook's profiles)."""

    typical_model: str = "tfidf_mlp"  #: f's "typical DNN" [Amazon: 4-layer MLP, digits: CNN-BN]
    dann_model: str = "dann_mlp"  #: the DANN-arch [appendix C.1.4]
    model_kwargs: dict = field(default_factory=dict)
    f_epochs: int = 10  #: supervised epochs of f, the Ens Avg Conf members and the T_RI members [50 / 20]
    dann_epochs: int = 10  #: DANN pre-training epochs of h_0 (T_RM, Proxy Risk) [50 / 100]
    batch_size: int = 64  #: [8 Amazon, 128 digits]
    lr: float = 1e-3  #: Adam [1e-3]
    ens_size: int = 10  #: Ens Avg Conf members [10]
    rounds: int = 5  #: T [5]
    num_models: int = 5  #: N [20 Amazon, 5 otherwise]
    gamma: float = 0.1  #: γ [0.1]
    proxy_epochs: int = 20  #: Proxy Risk disagreement-maximisation epochs [20]
    proxy_lr: float = 1e-3  #: [1e-3 Amazon and digits]
    proxy_lam: float = 50.0  #: λ [50]
    proxy_alpha: float = 0.1  #: α in the constraint [0.1]
    proxy_eps_factor: float = 1.1  #: ε = 1.1·ε₀
    ts_alpha: float = 0.1  #: Trust Score density filter α (drop the 10 % least dense points per class)
    ts_k: int = 10  #: Trust Score density neighbour k
    seed: int = 0

    def factory(self, arch: str, pair: DomainPair) -> Callable[[], nn.Module]:
        name = {"typical": self.typical_model, "dann": self.dann_model}.get(arch)
        if name is None:
            raise InputValidationError(f"arch: expected 'typical' or 'dann', got {arch!r}")
        kw = dict(self.model_kwargs.get(name, {}))
        kw.setdefault("num_classes", pair.num_classes)
        return partial(build_model, name, **kw)

    def key(self, *fields: str) -> dict:
        d = asdict(self)
        return {k: d[k] for k in fields} if fields else d


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


# --------------------------------------------------------------------------------------------------------------------
# runs (each cached)
# --------------------------------------------------------------------------------------------------------------------
def _ckpt(pair: DomainPair, *parts: Any) -> Any:
    return cache_dir() / "checkpoints" / NAMESPACE / pair.kind / "-".join(str(p) for p in parts)


def _probs(model: nn.Module, x: np.ndarray) -> np.ndarray:
    return softmax(predict(model, x, batch_size=1024)).astype(np.float32)


def _supervised_pool(pair: DomainPair, cfg: RunConfig, arch: str, seeds: Sequence[int]) -> list[nn.Module]:
    """Models of architecture ``arch`` trained on D under ``seeds`` (f: [seed]; pools: seed+1, seed+2, …).

    Pools are trained at once (vectorised, :func:`helpers.selftraining.algorithm.train_pool`) and checkpointed
    together; a pool of seeds seed+1..seed+n is served from the trained pool seed+1..seed+max(n, ens_size[,
    num_models for the DANN-arch pool, which T_RI shares]), since members are independent of each other.
    """
    seeds = [int(s) for s in seeds]
    first = cfg.seed + 1
    if len(seeds) > 1 and seeds == list(range(first, first + len(seeds))):
        size = max(len(seeds), cfg.ens_size, cfg.num_models if arch == "dann" else 0)
        pool_seeds = list(range(first, first + size))
    else:
        pool_seeds = seeds
    tag = f"s{pool_seeds[0]}" if len(pool_seeds) == 1 else f"s{pool_seeds[0]}-{pool_seeds[-1]}"
    pool = train_pool(
        cfg.factory(arch, pair),
        pair.x_train,
        pair.y_train,
        seeds=pool_seeds,
        epochs=cfg.f_epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        checkpoint_dir=_ckpt(
            pair, pair.source, pair.source_key, arch, f"e{cfg.f_epochs}", f"b{cfg.batch_size}", tag
        ),
    )
    return [pool[pool_seeds.index(s)] for s in seeds]


def _h0(pair: DomainPair, cfg: RunConfig) -> nn.Module:
    return train_dann(
        cfg.factory("dann", pair),
        pair.x_train,
        pair.y_train,
        pair.x_target,
        epochs=cfg.dann_epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        seed=cfg.seed,
        checkpoint_dir=_ckpt(
            pair, pair.name, pair.key, "h0", f"e{cfg.dann_epochs}", f"b{cfg.batch_size}", f"s{cfg.seed}"
        ),
    )


def pair_baselines(pair: DomainPair, cfg: RunConfig, *, arch: str = "typical") -> dict[str, np.ndarray]:
    """f's probabilities (target, held-out), Ens Avg Conf member probabilities and Trust Scores (cached)."""
    key = {
        "pair": pair.key,
        "arch": arch,
        "cfg": cfg.key(
            "typical_model",
            "dann_model",
            "model_kwargs",
            "f_epochs",
            "batch_size",
            "lr",
            "ens_size",
            "ts_alpha",
            "ts_k",
            "seed",
        ),
    }

    def compute() -> dict[str, np.ndarray]:
        f = _supervised_pool(pair, cfg, arch, [cfg.seed])[0]
        ens = _supervised_pool(pair, cfg, arch, [cfg.seed + 1 + i for i in range(cfg.ens_size)])
        f_train_logits = predict(f, pair.x_train, batch_size=1024)
        ts = TrustScore(alpha=cfg.ts_alpha, k=cfg.ts_k).fit(
            features=f_train_logits, labels=pair.y_train, num_classes=pair.num_classes
        )
        out = {
            "f_target": _probs(f, pair.x_target),
            "f_heldout": _probs(f, pair.x_heldout),
            "ens_target": np.stack([_probs(m, pair.x_target) for m in ens]),
        }
        for part in ("target", "heldout"):
            x = getattr(pair, f"x_{part}")
            logits = predict(f, x, batch_size=1024)
            out[f"ts_{part}"] = ts.score(features=logits, predictions=logits.argmax(1))
        return out

    return cached_arrays(NAMESPACE, key, compute)


def pair_self_training(
    pair: DomainPair,
    cfg: RunConfig,
    *,
    method: str,
    arch: str = "typical",
    rounds: int | None = None,
    num_models: int | None = None,
    gamma: float | None = None,
) -> SelfTrainingResult:
    """Algorithm 1 with T_RI (``method="ri"``) or T_RM (``"rm"``) for f of architecture ``arch`` (cached)."""
    if method not in ("ri", "rm"):
        raise InputValidationError(f"method: expected 'ri' or 'rm', got {method!r}")
    T = cfg.rounds if rounds is None else int(rounds)
    N = cfg.num_models if num_models is None else int(num_models)
    g = cfg.gamma if gamma is None else float(gamma)
    f_pred = pair_baselines(pair, cfg, arch=arch)["f_target"].argmax(1)
    key = {
        "pair": pair.key,
        "arch": arch,
        "method": method,
        "T": T,
        "N": N,
        "gamma": g,
        "cfg": cfg.key(
            "typical_model",
            "dann_model",
            "model_kwargs",
            "f_epochs",
            "dann_epochs",
            "batch_size",
            "lr",
            "seed",
        ),
    }

    def compute() -> dict[str, np.ndarray]:
        common = dict(
            model_factory=cfg.factory("dann", pair),
            x_source=pair.x_train,
            y_source=pair.y_train,
            x_target=pair.x_target,
            num_models=N,
            gamma=g,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            seed=cfg.seed,
        )
        if method == "ri":
            # members: DANN-arch models trained on D, seeds seed+1..seed+N (the same pool as the DANN-arch
            # Ens Avg Conf ensemble; f itself is seed+0)
            members = _supervised_pool(pair, cfg, "dann", [cfg.seed + 1 + i for i in range(N)])
            ens = RandomInitEnsemble(pretrained=members, pretrain_epochs=cfg.f_epochs, **common)
        else:
            ens = RepresentationMatchingEnsemble(
                pretrained=_h0(pair, cfg), pretrain_epochs=cfg.dann_epochs, **common
            )
        return self_training(
            predictions=f_pred, train_ensemble=ens, rounds=T, num_classes=pair.num_classes
        ).to_arrays()

    arrays = cached_arrays(NAMESPACE, key, compute)
    return SelfTrainingResult.from_arrays(arrays, predictions=f_pred, num_classes=pair.num_classes)


def pair_proxy_risk(pair: DomainPair, cfg: RunConfig, *, arch: str = "typical") -> dict[str, np.ndarray]:
    """Proxy Risk's check-model predictions on U_X (cached); its h' is the T_RM h_0 of the same pair."""
    f_probs = pair_baselines(pair, cfg, arch=arch)["f_target"]
    key = {
        "pair": pair.key,
        "arch": arch,
        "method": "proxy",
        "cfg": cfg.key(
            "typical_model",
            "dann_model",
            "model_kwargs",
            "f_epochs",
            "dann_epochs",
            "batch_size",
            "lr",
            "proxy_epochs",
            "proxy_lr",
            "proxy_lam",
            "proxy_alpha",
            "proxy_eps_factor",
            "seed",
        ),
    }

    def compute() -> dict[str, np.ndarray]:
        pr = ProxyRisk(
            model_factory=cfg.factory("dann", pair),
            initial_model=_h0(pair, cfg),
            epochs=cfg.proxy_epochs,
            lr=cfg.proxy_lr,
            lam=cfg.proxy_lam,
            alpha=cfg.proxy_alpha,
            eps_factor=cfg.proxy_eps_factor,
            batch_size=cfg.batch_size,
            seed=cfg.seed,
        ).fit(x=pair.x_train, y=pair.y_train, x_heldout=pair.x_heldout, y_heldout=pair.y_heldout)
        est = pr.estimate(x=pair.x_target, probs=f_probs)
        return {
            "check_pred": pr.check_predictions_.astype(np.int64),
            "chosen_epoch": np.array(est.details["chosen_epoch"]),
        }

    return cached_arrays(NAMESPACE, key, compute)


def _train_shared_model(pair: DomainPair, cfg: RunConfig, what: str, arch: str) -> None:
    """Stages 1-2 of :func:`precompute`: f, a pool of members (shared by the targets of a source) or h_0."""
    import torch

    torch.set_num_threads(1)
    if what == "f":
        _supervised_pool(pair, cfg, arch, [cfg.seed])
    elif what == "pool":
        # the size rule of _supervised_pool adds the T_RI members to the DANN-arch pool
        _supervised_pool(pair, cfg, arch, [cfg.seed + 1 + i for i in range(cfg.ens_size)])
    else:
        _h0(pair, cfg)


def _evaluate_quietly(pair: DomainPair, cfg: RunConfig, arch: str) -> None:
    """Stage 3 of :func:`precompute`: every method on one (pair, f) job, results left in the cache."""
    import torch

    torch.set_num_threads(1)
    evaluate_pair(pair, cfg, arch=arch)


def precompute(
    jobs: Sequence[tuple[DomainPair, RunConfig, str]], *, workers: int = 2, progress: bool = True
) -> None:
    """Fill the cache for ``(pair, cfg, arch)`` jobs in ``workers`` processes of one torch thread each.

    The small models of paper 3 keep one core busy per training loop, so on a 2-core CPU two loops in two
    processes finish in about half the time of one process with two threads.  Stage 1 trains what is shared by
    every target of a source (f, the Ens Avg Conf pool, the T_RI pool), stage 2 the DANN h_0 of each pair (shared
    by T_RM and Proxy Risk), stage 3 runs each (pair, f) job; all
    write only to the cache (checkpoints and :func:`helpers.cache.cached_arrays`), so afterwards
    :func:`evaluate_pair` in the calling process reads everything back, and an interrupted run keeps every job it
    finished.  ``workers <= 1`` runs the same stages in this process.
    """
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    from tqdm.auto import tqdm

    shared, seen = [], set()
    for pair, cfg, arch in jobs:
        wanted = [
            ("f", arch, pair.source_key),
            ("pool", arch, pair.source_key),
            ("pool", "dann", pair.source_key),
        ]
        wanted.append(("h0", "dann", pair.key))
        for what, a, data_key in wanted:
            key = (what, a, data_key, repr(cfg))
            if key not in seen:  # each shared model is trained by exactly one worker
                seen.add(key)
                shared.append((what, (_train_shared_model, (pair, cfg, what, a))))
    stage1 = [job for what, job in shared if what == "pool"] + [job for what, job in shared if what == "f"]
    stage2 = [job for what, job in shared if what == "h0"]
    stage3 = [(_evaluate_quietly, (pair, cfg, arch)) for pair, cfg, arch in jobs]
    stages = (("source models", stage1), ("h0", stage2), ("pairs", stage3))
    if workers <= 1:
        for name, stage in stages:
            for fn, args in tqdm(stage, desc=name, disable=not progress):
                fn(*args)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        for name, stage in stages:  # a stage starts when the one it depends on has finished
            futures = [pool.submit(fn, *args) for fn, args in stage]
            for fut in tqdm(as_completed(futures), total=len(futures), desc=name, disable=not progress):
                fut.result()


def evaluate_pair(
    pair: DomainPair,
    cfg: RunConfig,
    *,
    arch: str = "typical",
    methods: Sequence[str] = METHODS,
) -> pd.DataFrame:
    """One row per method: estimated vs true target accuracy, absolute error and error-detection F1.

    Accuracy estimators (Avg Conf, Ens Avg Conf) have no per-point flags (F1 = nan); error detectors (MSP, Trust
    Score) report the accuracy implied by their flags too, but Table 1 of the paper only scores them by F1.
    """
    base = pair_baselines(pair, cfg, arch=arch)
    f_pred = base["f_target"].argmax(1)
    true_err = f_pred != pair.y_target
    true_acc = 1.0 - float(true_err.mean())
    held_correct = base["f_heldout"].argmax(1) == pair.y_heldout
    rows = []

    def add(method: str, estimate: float, flags: np.ndarray | None, **extra: Any) -> None:
        f1 = (
            error_detection_scores(predicted_error=flags, true_error=true_err)["f1"]
            if flags is not None
            else np.nan
        )
        rows.append(
            {
                "category": pair.kind,
                "pair": pair.name,
                "source": pair.source,
                "target": pair.target,
                "arch": arch,
                "method": method,
                "true_accuracy": true_acc,
                "estimate": estimate,
                "abs_error": abs(estimate - true_acc),
                "f1": f1,
                **extra,
            }
        )

    for m in methods:
        if m == "Avg Conf":
            add(m, average_confidence(base["f_target"]), None)
        elif m == "Ens Avg Conf":
            add(m, ensemble_average_confidence(base["ens_target"]), None)
        elif m in ("MSP", "Trust Score"):
            tgt, held = (
                (base["f_target"].max(1), base["f_heldout"].max(1))
                if m == "MSP"
                else (base["ts_target"], base["ts_heldout"])
            )
            flags = ThresholdErrorDetector(m).fit(scores=held, correct=held_correct).detect(scores=tgt)
            add(m, 1.0 - float(flags.mean()), flags)
        elif m == "Proxy Risk":
            flags = pair_proxy_risk(pair, cfg, arch=arch)["check_pred"] != f_pred
            add(m, 1.0 - float(flags.mean()), flags)
        elif m in ("Ours (RI)", "Ours (RM)"):
            res = pair_self_training(pair, cfg, method="ri" if "RI" in m else "rm", arch=arch)
            add(m, res.estimated_accuracy, res.errors, estimate_round1=res.rounds[0].estimated_accuracy)
        else:
            raise InputValidationError(f"methods: unknown method {m!r}; expected some of {METHODS}")
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------------------------
# summaries
# --------------------------------------------------------------------------------------------------------------------
#: Paper 3, Table 1: (category, arch of f, method) -> (MAE mean, MAE std, F1 mean, F1 std); nan where not reported
PAPER_TABLE1: dict[tuple[str, str, str], tuple[float, float, float, float]] = {
    ("amazon", "typical", "Avg Conf"): (0.290, 0.043, np.nan, np.nan),
    ("amazon", "typical", "Ens Avg Conf"): (0.229, 0.038, np.nan, np.nan),
    ("amazon", "typical", "MSP"): (np.nan, np.nan, 0.420, 0.022),
    ("amazon", "typical", "Trust Score"): (np.nan, np.nan, 0.414, 0.024),
    ("amazon", "typical", "Proxy Risk"): (0.021, 0.014, 0.417, 0.042),
    ("amazon", "typical", "Ours (RI)"): (0.065, 0.037, 0.384, 0.032),
    ("amazon", "typical", "Ours (RM)"): (0.018, 0.010, 0.426, 0.036),
    ("amazon", "dann", "Avg Conf"): (0.310, 0.045, np.nan, np.nan),
    ("amazon", "dann", "Ens Avg Conf"): (0.217, 0.036, np.nan, np.nan),
    ("amazon", "dann", "MSP"): (np.nan, np.nan, 0.218, 0.031),
    ("amazon", "dann", "Trust Score"): (np.nan, np.nan, 0.237, 0.044),
    ("amazon", "dann", "Proxy Risk"): (0.037, 0.076, 0.434, 0.046),
    ("amazon", "dann", "Ours (RI)"): (0.062, 0.051, 0.453, 0.037),
    ("amazon", "dann", "Ours (RM)"): (0.022, 0.011, 0.440, 0.037),
    ("digits", "typical", "Avg Conf"): (0.404, 0.180, np.nan, np.nan),
    ("digits", "typical", "Ens Avg Conf"): (0.337, 0.229, np.nan, np.nan),
    ("digits", "typical", "MSP"): (np.nan, np.nan, 0.467, 0.195),
    ("digits", "typical", "Trust Score"): (np.nan, np.nan, 0.496, 0.195),
    ("digits", "typical", "Proxy Risk"): (0.085, 0.142, 0.844, 0.118),
    ("digits", "typical", "Ours (RI)"): (0.164, 0.218, 0.698, 0.235),
    ("digits", "typical", "Ours (RM)"): (0.023, 0.020, 0.881, 0.084),
    ("digits", "dann", "Avg Conf"): (0.350, 0.230, np.nan, np.nan),
    ("digits", "dann", "Ens Avg Conf"): (0.246, 0.230, np.nan, np.nan),
    ("digits", "dann", "MSP"): (np.nan, np.nan, 0.485, 0.209),
    ("digits", "dann", "Trust Score"): (np.nan, np.nan, 0.484, 0.187),
    ("digits", "dann", "Proxy Risk"): (0.095, 0.181, 0.796, 0.155),
    ("digits", "dann", "Ours (RI)"): (0.087, 0.077, 0.701, 0.126),
    ("digits", "dann", "Ours (RM)"): (0.024, 0.022, 0.841, 0.112),
}

#: Table 1 scores accuracy estimation for these methods and error detection for these
ESTIMATION_METHODS = ("Avg Conf", "Ens Avg Conf", "Proxy Risk", "Ours (RI)", "Ours (RM)")
DETECTION_METHODS = ("MSP", "Trust Score", "Proxy Risk", "Ours (RI)", "Ours (RM)")


def table1(results: pd.DataFrame) -> pd.DataFrame:
    """Table 1 analogue: MAE (estimation methods) and F1 (detection methods), mean and std over pairs, with the
    paper's values beside ours (Digits in the paper are MNIST/MNIST-M/SVHN/USPS, so only Amazon is comparable)."""
    rows = []
    for (cat, arch, method), g in results.groupby(["category", "arch", "method"], sort=False):
        paper = PAPER_TABLE1.get((cat, arch, method), (np.nan,) * 4)
        est, det = method in ESTIMATION_METHODS, method in DETECTION_METHODS
        rows.append(
            {
                "category": cat,
                "arch": arch,
                "method": method,
                "pairs": len(g),
                "mae": g.abs_error.mean() if est else np.nan,
                "mae_std": g.abs_error.std(ddof=0) if est else np.nan,
                "paper_mae": paper[0],
                "paper_mae_std": paper[1],
                "f1": g.f1.mean() if det else np.nan,
                "f1_std": g.f1.std(ddof=0) if det else np.nan,
                "paper_f1": paper[2],
                "paper_f1_std": paper[3],
            }
        )
    return pd.DataFrame(rows)


def settings_table(cfg: RunConfig, *, max_target: int | None = None) -> pd.DataFrame:
    """The paper's Amazon setup (appendix C.1.2-C.1.6, Section 6) item by item beside this run's ``cfg``.

    Columns: ``item``, ``paper``, ``ours``, ``same`` (True, False, or None where the paper does not say).
    """

    def row(item: str, paper: str, ours: Any, same: bool | None) -> dict:
        return {"item": item, "paper": paper, "ours": str(ours), "same": same}

    t = "all 2,000" if max_target is None else f"{max_target} of 2,000"
    return pd.DataFrame(
        [
            row(
                "data",
                "Blitzer et al.: 4 domains x 2,000 reviews, 12 ordered pairs",
                f"same; target: {t} reviews",
                max_target is None,
            ),
            row(
                "features",
                "TF-IDF, dimension 5,000 (preprocessing not given)",
                "TfidfVectorizer(max_features=5000) fitted on the source training texts",
                True,
            ),
            row(
                "source split",
                "not given",
                "80 % D / 20 % held-out source test (thresholds, Proxy Risk constraint)",
                None,
            ),
            row(
                "typical DNN f",
                "4-layer fully connected, width 128, ReLU",
                "3 hidden Linear(128)+ReLU, Linear out",
                True,
            ),
            row(
                "DANN-arch",
                "encoder 4-layer FC 128; predictor 3-layer FC 128; discriminator 7-layer FC 256",
                "same (helpers.models.dann.dann_mlp)",
                True,
            ),
            row("optimiser", "Adam, lr 1e-3", f"Adam, lr {cfg.lr:g} (fused kernel)", cfg.lr == 1e-3),
            row("batch size", "8", cfg.batch_size, cfg.batch_size == 8),
            row("epochs: f, Ens Avg Conf and T_RI members", "50", cfg.f_epochs, cfg.f_epochs == 50),
            row("epochs: DANN h_0 (T_RM, Proxy Risk)", "50", cfg.dann_epochs, cfg.dann_epochs == 50),
            row(
                "DANN batches",
                "one source + one target batch per step (authors' code)",
                "same; min(|D|, |U|)/B steps per epoch as in train_dann.py",
                True,
            ),
            row("DANN α schedule", "α = (2/(1+exp(-10p)) - 1)·1", "same, α_max = 1", True),
            row("α when fine-tuning (T_RM)", "1", "α_max = 1", True),
            row("N (ensemble size)", "20", cfg.num_models, cfg.num_models == 20),
            row("T (rounds)", "5", cfg.rounds, cfg.rounds == 5),
            row("γ", "0.1", cfg.gamma, cfg.gamma == 0.1),
            row(
                "x10 rule for R",
                "digits pairs with a USPS target only",
                "not applied (no Amazon pair uses it)",
                True,
            ),
            row("T_RI round", "each member re-loaded, 1 epoch on D ∪ R, fresh Adam", "same", True),
            row(
                "T_RM round",
                "h_0 re-loaded, N epochs; one D ∪ R batch + one U batch per step, max length",
                "same (helpers.selftraining.adversarial)",
                True,
            ),
            row("Ens Avg Conf members", "10, f's architecture", cfg.ens_size, cfg.ens_size == 10),
            row(
                "Proxy Risk objective",
                "-disagreement + λ·(DANN loss), always on (authors' code)",
                "same",
                True,
            ),
            row(
                "Proxy Risk λ, epochs T2, lr",
                "50, 20, Adam 1e-3",
                f"{cfg.proxy_lam:g}, {cfg.proxy_epochs}, Adam {cfg.proxy_lr:g}",
                (cfg.proxy_lam, cfg.proxy_epochs, cfg.proxy_lr) == (50.0, 20, 1e-3),
            ),
            row(
                "Proxy Risk α, ε",
                "not given for Amazon (digits/CIFAR: 0.1, 1.1·ε0)",
                f"{cfg.proxy_alpha:g}, {cfg.proxy_eps_factor:g}·ε0",
                None,
            ),
            row(
                "Proxy Risk constraint",
                "0-1 source error + α·domain losses (authors' code)",
                "same, on the held-out source test set and U_X",
                True,
            ),
            row(
                "MSP / Trust Score threshold", "held-out score at sorted index int((1 - acc)·n)", "same", True
            ),
            row("MAE, F1", "mean ± std over the 12 pairs", "same (std with ddof 0)", None),
            row(
                "repetitions",
                "one run per pair in Table 1 (5 in appendix C.7 box plots)",
                f"one (seed {cfg.seed})",
                True,
            ),
        ]
    )


def ablation(
    pairs: Sequence[DomainPair],
    cfg: RunConfig,
    *,
    num_models: Sequence[int] = (),
    rounds: Sequence[int] = (),
    gammas: Sequence[float] = (),
    method: str = "rm",
    arch: str = "typical",
) -> pd.DataFrame:
    """Figure 2 analogue: F1 and absolute error of Algorithm 1 when one of N, T, γ varies (the others at ``cfg``).

    The T sweep reuses one run with T = max(rounds): round t never depends on later rounds, so its prefixes are the
    runs with smaller T.
    """
    rows = []
    for pair in pairs:
        f_pred = pair_baselines(pair, cfg, arch=arch)["f_target"].argmax(1)
        true_err = f_pred != pair.y_target

        def add(param: str, value: float, res: SelfTrainingResult, pair=pair, true_err=true_err) -> None:
            rows.append(
                {
                    "pair": pair.name,
                    "param": param,
                    "value": value,
                    "f1": error_detection_scores(predicted_error=res.errors, true_error=true_err)["f1"],
                    "abs_error": abs(res.estimated_accuracy - (1 - true_err.mean())),
                }
            )

        for n in num_models:
            add("N", n, pair_self_training(pair, cfg, method=method, arch=arch, num_models=n))
        if rounds:
            full = pair_self_training(pair, cfg, method=method, arch=arch, rounds=max(rounds))
            for t in rounds:
                add("T", t, full.truncated(t))
        for g in gammas:
            add("gamma", g, pair_self_training(pair, cfg, method=method, arch=arch, gamma=g))
    return pd.DataFrame(rows)
