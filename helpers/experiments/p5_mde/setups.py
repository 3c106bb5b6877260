"""The four meta-set setups of notebook 05, defined once: which sets, which models, which cache keys.

Each function takes notebook 05's parameters (:class:`~helpers.experiments.p5_mde.settings.MdeSettings`, or a
mapping with the names of its ``parameters`` cell, validated into one; :func:`notebook_parameters` gives them for a
profile) and returns a :class:`Setup`: the
sets (:class:`~helpers.data.metaset.ShiftSpec`), how to build a set's inputs and labels, one lazily built predictor
per model, the labelled reference and the cache key.  Notebook 05 turns a setup into its measure frame
(:meth:`Setup.frame`); notebook 06 turns the same setup into benchmark tasks (:meth:`Setup.outputs`), so both
read and write the same cache entries (namespace ``05_mde``, one per predictor and set) and cannot drift apart.

========================  ==================================================================================
setup                     models and sets
========================  ==================================================================================
:func:`cifar_setup`       pretrained CIFAR-10 ResNets; CIFAR-10-C-recipe corruptions, compositions, stress sets
:func:`digits_setup`      two 8x8 CNNs (seeds ``seed``, ``seed + 1``) on sklearn digits; natural shift USPS at 8x8
:func:`usps_setup`        the reverse pair: CNNs on USPS at 8x8; natural shift the sklearn digits
:func:`text_setup`        IMDb classifiers of the text-model zoo; text perturbations; RT / movie reviews / Amazon
========================  ==================================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from helpers.cache import cached_arrays
from helpers.data.metaset import (
    ShiftSpec,
    apply_image_shift,
    apply_text_shift,
    distinct_sets,
    image_metaset,
    text_metaset,
    without_colour_only,
)
from helpers.errors import InputValidationError
from helpers.experiments.p5_mde.measures import collect_outputs, metaset_frame
from helpers.experiments.p5_mde.settings import MdeSettings, mde_settings
from helpers.training import features_and_logits

__all__ = [
    "Setup", "MdeSettings", "notebook_parameters", "this_run", "CIFAR_BASES", "cifar_pool", "cifar_setup", "digits_setup", "usps_setup", "text_setup",
    "metaset_specs", "SETUPS", "precompute_outputs",
]  # fmt: skip

CACHE_NAMESPACE = "05_mde"  # collect_outputs' namespace; checkpoints live under checkpoints/05_mde/


def _lazy(make: Callable[[], Any]) -> Callable[[], Any]:
    """``make()`` called once, on first use (a model is built or trained only when some output is not cached)."""
    memo: dict[str, Any] = {}

    def get() -> Any:
        if "v" not in memo:
            memo["v"] = make()
        return memo["v"]

    return get


@dataclass
class Setup:
    """One setup: sets, inputs, labels, predictors, reference and cache key (see the module docstring).

    Attributes
    ----------
    name : str
        ``"cifar10"``, ``"digits"``, ``"usps_to_digits"`` or ``"text"`` (the ``setup`` column of the tables).
    specs : list of ShiftSpec
        Every set, with its split (``fit`` builds the regression, ``heldout`` / ``unseen`` test it).
    inputs, labels : callable spec -> inputs / labels
    predictors : dict model name -> callable inputs -> {"logits"[, "features"]}
        Models are built (and trained, checkpointed) on first use only.
    reference_inputs, reference_labels
        The clean labelled reference set (ATC, DoC, COT, Fréchet).
    key : dict
        Cache key parts of this setup's outputs (with the predictor and set names added per entry).
    models : dict model name -> callable returning the model
    """

    name: str
    specs: list
    inputs: Callable[[ShiftSpec], Any]
    labels: Callable[[ShiftSpec], np.ndarray]
    predictors: dict[str, Callable]
    reference_inputs: Any
    reference_labels: np.ndarray
    key: dict
    models: dict[str, Callable[[], Any]] = field(default_factory=dict)

    def frame(self, *, T: float = 1.0, progress: bool = True) -> tuple[pd.DataFrame, dict, dict]:
        """Notebook 05's view: (measure frame, outputs per predictor and set, fitted references)."""
        return metaset_frame(
            self.specs,
            inputs=self.inputs,
            labels=self.labels,
            predictors=self.predictors,
            reference_inputs=self.reference_inputs,
            reference_labels=self.reference_labels,
            key=self.key,
            setup=self.name,
            T=T,
            progress=progress,
        )

    def outputs(
        self, *, splits: Sequence[str] | None = None, block: tuple[int, int] = (0, 1), progress: bool = True
    ) -> tuple[list, dict, dict]:
        """Notebook 06's view: (specs of ``splits``, outputs[predictor][set], reference outputs[predictor]), from
        the same cache entries as :meth:`frame`.  ``block=(i, n)``: only every n-th set from the i-th (one of n
        units of :func:`precompute_outputs`)."""
        i, n = block
        specs = [s for s in self.specs if splits is None or s.split in splits][i::n]
        out = collect_outputs(specs, inputs=self.inputs, predictors=self.predictors, key=self.key, progress=progress)
        ref = collect_outputs([ShiftSpec("reference", "reference", "clean", (), 0)], inputs=lambda s: self.reference_inputs,
                              predictors=self.predictors, key={**self.key, "part": "reference"}, progress=False)  # fmt: skip
        return specs, out, {p: ref[p]["reference"] for p in self.predictors}


def notebook_parameters(profile: str = "default", **overrides: Any) -> MdeSettings:
    """Notebook 05's parameters for ``profile``: its ``parameters`` cell's values, updated by
    ``notebooks/profiles/05_mde.yaml`` and then by ``overrides`` (what notebook 06 uses to read 05's cache), as
    validated :class:`~helpers.experiments.p5_mde.settings.MdeSettings`."""
    return MdeSettings.for_profile(profile, **overrides)


def this_run(namespace: Mapping[str, Any]) -> MdeSettings:
    """The parameters of the running notebook 05, read from its namespace (``globals()``) by the names of its
    ``parameters`` cell: the same settings :func:`notebook_parameters` gives notebook 06."""
    return MdeSettings.this_run(namespace)


# ------------------------------------------------------------------------------------------------------- images
def _cifar_predictor(model: Callable[[], Any], *, batch_size: int, threads: int) -> Callable:
    """Features and logits of a CIFAR ResNet: channels-last tensors (faster convolutions on the CPU), and
    ``threads`` torch threads for the call (0 keeps the process setting)."""
    import torch

    from helpers.models.resnet_cifar import cifar_preprocess

    def prep(batch: np.ndarray) -> torch.Tensor:
        return cifar_preprocess(batch).contiguous(memory_format=torch.channels_last)

    def predict(x: np.ndarray) -> dict:
        from helpers.parallel import set_threads

        before = torch.get_num_threads()
        if threads:  # capped at the executor's threads per worker when a unit or a kernel under the runner
            set_threads(int(threads))
        try:
            return features_and_logits(model(), x, batch_size=batch_size, preprocess=prep)
        finally:
            torch.set_num_threads(before)

    return predict


#: CIFAR-10 base pools of notebook 05 (``cifar_base``): the loader each one reads
CIFAR_BASES = {"original": "cifar10_original", "jpeg": "cifar10_jpeg"}


def cifar_pool(p: Mapping[str, Any]) -> tuple[Any, np.ndarray, np.ndarray]:
    """(images, set indices, reference indices) of the CIFAR base ``p.cifar_base`` (default ``"original"``).

    ``"original"``: the first 1,017 original CIFAR-10 test images, lossless; every set holds ``cifar_n_per_set``
    of them (at most 1,017) and, with ``cifar_n_reference = 0``, the reference is the same images uncorrupted
    (the clean set).  ``"jpeg"``: the 10,000 test images decoded from quality-75 JPEGs, itself a shift
    (compression); sets and reference are disjoint seeded draws.
    """
    p = mde_settings(p)
    from helpers.data import load

    base = p.cifar_base
    if base not in CIFAR_BASES:
        raise InputValidationError(f"cifar_base: expected one of {list(CIFAR_BASES)}, got {base!r}")
    cifar = load(CIFAR_BASES[base])
    n_set, n_ref = int(p.cifar_n_per_set), int(p.cifar_n_reference)
    if n_set < 1 or n_ref < 0 or n_ref + n_set > len(cifar.y):
        raise InputValidationError(
            f"cifar_n_per_set + cifar_n_reference: at most {len(cifar.y)} images of the {base!r} CIFAR-10 base "
            f"(n_per_set >= 1, n_reference >= 0; 0 = the sets' own clean images), got {n_set} + {n_ref}"
        )
    order = np.random.default_rng(p.seed).permutation(len(cifar.y))
    pool = np.sort(order[n_ref : n_ref + n_set]) if base == "original" else order[n_ref : n_ref + n_set]
    return cifar, pool, (order[:n_ref] if n_ref else pool)


def cifar_setup(p: MdeSettings | Mapping[str, Any]) -> Setup:
    """CIFAR-10 test images of the base ``p.cifar_base`` (:func:`cifar_pool`) with the pretrained ResNets
    ``p.cifar_backbones``: the same ``cifar_n_per_set`` images in every set, a clean reference of
    ``cifar_n_reference`` other images (0: the sets' own images uncorrupted).  Corruptions follow
    ``make_cifar_c.py`` (:mod:`helpers.data.corruptions.cifar10c`; the cache key names that recipe)."""
    p = mde_settings(p)
    import torch

    from helpers.models.resnet_cifar import load_cifar_resnet

    seed = p.seed
    cifar, pool, ref_idx = cifar_pool(p)
    specs = image_metaset(
        fit_names=p.cifar_fit_names, heldout_names=p.cifar_heldout_names, severities=p.cifar_severities,
        heldout_severities=p.cifar_heldout_severities, n_compositions=p.cifar_n_compositions,
        n_heldout_compositions=p.cifar_n_heldout_compositions, stress_names=p.stress_names,
        stress_bases=p.stress_bases, stress_levels=p.stress_levels, seed=seed,
    )  # fmt: skip
    models = {
        f"resnet{d}": _lazy(lambda d=d: load_cifar_resnet(d).to(memory_format=torch.channels_last))
        for d in p.cifar_backbones
    }
    threads = int(p.cifar_threads)
    predictors = {
        name: _cifar_predictor(m, batch_size=p.batch_size, threads=threads) for name, m in models.items()
    }
    return Setup(
        "cifar10", specs, inputs=lambda s: apply_image_shift(cifar.x[pool], s), labels=lambda s: cifar.y[pool],
        predictors=predictors, reference_inputs=cifar.x[ref_idx], reference_labels=cifar.y[ref_idx],
        key={"data": CIFAR_BASES[p.cifar_base], "seed": seed, "n": p.cifar_n_per_set,
             "n_ref": p.cifar_n_reference, "recipe": "make_cifar_c"},
        models=models,
    )  # fmt: skip


def _code() -> str:
    """Version of the model and training code, part of every checkpoint folder here (an edit retrains)."""
    from helpers.cache import code_version

    return code_version("helpers.models", "helpers.training")


def _digit_cnns(prefix: str, x: np.ndarray, y: np.ndarray, *, n_train: int, epochs: int, seed: int) -> dict:
    """Two lazily trained 8x8 CNNs (seeds ``seed`` and ``seed + 1``), checkpointed under ``05_mde/<prefix>-...``."""
    from helpers.models import build_model
    from helpers.paths import cache_dir
    from helpers.training import TrainSettings, fit

    def make(s: int):
        m = build_model("cnn", seed=s)
        ckpt = cache_dir() / "checkpoints" / f"05_mde/{prefix}-cnn-seed{s}-n{n_train}-e{epochs}-init-{_code()}"
        fit(m, (x, y), TrainSettings(epochs=epochs, seed=s, lr=2e-3, checkpoint_dir=ckpt, progress=False))
        return m.eval()

    return {s: _lazy(lambda s=s: make(s)) for s in (seed, seed + 1)}


def _digit_predictors(name: str, cnns: Mapping[int, Callable]) -> dict[str, Callable]:
    """Features and logits of each CNN on 0..16-scale 8x8 images."""
    return {
        f"{name}-seed{s}": (lambda x, m=m: features_and_logits(m(), (x / 16).astype(np.float32)))
        for s, m in cnns.items()
    }


#: sklearn digits the duplicate check of the 8x8 meta-set runs on (the first ones; any 8x8 images would do)
DIGITS_PROBE = 128


def _digit_specs(p: Mapping[str, Any]) -> list:
    """The corrupted-digits meta-set (05's fit and held-out splits), shared by both digits directions.

    Without sets that copy another on 8x8 grayscale images: the colour-only corruptions (``saturate``: the
    identity, i.e. the clean set) and sets whose images equal an earlier set's (``gaussian_blur-1`` is
    ``defocus_blur-1`` at 8x8), checked on :data:`DIGITS_PROBE` digits (:func:`~helpers.data.metaset.distinct_sets`).
    The full list is generated first, so every kept set has the seed it always had.
    """
    p = mde_settings(p)
    from helpers.data import load

    specs = image_metaset(
        fit_names=p.cifar_fit_names, heldout_names=p.cifar_heldout_names, severities=p.digits_severities,
        n_compositions=p.digits_n_compositions, n_heldout_compositions=max(1, p.digits_n_compositions // 2),
        seed=p.seed,
    )  # fmt: skip
    specs = without_colour_only(specs)

    def check() -> dict:  # ~15-60 s: some corruptions are slow even on 8x8 images; cached once per meta-set
        probe = load("digits").x[:DIGITS_PROBE]
        kept = distinct_sets(specs, lambda s: apply_image_shift(probe, s, value_range=(0, 16)), value_range=(0, 16))
        return {"kept": np.array([s.name for s in kept])}

    kept = set(cached_arrays(CACHE_NAMESPACE, {"distinct_sets": [s.key() for s in specs], "probe": DIGITS_PROBE},
                             check, code=("helpers.data",))["kept"])  # fmt: skip
    return [s for s in specs if s.name in kept]


def _text_specs(p: Mapping[str, Any]) -> list:
    """The perturbed-text meta-set (05's fit and held-out splits)."""
    p = mde_settings(p)
    return text_metaset(
        fit_names=p.text_fit_names, heldout_names=p.text_heldout_names, severities=p.text_severities,
        heldout_severities=p.text_heldout_severities, n_compositions=p.text_n_compositions,
        n_heldout_compositions=p.text_n_heldout_compositions, seed=p.seed,
    )  # fmt: skip


def metaset_specs(p: Mapping[str, Any], modality: str, *, split: str = "fit") -> list:
    """05's synthetic shifts of one modality with 05's parameters ``p``: ``"digits"`` (corrupted 8x8 images, any
    8x8 source) or ``"text"`` (perturbed reviews); ``split`` ``"fit"`` is the meta-set the regressions use.
    Other notebooks (06) build meta-sets for their own models from the same generator with these."""
    p = mde_settings(p)
    makers = {"digits": _digit_specs, "text": _text_specs}
    if modality not in makers:
        raise InputValidationError(f"modality: expected one of {sorted(makers)}, got {modality!r}")
    return [s for s in makers[modality](p) if s.split == split]


def digits_setup(p: MdeSettings | Mapping[str, Any]) -> Setup:
    """sklearn 8x8 digits -> two CNNs trained on ``digits_n_train`` images; meta-set = corrupted held-back digits;
    unseen natural shifts: the USPS test set at 8x8 with histogram-matched and with linear intensities."""
    p = mde_settings(p)
    from helpers.data import load, usps_to_digits

    seed, n_train, n_ref = p.seed, p.digits_n_train, p.digits_n_reference
    digits, usps = load("digits"), load("usps", part="test")
    order = np.random.default_rng(seed).permutation(len(digits.y))
    tr, ref, pool = order[:n_train], order[n_train : n_train + n_ref], order[n_train + n_ref :]
    cnns = _digit_cnns("digits", (digits.x[tr] / 16).astype(np.float32), digits.y[tr], n_train=n_train,
                       epochs=p.digits_epochs, seed=seed)  # fmt: skip
    natural = {"usps-histogram": usps_to_digits(usps.x, method="histogram"), "usps-linear": usps_to_digits(usps.x)}
    specs = _digit_specs(p) + [ShiftSpec(name, "unseen", "natural", (), 0) for name in natural]
    pool_x = digits.x[pool]
    predictors = _digit_predictors("cnn", cnns)
    return Setup(
        "digits", specs,
        inputs=lambda s: natural[s.name] if s.family == "natural" else apply_image_shift(pool_x, s, value_range=(0, 16)),
        labels=lambda s: usps.y if s.family == "natural" else digits.y[pool],
        predictors=predictors, reference_inputs=digits.x[ref], reference_labels=digits.y[ref],
        key=dict(data="digits", seed=seed, train=n_train, ref=n_ref, ep=p.digits_epochs, init=True),
        models={n: cnns[s] for n, s in zip(predictors, cnns)},
    )  # fmt: skip


def usps_setup(p: MdeSettings | Mapping[str, Any]) -> Setup:
    """The reverse pair: two CNNs on ``usps_n_train`` USPS training images at 8x8 (histogram-matched); meta-set =
    corrupted USPS test images (minus a reference of ``usps_n_reference``); unseen natural shift: sklearn digits."""
    p = mde_settings(p)
    from helpers.data import load, usps_to_digits

    seed, n_train, n_ref = p.seed, p.usps_n_train, p.usps_n_reference
    digits, usps, usps_tr = load("digits"), load("usps", part="test"), load("usps", part="train")
    u_train = np.random.default_rng(seed).permutation(len(usps_tr.y))[:n_train]
    u_x = (usps_to_digits(usps_tr.x[u_train], method="histogram") / 16).astype(np.float32)
    cnns = _digit_cnns("usps8x8-hist", u_x, usps_tr.y[u_train], n_train=n_train, epochs=p.digits_epochs, seed=seed)
    u_order = np.random.default_rng(seed).permutation(len(usps.y))
    u_ref, u_pool = u_order[:n_ref], u_order[n_ref:]
    hist = usps_to_digits(usps.x, method="histogram")
    specs = _digit_specs(p) + [ShiftSpec("sklearn-digits", "unseen", "natural", (), 0)]
    predictors = _digit_predictors("usps-cnn", cnns)
    return Setup(
        "usps_to_digits", specs,
        inputs=lambda s: digits.x if s.family == "natural" else apply_image_shift(hist[u_pool], s, value_range=(0, 16)),
        labels=lambda s: digits.y if s.family == "natural" else usps.y[u_pool],
        predictors=predictors, reference_inputs=hist[u_ref], reference_labels=usps.y[u_ref],
        key=dict(data="usps8x8-hist", seed=seed, train=n_train, ref=n_ref, ep=p.digits_epochs, init=True),
        models={n: cnns[s] for n, s in zip(predictors, cnns)},
    )  # fmt: skip


# --------------------------------------------------------------------------------------------------------- text
def text_setup(p: MdeSettings | Mapping[str, Any]) -> Setup:
    """IMDb sentiment models ``p.text_models`` of :func:`helpers.models.zoo.train_text_classifier`: MiniLM
    models on the first ``text_minilm_n_train`` training reviews (first ``text_minilm_max_tokens`` WordPiece
    tokens), word-level models on ``text_n_train``; meta-set = perturbed IMDb test reviews; unseen natural shifts:
    RT sentence polarity, NLTK movie reviews and four Amazon domains, ``text_n_per_set`` texts each."""
    p = mde_settings(p)
    from helpers.data import load
    from helpers.models.text import Vocab
    from helpers.models.zoo import text_train_settings, train_text_classifier
    from helpers.paths import cache_dir

    seed, n_set, n_ref, epochs = p.seed, p.text_n_per_set, p.text_n_reference, p.text_epochs
    imdb_train, imdb_test = load("imdb", split="train"), load("imdb", split="test")
    tr = imdb_train.sample(n=min(max(p.text_n_train, p.text_minilm_n_train), len(imdb_train)), random_state=seed)
    te = imdb_test.sample(n=n_set + n_ref, random_state=seed)
    t_pool, t_ref = te.iloc[:n_set], te.iloc[n_set:]
    vocab = Vocab.build(tr.text.iloc[: p.text_n_train], min_freq=3, max_size=20000)

    def trained(name: str):
        big = name.startswith("minilm")
        t_tr = tr.iloc[: p.text_minilm_n_train if big else p.text_n_train]
        key = f"05_mde/imdb-{name}-seed{seed}-n{len(t_tr)}-e{epochs}-v{len(vocab)}-init-{_code()}"
        ckpt = cache_dir() / "checkpoints" / (key + (f"-t{p.text_minilm_max_tokens}" if big else ""))
        settings = text_train_settings(name, epochs=epochs, seed=seed, checkpoint_dir=ckpt)
        return train_text_classifier(
            name, t_tr.text, t_tr.label, settings, vocab=vocab, cache_namespace=CACHE_NAMESPACE,
            **({"max_len": p.text_minilm_max_tokens} if big else {}),
        )[1]  # fmt: skip

    models = {name: _lazy(lambda name=name: trained(name)) for name in p.text_models}
    natural = {"rt_polarity": load("rt_polarity"), "movie_reviews": load("movie_reviews")}
    natural.update({f"amazon-{d}": load("amazon", domain=d) for d in ["books", "dvd", "electronics", "kitchen"]})
    natural = {k: v.sample(n=min(n_set, len(v)), random_state=seed) for k, v in natural.items()}
    specs = _text_specs(p) + [ShiftSpec(name, "unseen", "natural", (), 0) for name in natural]
    pool_texts, pool_y = list(t_pool.text), t_pool.label.to_numpy()
    return Setup(
        "text", specs,
        inputs=lambda s: list(natural[s.name].text) if s.family == "natural" else apply_text_shift(pool_texts, s),
        labels=lambda s: natural[s.name].label.to_numpy() if s.family == "natural" else pool_y,
        predictors={name: (lambda xs, m=m: m()(xs)) for name, m in models.items()},
        reference_inputs=list(t_ref.text), reference_labels=t_ref.label.to_numpy(),
        key={"data": "imdb", "seed": seed, "n": n_set, "train": len(tr), "ep": epochs, "v": len(vocab),
             "minilm": [p.text_minilm_n_train, p.text_minilm_max_tokens], "init": True},
        models=models,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------ parallel units
#: every setup by its name (the ``setup`` column)
SETUPS: dict[str, Callable[[MdeSettings | Mapping[str, Any]], Setup]] = {
    "cifar10": cifar_setup, "digits": digits_setup, "usps_to_digits": usps_setup, "text": text_setup,
}  # fmt: skip


#: units per setup in :func:`precompute_outputs` (CIFAR-10's sets are the longest part of notebook 05: four blocks
#: keep both workers busy beside other notebooks' units; each block corrupts its sets once for all backbones)
BLOCKS = {"cifar10": 4}


def _outputs_unit(job: tuple[str, MdeSettings, tuple[int, int]]) -> None:
    name, p, block = job
    SETUPS[name](p).outputs(block=block, progress=False)


def precompute_outputs(p: MdeSettings | Mapping[str, Any], setups: Sequence[str] = tuple(SETUPS), *, progress: bool = True) -> None:
    """Every model output of ``setups`` (sets and reference, each setup's models trained or restored on the way)
    into the cache, one unit per setup (:data:`BLOCKS` units for CIFAR-10) on the executor's workers
    (:func:`helpers.parallel.map_units`).

    Units split a setup's sets, never its models: a set's corrupted inputs are built once for all of a setup's
    models.  The notebook's :meth:`Setup.frame` calls then read the outputs back; notebook 06 reads the same entries.
    """
    from helpers.parallel import map_units

    p = mde_settings(p)
    unknown = sorted(set(setups) - set(SETUPS))
    if unknown:
        raise InputValidationError(f"setups: unknown {unknown}; expected some of {list(SETUPS)}")
    jobs = [(n, p, (i, BLOCKS.get(n, 1))) for n in setups for i in range(BLOCKS.get(n, 1))]
    names = [n if b == 1 else f"{n} {i + 1}/{b}" for n, _, (i, b) in jobs]
    map_units(_outputs_unit, jobs, names=names, desc="setup outputs", progress=progress)
