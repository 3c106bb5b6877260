"""Model suites and the end-to-end ranking experiment of paper 4 (§4-6), kept out of the notebook.

* :func:`pair_vocab`, :func:`train_classifier`, :func:`predict_probs` -- word-level models (the tiny
  Transformer or TextCNN) on texts or text pairs, trained with :func:`helpers.training.fit` (checkpointed, so a
  re-run does not retrain) and predicted with cached probabilities;
* :func:`run_setting` -- for one OOD set: true OOD accuracy of every model, attributions of every model on a
  fixed population, factor values, baselines, and the bootstrap ranking accuracy of each (Appendix B), over the
  model pairs whose OOD accuracies differ beyond sampling error (:func:`~helpers.attribution.informative_pairs`);
* :func:`suite_spread` -- a suite's accuracy range and its number of informative pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from helpers.attribution.attributions import HFTokenizer, WordTokenizer, attribute, model_fingerprint
from helpers.attribution.evaluation import BASELINES, baseline_scores, informative_pairs, ranking_table
from helpers.attribution.factors import FACTORS, factor_matrix, factor_values
from helpers.cache import cache_key, cached_arrays, code_version
from helpers.errors import InputValidationError, UnknownNameError
from helpers.models.text import PAD, UNK, Vocab, tokenize
from helpers.models.tiny_transformer import TinyTransformer
from helpers.models.zoo import word_model
from helpers.paths import cache_dir
from helpers.training.settings import TrainSettings

__all__ = [
    "ARCHITECTURES",
    "pair_vocab",
    "build_model",
    "train_classifier",
    "predict_probs",
    "SettingResult",
    "run_setting",
    "suite_spread",
    "train_suite",
    "TRAIN_SETTINGS",
    "SUITE_SETTINGS",
    "model_tokenizer",
    "accuracy_table",
    "window_ablation",
    "factor_variants",
]

SEP = "<sep>"
ARCHITECTURES: dict[str, dict[str, Any]] = {
    "tiny": dict(kind="transformer", dim=64, heads=4, num_layers=2, ff=128),
    "tiny-small": dict(kind="transformer", dim=32, heads=2, num_layers=1, ff=64),
    "tiny-wide": dict(kind="transformer", dim=96, heads=4, num_layers=3, ff=192),
    # with the exact-match feature (ESIM/DrQA-style) for text pairs
    "tiny-em": dict(kind="transformer", dim=64, heads=4, num_layers=2, ff=128, exact_match=True),
    "tiny-small-em": dict(kind="transformer", dim=32, heads=2, num_layers=1, ff=64, exact_match=True),
    "tiny-wide-em": dict(kind="transformer", dim=96, heads=4, num_layers=3, ff=192, exact_match=True),
    "textcnn": dict(kind="textcnn", dim=64, filters=32),
    # pretrained MiniLM-L6 (all-MiniLM-L6-v2, from the local wheel) and a truncated copy (its first 2 layers),
    # fine-tuned end to end with a linear head: lr and epochs here override train_classifier's (fine-tuning a
    # pretrained encoder wants a ~20x smaller step and fewer passes than training a tiny model from scratch;
    # one pass keeps the CPU cost of the one-off MiniLM run down)
    "minilm-l6": dict(kind="minilm", num_layers=6, lr=1e-4, epochs=1),
    "minilm-l2": dict(kind="minilm", num_layers=2, lr=1e-4, epochs=1),
}
TRAIN_SETTINGS = TrainSettings(epochs=3, batch_size=32, lr=2e-3, progress=False)  #: one model of :func:`train_classifier`
SUITE_SETTINGS = TRAIN_SETTINGS.replace(epochs=4)  #: each model of :func:`train_suite`
MINILM_MAX_LENGTH = 64  # WordPiece tokens per (pair) input: the generated pairs are ≤ 2 × 18 words


def pair_vocab(texts: Iterable[str]) -> Vocab:
    """Every word of ``texts`` (min frequency 1, sorted) with ``<pad>``, ``<unk>``, ``<sep>`` at ids 0, 1, 2."""
    words = sorted({w for t in texts for w in tokenize(t)} - {PAD, UNK, SEP})
    return Vocab([PAD, UNK, SEP, *words])


def _inputs(frame: pd.DataFrame, columns: Sequence[str]) -> list[Any]:
    if len(columns) == 1:
        return frame[columns[0]].astype(str).tolist()
    if len(columns) == 2:
        return list(zip(frame[columns[0]].astype(str), frame[columns[1]].astype(str)))
    raise InputValidationError(f"columns: expected 1 or 2 text columns, got {list(columns)}")


def build_model(arch: str, vocab: Vocab, *, seed: int = 0, max_len: int = 64) -> nn.Module:
    """A fresh model of a named architecture (:data:`ARCHITECTURES`) from the text-model zoo
    (:mod:`helpers.models.zoo`); MiniLM members load pretrained weights."""
    if arch not in ARCHITECTURES:
        raise UnknownNameError("architecture", arch, list(ARCHITECTURES))
    spec = dict(ARCHITECTURES[arch])
    kind = spec.pop("kind")
    torch.manual_seed(seed)
    if kind == "minilm":
        from helpers.models.minilm import MiniLMClassifier

        model = MiniLMClassifier(2, num_layers=spec["num_layers"])
        model.arch = arch
        return model
    if kind == "transformer":
        return TinyTransformer(len(vocab), 2, sep_id=vocab.stoi[SEP], max_len=max_len, **spec)
    return word_model("textcnn", len(vocab), dim=spec["dim"], filters=spec["filters"])


def _is_minilm(model: nn.Module) -> bool:
    from helpers.models.minilm import MiniLMClassifier

    return isinstance(model, MiniLMClassifier)


def model_tokenizer(model: nn.Module, vocab: Vocab) -> WordTokenizer | HFTokenizer:
    """The tokenizer adapter a model reads: its own WordPiece tokenizer (MiniLM) or the word vocabulary.

    MiniLM inputs are pre-split with :func:`helpers.models.text.tokenize`, so word indices (critical / swapped /
    control words) mean the same words for every architecture.
    """
    if _is_minilm(model):
        return HFTokenizer(model.tokenizer, max_length=MINILM_MAX_LENGTH, split_words=tokenize)
    return WordTokenizer(vocab)


def _forward(model: nn.Module):
    if isinstance(model, TinyTransformer):
        return lambda ids, segments, mask: model(ids, segments)
    if _is_minilm(model):
        return lambda ids, segments, mask: model(
            ids, (ids != 0).long() if mask is None else mask, segments
        )  # [PAD] is id 0 in MiniLM's vocabulary
    return lambda ids, segments, mask: model(ids)


def _collate(items):
    ids = Vocab.pad([it[0][0] for it in items])
    segs = Vocab.pad([it[0][1] for it in items])
    y = torch.as_tensor([int(it[1]) for it in items], dtype=torch.long)
    return {"ids": ids, "segments": segs}, y


def train_classifier(
    inputs: Sequence[Any],
    labels: Sequence[int],
    vocab: Vocab,
    settings: TrainSettings | None = None,
    *,
    arch: str = "tiny",
    **overrides: Any,
) -> nn.Module:
    """Train a word-level classifier on texts or pairs, checkpointed under ``cache/checkpoints/attribution-<hash>``.

    ``settings`` (default :data:`TRAIN_SETTINGS`: 3 epochs, batches of 32, learning rate 2e-3; ``**overrides``
    change it) are trained with AdamW on the CPU.  The hash covers everything the model depends on: the training
    inputs and labels, the vocabulary, the architecture, epochs, learning rate, batch size, seed and the model and
    training code (:func:`~helpers.cache.code_version`).  So an interrupted training resumes, and the same model asked
    for twice (an inoculation mix that is also an architecture-suite member) is trained once.  MiniLM architectures
    fine-tune with their own ``lr`` and ``epochs`` (:data:`ARCHITECTURES`).
    """
    from helpers.training import fit

    s = TrainSettings.resolve(settings if settings is not None else TRAIN_SETTINGS, **overrides)
    s = s.replace(**{k: v for k, v in ARCHITECTURES[arch].items() if k in ("lr", "epochs")})
    model = build_model(arch, vocab, seed=s.seed)
    key = cache_key(
        {"inputs": [x if isinstance(x, str) else list(x) for x in inputs], "labels": [int(y) for y in labels],
         "vocab": list(vocab.itos), "arch": arch, "epochs": s.epochs, "lr": s.lr, "batch_size": s.batch_size,
         "seed": s.seed, "code": code_version("helpers.models", "helpers.training")}
    )[:32]  # fmt: skip
    tok = model_tokenizer(model, vocab)
    encs = [tok.encode(x) for x in inputs]
    items = [((e.ids, e.segments), int(y)) for e, y in zip(encs, labels)]
    fwd = _forward(model)
    fit(
        model,
        items,
        s.replace(optimizer="adamw", checkpoint_dir=cache_dir() / "checkpoints" / f"attribution-{key}"),
        collate_fn=_collate,
        forward_fn=lambda m, x: fwd(x["ids"], x["segments"], None),
    )
    model.eval()
    return model


def predict_probs(
    model: nn.Module, vocab: Vocab, inputs: Sequence[Any], *, batch_size: int = 256, device: Any = "auto"
) -> np.ndarray:
    """Softmax probabilities ``(N, 2)`` of ``model`` on ``inputs``, computed on ``device`` (CUDA when present) and
    cached by model parameters and inputs."""
    tok = model_tokenizer(model, vocab)

    def compute():
        from helpers.estimators import softmax
        from helpers.training import predict

        fwd = _forward(model)
        items = [((e.ids, e.segments), 0) for e in (tok.encode(x) for x in inputs)]  # label unused
        logits = predict(
            model,
            items,
            batch_size=batch_size,
            collate_fn=_collate,
            forward_fn=lambda m, x: fwd(x["ids"], x["segments"], None),
            device=device,
        )
        return {"probs": softmax(logits).astype(np.float32)}

    key = {
        "model": model_fingerprint(model),
        "inputs": [list(x) if not isinstance(x, str) else x for x in inputs],
        **({"tokenizer": tok.identity()} if isinstance(tok, HFTokenizer) else {}),
    }
    return cached_arrays("attribution-probs", key, compute, code=("helpers.models",))["probs"]


@dataclass
class SettingResult:
    """Outputs of :func:`run_setting` (all tidy frames)."""

    models: pd.DataFrame  # model, ood_accuracy, id_accuracy
    summary: pd.DataFrame  # attribution method, ranker, accuracy
    pairs: pd.DataFrame  # attribution method, ranker, model_a, model_b, acc_a, acc_b, accuracy
    attributions: pd.DataFrame
    factors: pd.DataFrame  # model, method, example, factor, value
    informative: np.ndarray  # (n_models, n_models) bool: the pairs the rankers are scored on


def run_setting(
    models: Mapping[str, nn.Module],
    vocab: Vocab,
    *,
    ood: pd.DataFrame,
    population: pd.DataFrame,
    columns: Sequence[str],
    factors: Sequence[str],
    methods: Sequence[str] = ("ig", "shap", "lime"),
    in_domain: pd.DataFrame | None = None,
    meta_columns: Sequence[str] = (),
    n_boot: int = 500,
    size: int = 10,
    seed: int = 0,
    informative_z: float | None = 2.0,
    attribution_kw: Mapping[str, Any] | None = None,
    progress: bool = True,
) -> SettingResult:
    """Rank a model suite on one OOD set with every factor, attribution method and baseline (paper 4, App. B).

    Parameters
    ----------
    models : mapping name -> trained model
    vocab : Vocab
    ood : DataFrame
        The full OOD test set (``columns`` + ``label``): gives each model's true OOD accuracy.
    population : DataFrame
        The fixed population of OOD examples (``columns`` + ``label`` + ``meta_columns``) that the bootstrap
        samples from; attributions are computed on it once per model and method.
    columns : text column(s) (one, or two for pairs)
    factors : names in :data:`~helpers.attribution.factors.FACTORS`
    methods : attribution methods
    in_domain : DataFrame, optional
        In-domain test set, for the ``id_accuracy`` column.
    informative_z : float or None
        Score the rankers only on the model pairs whose true OOD accuracies (each on ``len(ood)`` examples) differ
        by more than ``informative_z`` standard errors of their difference
        (:func:`~helpers.attribution.informative_pairs`); ``None`` scores every pair with different accuracies.
    """
    from helpers.progress import tqdm

    names = list(models)
    if len(names) < 2:
        raise InputValidationError("models: expected at least two models to rank")
    unknown = [f for f in factors if f not in FACTORS]
    if unknown:
        raise UnknownNameError("factor", unknown[0], list(FACTORS))
    ood_inputs, pop_inputs = _inputs(ood, columns), _inputs(population, columns)
    rows = []
    for name in names:
        acc = float(
            (predict_probs(models[name], vocab, ood_inputs).argmax(1) == ood["label"].to_numpy()).mean()
        )
        id_acc = np.nan
        if in_domain is not None:
            p = predict_probs(models[name], vocab, _inputs(in_domain, columns))
            id_acc = float((p.argmax(1) == in_domain["label"].to_numpy()).mean())
        rows.append((name, acc, id_acc))
    model_table = pd.DataFrame(rows, columns=["model", "ood_accuracy", "id_accuracy"])
    true_acc = model_table["ood_accuracy"].to_numpy()
    informative = (
        np.ones((len(names), len(names)), dtype=bool)
        if informative_z is None
        else informative_pairs(true_acc, len(ood), z=informative_z)
    )
    probs = np.stack([predict_probs(models[n], vocab, pop_inputs) for n in names])
    labels = population["label"].to_numpy()
    base = {b: baseline_scores(b, probs=probs, labels=labels, seed=seed) for b in BASELINES}

    frames = []
    jobs = [(n, m) for m in methods for n in names]
    for name, method in tqdm(jobs, desc="attributions", disable=not progress):
        frames.append(
            attribute(models[name], model_tokenizer(models[name], vocab), pop_inputs, method=method, model_name=name, forward=_forward(models[name]),
                      seed=seed, **dict(attribution_kw or {}))
        )  # fmt: skip
    attributions = pd.concat(frames, ignore_index=True)
    meta = population[list(meta_columns)].reset_index(drop=True) if meta_columns else None
    fvals = pd.concat([factor_values(attributions, f, meta=meta) for f in factors], ignore_index=True)

    summaries, pair_frames = [], []
    for method in methods:
        rankers = dict(base)
        for f in factors:
            sub = fvals[fvals["factor"] == f]
            rankers[f] = (factor_matrix(sub, names, method=method), FACTORS[f].higher_is_better)
        s, p = ranking_table(
            rankers, true_acc, n_boot=n_boot, size=size, seed=seed, models=names, pair_mask=informative
        )
        summaries.append(s.assign(attribution=method))
        pair_frames.append(p.assign(attribution=method))
    summary = pd.concat(summaries, ignore_index=True).rename(columns={"method": "ranker"})
    pairs = pd.concat(pair_frames, ignore_index=True).rename(columns={"method": "ranker"})
    return SettingResult(model_table, summary, pairs, attributions, fvals, informative)


def suite_spread(result: SettingResult, n_ood: int) -> dict[str, Any]:
    """How well a suite can be ranked at all: its OOD-accuracy range and how many pairs are informative.

    Returns ``models``, ``min_accuracy``, ``max_accuracy``, ``pairs`` (all model pairs) and ``informative_pairs``
    (pairs whose accuracies on ``n_ood`` examples differ by more than the rankers' z standard errors).
    """
    acc = result.models["ood_accuracy"].to_numpy()
    n = acc.size
    return {
        "models": n,
        "n_ood": int(n_ood),
        "min_accuracy": float(acc.min()),
        "max_accuracy": float(acc.max()),
        "pairs": n * (n - 1) // 2,
        "informative_pairs": int(np.triu(result.informative, 1).sum()),
    }


def train_suite(
    train_sets: Mapping[str, pd.DataFrame],
    vocab: Vocab,
    settings: TrainSettings | None = None,
    *,
    columns: Sequence[str],
    key: str = "suite",
    arch: str | Mapping[str, str] = "tiny",
    progress: bool = True,
    **overrides: Any,
) -> dict[str, nn.Module]:
    """Train one model per named training set (an inoculation mix), or per architecture when ``arch`` is a map.

    ``settings`` (default :data:`SUITE_SETTINGS`: 4 epochs, otherwise :data:`TRAIN_SETTINGS`; ``**overrides``
    change it) train every model; ``progress`` shows a bar over the models, named ``key``; checkpoints are keyed by
    content (:func:`train_classifier`).
    """
    from helpers.progress import tqdm

    s = TrainSettings.resolve(settings if settings is not None else SUITE_SETTINGS, **overrides)
    out = {}
    for name, frame in tqdm(list(train_sets.items()), desc=f"train {key}", disable=not progress):
        a = arch[name] if isinstance(arch, Mapping) else arch
        out[name] = train_classifier(_inputs(frame, columns), frame["label"].tolist(), vocab, s, arch=a)
    return out


def accuracy_table(summary: pd.DataFrame, rankers: Sequence[str], *, percent: bool = True) -> pd.DataFrame:
    """Pivot a :class:`SettingResult` summary to rankers × attribution methods (percent by default)."""
    t = summary.pivot(index="ranker", columns="attribution", values="accuracy")  # keeps NaN (no ranked pair)
    t = t.reindex([r for r in rankers if r in t.index])
    return (t * 100).round(1) if percent else t


def window_ablation(
    result: SettingResult,
    population: pd.DataFrame,
    *,
    widths: Sequence[int] = (1, 0),
    n_boot: int = 500,
    size: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Post-hoc diagnostic of the window factor's reading: signed vs absolute attributions, window widths.

    For every attribution method of ``result`` and every (width, signed|absolute) variant, the ranking accuracy
    of Σ_{|j−i|≤w} a_j (or |a_j|) on L1-normalised attributions, plus the mass on the surface word "the"
    (−Σ|a| over "the": less mass on the surface cue ranked better).  The variants are explored *after* seeing the
    paper-reading results, so they are diagnostics, not a fair comparison with ACC.

    Returns a frame ``attribution, variant, accuracy`` (accuracy in [0, 1]).
    """
    from helpers.attribution.evaluation import ranking_table
    from helpers.attribution.factors import normalize, token_positions, window_factor

    names = list(result.models["model"])
    acc = result.models["ood_accuracy"].to_numpy()
    rows = []
    for method, attr in result.attributions.groupby("method"):
        variants: dict[str, tuple[np.ndarray, bool]] = {}
        mats: dict[str, np.ndarray] = {}
        for (model, example), g in attr.groupby(["model", "example"]):
            g = g.sort_values("position")
            a = normalize(g["score"].to_numpy())
            i = token_positions(g, [population["critical"].iloc[example]])[0]
            m, e = names.index(model), int(example)
            for w in widths:
                for absolute in (False, True):
                    key = f"window ±{w}{' |a|' if absolute else ''}"
                    mats.setdefault(key, np.zeros((len(names), len(population))))
                    mats[key][m, e] = window_factor(np.abs(a) if absolute else a, i, width=w)
            mats.setdefault('-mass on "the"', np.zeros((len(names), len(population))))
            mats['-mass on "the"'][m, e] = -np.abs(a[g["token"].to_numpy() == "the"]).sum()
        variants = {k: (v, True) for k, v in mats.items()}
        summary, _ = ranking_table(
            variants, acc, n_boot=n_boot, size=size, seed=seed, models=names, pair_mask=result.informative
        )
        rows.append(summary.rename(columns={"method": "variant"}).assign(attribution=method))
    return pd.concat(rows, ignore_index=True)[["attribution", "variant", "accuracy"]]


def factor_variants(
    result: SettingResult,
    population: pd.DataFrame,
    *,
    factors: Sequence[str],
    meta_columns: Sequence[str] = (),
    n_boot: int = 500,
    size: int = 10,
    seed: int = 0,
) -> pd.DataFrame:
    """Post-hoc diagnostic of the pair factors' sign conventions (why a factor can rank "backwards").

    For every attribution method and factor of ``result``: the ranking accuracy of the paper's reading
    (attributions explain the *predicted* class, §3; a priori direction of :data:`FACTORS`), of the same values
    with the opposite direction, and of the factor on attributions that explain a *fixed* class (class 1:
    entailment / paraphrase; for two-class probabilities the attribution towards p_0 = 1 − p_1 is the negated
    one, so the scores of examples predicted 0 are negated).  Explaining the predicted class flips the sign of
    a signed factor on every example the model predicts as class 0, so the mean factor partly tracks how often
    a model predicts class 0 -- which differs between heuristic-following and robust models.

    Returns a frame ``attribution, factor, variant, accuracy`` (accuracy in [0, 1]).
    """
    names = list(result.models["model"])
    acc = result.models["ood_accuracy"].to_numpy()
    meta = population[list(meta_columns)].reset_index(drop=True) if meta_columns else None
    attr = result.attributions
    fixed = attr.assign(score=np.where(attr["target"].to_numpy() == 1, attr["score"], -attr["score"]))
    rows = []
    for method in attr["method"].unique():
        rankers: dict[str, tuple[np.ndarray, bool]] = {}
        for f in factors:
            hib = FACTORS[f].higher_is_better
            paper = factor_matrix(factor_values(attr[attr["method"] == method], f, meta=meta), names)
            fix = factor_matrix(factor_values(fixed[fixed["method"] == method], f, meta=meta), names)
            rankers[f"{f}|paper reading"] = (paper, hib)
            rankers[f"{f}|opposite direction"] = (paper, not hib)
            rankers[f"{f}|fixed class 1"] = (fix, hib)
        summary, _ = ranking_table(
            rankers, acc, n_boot=n_boot, size=size, seed=seed, models=names, pair_mask=result.informative
        )
        for key, value in zip(summary["method"], summary["accuracy"]):
            factor, variant = key.split("|")
            rows.append((method, factor, variant, float(value)))
    return pd.DataFrame(rows, columns=["attribution", "factor", "variant", "accuracy"])
