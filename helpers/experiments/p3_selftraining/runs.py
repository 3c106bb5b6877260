"""Paper 3's one-pair runs (notebook 03): the supervised pool, the baselines, Algorithm 1 (RI / RM ensembles),
Proxy Risk, and the per-pair evaluation of every method.

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

from helpers.cache import cached_arrays, code_version
from helpers.errors import InputValidationError
from helpers.estimators import average_confidence, softmax
from helpers.experiments.p3_selftraining.pairs import DomainPair
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
from helpers.training import TrainSettings, predict
from helpers.training.members import vectorises

__all__ = [
    "RunConfig",
    "pair_baselines",
    "pair_self_training",
    "pair_proxy_risk",
    "evaluate_pair",
    "pair_examples",
    "ablation_jobs",
    "precompute",
    "METHODS",
    "training_code",
    "predict_probs",
    "supervised_pool",
]

NAMESPACE = "03_self_training"
METHODS = ("Avg Conf", "Ens Avg Conf", "MSP", "Trust Score", "Proxy Risk", "Ours (RI)", "Ours (RM)")


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

    def train_settings(self, **changes: Any) -> TrainSettings:
        """How every model of the run is trained (batch size, Adam's learning rate, seed; no progress bars),
        with ``changes`` (epochs, checkpoint folder)."""
        return TrainSettings(batch_size=self.batch_size, lr=self.lr, seed=self.seed, progress=False).replace(**changes)

    def key(self, *fields: str) -> dict:
        d = asdict(self)
        return {k: d[k] for k in fields} if fields else d


# --------------------------------------------------------------------------------------------------------------------
# runs (each cached)
# --------------------------------------------------------------------------------------------------------------------
def training_code() -> str:
    """Fingerprint of the training code behind every cached run here (self-training and the training loops): part
    of each cache key and checkpoint folder, so that entries written by earlier code are never read back under
    unchanged parameters."""
    return code_version("helpers.selftraining", "helpers.training", "helpers.models")


def _ckpt(pair: DomainPair, *parts: Any) -> Any:
    return cache_dir() / "checkpoints" / NAMESPACE / pair.kind / training_code() / "-".join(str(p) for p in parts)


def predict_probs(model: nn.Module, x: np.ndarray) -> np.ndarray:
    """Softmax probabilities of ``model`` on ``x`` (float32, shape (n, n_classes)), in batches of 1,024."""
    return softmax(predict(model, x, batch_size=1024)).astype(np.float32)


def _trained_one_by_one(pair: DomainPair, cfg: RunConfig, arch: str) -> bool:
    """Whether :func:`~helpers.training.members.train_members` trains a pool of ``arch`` member after member
    (:func:`~helpers.training.members.vectorises` is false: a model with buffers or too many parameters, such as the
    5,000-input TF-IDF MLPs) rather than as one vectorised model (the 8x8-digit CNNs)."""
    return not vectorises(cfg.factory(arch, pair)(), 2)


def _member_checkpoint(pair: DomainPair, cfg: RunConfig, arch: str, tag: str) -> Any:
    return _ckpt(pair, pair.source, pair.source_key, arch, f"e{cfg.f_epochs}", f"b{cfg.batch_size}", tag)


def supervised_pool(pair: DomainPair, cfg: RunConfig, arch: str, seeds: Sequence[int]) -> list[nn.Module]:
    """Models of architecture ``arch`` trained on D under ``seeds`` (f: [seed]; pools: seed+1, seed+2, …).

    Members trained one by one (:func:`_trained_one_by_one`) are trained and checkpointed each on its own, so that
    :func:`precompute` can spread a pool's members over the executor's workers; member i is the same model whichever
    pool asks for it.  Vectorised pools are trained at once (:func:`helpers.selftraining.algorithm.train_pool`) and
    checkpointed together; a pool of seeds seed+1..seed+n is served from the trained pool seed+1..seed+max(n,
    ens_size[, num_models for the DANN-arch pool, which T_RI shares]), since members are independent of each other.
    """
    seeds = [int(s) for s in seeds]
    first = cfg.seed + 1

    def train(pool_seeds: list[int], tag: str) -> list[nn.Module]:
        settings = cfg.train_settings(epochs=cfg.f_epochs, checkpoint_dir=_member_checkpoint(pair, cfg, arch, tag))
        return train_pool(cfg.factory(arch, pair), pair.x_train, pair.y_train, settings, seeds=pool_seeds)

    if len(seeds) == 1 or _trained_one_by_one(pair, cfg, arch):
        return [train([s], f"s{s}")[0] for s in seeds]
    if seeds == list(range(first, first + len(seeds))):
        pool_seeds = list(range(first, first + max(len(seeds), len(_pool_seeds(cfg, arch)))))
    else:
        pool_seeds = seeds
    pool = train(pool_seeds, f"s{pool_seeds[0]}-{pool_seeds[-1]}")
    return [pool[pool_seeds.index(s)] for s in seeds]


def _h0(pair: DomainPair, cfg: RunConfig) -> nn.Module:
    return train_dann(
        cfg.factory("dann", pair),
        pair.x_train,
        pair.y_train,
        pair.x_target,
        cfg.train_settings(
            epochs=cfg.dann_epochs,
            checkpoint_dir=_ckpt(
                pair, pair.name, pair.key, "h0", f"e{cfg.dann_epochs}", f"b{cfg.batch_size}", f"s{cfg.seed}"
            ),
        ),
    )


def pair_baselines(pair: DomainPair, cfg: RunConfig, *, arch: str = "typical") -> dict[str, np.ndarray]:
    """f's probabilities (target, held-out), Ens Avg Conf member probabilities and Trust Scores (cached)."""
    key = {
        "code": training_code(),
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
        f = supervised_pool(pair, cfg, arch, [cfg.seed])[0]
        ens = supervised_pool(pair, cfg, arch, [cfg.seed + 1 + i for i in range(cfg.ens_size)])
        f_train_logits = predict(f, pair.x_train, batch_size=1024)
        ts = TrustScore(alpha=cfg.ts_alpha, k=cfg.ts_k).fit(
            features=f_train_logits, labels=pair.y_train, num_classes=pair.num_classes
        )
        out = {
            "f_target": predict_probs(f, pair.x_target),
            "f_heldout": predict_probs(f, pair.x_heldout),
            "ens_target": np.stack([predict_probs(m, pair.x_target) for m in ens]),
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
        "code": training_code(),
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
            settings=cfg.train_settings(),
        )
        if method == "ri":
            # members: DANN-arch models trained on D, seeds seed+1..seed+N (the same pool as the DANN-arch
            # Ens Avg Conf ensemble; f itself is seed+0)
            members = supervised_pool(pair, cfg, "dann", [cfg.seed + 1 + i for i in range(N)])
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
        "code": training_code(),
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
            lam=cfg.proxy_lam,
            alpha=cfg.proxy_alpha,
            eps_factor=cfg.proxy_eps_factor,
            settings=cfg.train_settings(lr=cfg.proxy_lr),
        ).fit(x=pair.x_train, y=pair.y_train, x_heldout=pair.x_heldout, y_heldout=pair.y_heldout)
        est = pr.estimate(x=pair.x_target, probs=f_probs)
        return {
            "check_pred": pr.check_predictions_.astype(np.int64),
            "chosen_epoch": np.array(est.details["chosen_epoch"]),
        }

    return cached_arrays(NAMESPACE, key, compute)


def _pool_seeds(cfg: RunConfig, arch: str) -> list[int]:
    """Seeds of a source's pool of ``arch``: the Ens Avg Conf members and, for the DANN-arch, the T_RI members."""
    size = max(cfg.ens_size, cfg.num_models if arch == "dann" else 0)
    return [cfg.seed + 1 + i for i in range(size)]


def _train_shared_model(
    pair: DomainPair, cfg: RunConfig, what: str, arch: str, seeds: Sequence[int] | None = None
) -> None:
    """Stage 1 of :func:`precompute`: f, a pool of members or some of its members (shared by the targets of a
    source), or h_0."""
    import torch

    torch.set_num_threads(1)
    if what == "f":
        supervised_pool(pair, cfg, arch, [cfg.seed])
    elif what == "pool":
        supervised_pool(pair, cfg, arch, _pool_seeds(cfg, arch) if seeds is None else seeds)
    else:
        _h0(pair, cfg)


def _method_quietly(pair: DomainPair, cfg: RunConfig, method: str, overrides: dict) -> None:
    """A stage-2 unit of :func:`precompute`: one method's run on one (pair, f) job (``"rm"`` / ``"ri"`` with
    ``overrides`` of :func:`pair_self_training`, or ``"proxy"``), left in the cache."""
    import torch

    torch.set_num_threads(1)
    if method == "proxy":
        pair_proxy_risk(pair, cfg, arch=overrides.get("arch", "typical"))
    else:
        pair_self_training(pair, cfg, method=method, **overrides)


def _call(job: tuple[Callable[..., None], tuple], pairs: dict[str, DomainPair]) -> None:
    """Run ``fn(pair, *rest)`` of ``job = (fn, (pair_key, *rest))`` with the pair looked up in ``pairs`` (the units
    carry the key; the pairs travel to each worker once, :func:`helpers.parallel.map_units`'s ``common``)."""
    fn, (pair_key, *rest) = job
    fn(pairs[pair_key], *rest)


def ablation_jobs(
    pairs: Sequence[DomainPair],
    cfg: RunConfig,
    *,
    num_models: Sequence[int] = (),
    rounds: Sequence[int] = (),
    gammas: Sequence[float] = (),
    method: str = "rm",
    arch: str = "typical",
) -> list[tuple[DomainPair, RunConfig, dict]]:
    """The Algorithm-1 runs of the Figure-2 ablation (:func:`~helpers.experiments.p3_selftraining.tables.ablation`)
    that the main runs do not already give: ``(pair, cfg, overrides of pair_self_training)`` for
    :func:`precompute`'s ``ablations``.  The T sweep is one run at T = max(rounds)."""
    jobs = []
    for pair in pairs:
        wanted = [{"num_models": int(n)} for n in num_models if int(n) != cfg.num_models]
        wanted += [{"rounds": max(int(t) for t in rounds)}] if rounds and max(rounds) != cfg.rounds else []
        wanted += [{"gamma": float(g)} for g in gammas if float(g) != cfg.gamma]
        jobs += [(pair, cfg, {"method": method, "arch": arch, **w}) for w in wanted]
    return jobs


def precompute(
    jobs: Sequence[tuple[DomainPair, RunConfig, str]],
    *,
    workers: int = 0,
    ablations: Sequence[tuple[DomainPair, RunConfig, dict]] = (),
    progress: bool = True,
) -> None:
    """Fill the cache for ``(pair, cfg, arch)`` jobs (and the ``ablations`` runs), each training loop a unit on the
    executor's workers.

    The small models of paper 3 keep one core busy per training loop (one torch thread each), so on a 2-core CPU
    two loops on two workers finish in about half the time of one process with two threads.  Stage 1 trains what
    is shared by every target of a source (f, the Ens Avg Conf pool, the T_RI pool) and the DANN h_0 of each pair
    (shared by T_RM and Proxy Risk); stage 2 runs T_RM, T_RI and Proxy Risk of each (pair, f) job and each ablation run
    (:func:`ablation_jobs`), each a unit that starts once its pair's stage-1 models are trained (``after`` of
    :func:`helpers.parallel.map_units`: no barrier between the stages, so a worker that falls free as stage 1 runs
    out takes a pair's methods rather than another notebook's long unit).  No training is left for the calling
    kernel: under the runner the kernel would get a third of a core beside two busy workers.  Everything goes to
    the cache (checkpoints and
    :func:`helpers.cache.cached_arrays`), so afterwards :func:`evaluate_pair` and the ablation table in the calling
    process read it back, and an interrupted run keeps every job it finished.  ``workers == 1`` runs the same
    stages in this process; otherwise the units go to :func:`helpers.parallel.map_units` (the runner's cluster, or a
    local one).
    """
    from helpers.parallel import map_units
    from helpers.progress import tqdm

    shared: dict[tuple, tuple] = {}  # stage-1 key -> (what, name, job): each shared model trained by one unit
    needs: dict[tuple, list[tuple]] = {}  # (pair, cfg, arch) -> the stage-1 keys its stage-2 units read
    for pair, cfg, arch in [*jobs, *((p, c, o.get("arch", "typical")) for p, c, o in ablations)]:
        wanted = [
            ("f", arch, pair.source_key),
            ("pool", arch, pair.source_key),
            ("pool", "dann", pair.source_key),
            ("h0", "dann", pair.key),
        ]
        job_id = (pair.key, repr(cfg), arch)
        for what, a, data_key in wanted:
            # a pool trained member after member is one unit per member, so that the workers share it
            parts = [[s] for s in _pool_seeds(cfg, a)] if what == "pool" and _trained_one_by_one(pair, cfg, a) else [None]
            for seeds in parts:
                key = (what, a, data_key, repr(cfg), None if seeds is None else tuple(seeds))
                needs.setdefault(job_id, []).append(key)
                if key not in shared:
                    name = f"{what} {a} {data_key}" + ("" if seeds is None else f" s{seeds[0]}")
                    shared[key] = (what, name, (_train_shared_model, (pair.key, cfg, what, a, seeds)))
    order = {"h0": 0, "pool": 1, "f": 2}  # longest first
    stage1 = sorted(shared, key=lambda k: order[shared[k][0]])
    position = {key: i for i, key in enumerate(stage1)}
    units = [(shared[k][1], shared[k][2], []) for k in stage1]
    # stage 2: each method of each (pair, f) job its own unit (T_RM, the longest, first; the baselines they share
    # are computed by the first unit that needs them, once per key), then the ablation runs; each starts once its
    # pair's shared models are trained, not after the whole of stage 1
    runs = [(pair, cfg, m, {"arch": arch}) for m in ("rm", "ri", "proxy") for pair, cfg, arch in jobs]
    runs += [(pair, cfg, o["method"], {k: v for k, v in o.items() if k != "method"}) for pair, cfg, o in ablations]
    for pair, cfg, m, o in runs:
        after = sorted({position[k] for k in needs[(pair.key, repr(cfg), o.get("arch", "typical"))]})
        units.append((f"{pair.key} {m} {o}", (_method_quietly, (pair.key, cfg, m, o)), after))
    pairs = {p.key: p for p, _, _ in [*jobs, *ablations]}
    if workers == 1:  # in order: every pair's shared models before its methods
        for _, job, _ in tqdm(units, desc="self-training units", disable=not progress):
            _call(job, pairs)
    else:
        map_units(_call, [job for _, job, _ in units], names=[n for n, _, _ in units], desc="self-training units",
                  after=[a for _, _, a in units], progress=progress, common=pairs)  # fmt: skip


def pair_examples(
    pair: DomainPair,
    cfg: RunConfig,
    *,
    arch: str = "typical",
    methods: Sequence[str] = METHODS,
) -> dict[str, Any]:
    """Per-example outcomes of every method on one pair (from the cache), for bootstrap intervals over target points.

    Returns ``{"true_error": (n,) bool, "estimate": {method: float}, "residual": {method: (n,)}, "flags": {method:
    (n,) bool or None}}``: a method's estimate minus the true accuracy is the mean of its ``residual`` (Avg Conf:
    confidence - correct; a detector: error - flag), and ``flags`` are its predicted errors (None for the two
    confidence averages).  RI and RM add ``"<method> round 1"``: the first round's flags (T = 1, no self-training).
    """
    base = pair_baselines(pair, cfg, arch=arch)
    f_pred = base["f_target"].argmax(1)
    true_err = f_pred != pair.y_target
    held_correct = base["f_heldout"].argmax(1) == pair.y_heldout
    out: dict[str, Any] = {"true_error": true_err, "estimate": {}, "residual": {}, "flags": {}}

    def add(method: str, estimate: float, flags: np.ndarray | None, confidence: np.ndarray | None = None) -> None:
        out["estimate"][method], out["flags"][method] = estimate, flags
        per_point = confidence if flags is None else 1.0 - flags
        out["residual"][method] = np.asarray(per_point, dtype=np.float64) - (~true_err)

    for m in methods:
        if m == "Avg Conf":
            add(m, average_confidence(base["f_target"]), None, base["f_target"].max(1))
        elif m == "Ens Avg Conf":
            add(m, ensemble_average_confidence(base["ens_target"]), None, base["ens_target"].mean(axis=0).max(axis=1))
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
            add(m, res.estimated_accuracy, res.errors)
            add(f"{m} round 1", res.rounds[0].estimated_accuracy, res.rounds[0].errors)
        else:
            raise InputValidationError(f"methods: unknown method {m!r}; expected some of {METHODS}")
    return out


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
    ex = pair_examples(pair, cfg, arch=arch, methods=methods)
    true_err = ex["true_error"]
    true_acc = 1.0 - float(true_err.mean())
    rows = []
    for m in methods:
        flags, estimate = ex["flags"][m], ex["estimate"][m]
        f1 = error_detection_scores(predicted_error=flags, true_error=true_err)["f1"] if flags is not None else np.nan
        extra = {"estimate_round1": ex["estimate"][f"{m} round 1"]} if f"{m} round 1" in ex["estimate"] else {}
        rows.append({"category": pair.kind, "pair": pair.name, "source": pair.source, "target": pair.target,
                     "arch": arch, "method": m, "true_accuracy": true_acc, "estimate": estimate,
                     "abs_error": abs(estimate - true_acc), "f1": f1, **extra})  # fmt: skip
    return pd.DataFrame(rows)
