"""ShiftTasks of the benchmark grid from the project's real data and models (notebook 05's machinery).

Each producer rebuilds notebook 05's sets with :mod:`helpers.data.metaset` and collects the model outputs with
:func:`helpers.experiments.p5_mde.collect_outputs` under **the same cache keys as notebook 05** (namespace ``05_mde``, key
parts data/seed/set size/..., one entry per (predictor, set)), so with notebook 05's parameters (the defaults
here) a main-job run of notebook 06 reads 05's predictions instead of recomputing them, and a run of 06 alone
computes (and caches) only the sets it uses.  Models are built, trained (checkpointed under the same names as
05's) and run lazily: only when some set's outputs are missing from the cache.

Families
--------
``cifar-corruption``  pretrained CIFAR-10 ResNets; meta-set = the fit corruption types at every severity and their
                      compositions (05's ``fit`` split); targets = held-out corruption types and compositions and
                      the strong-noise stress sets (05's ``heldout`` and ``unseen`` splits); partner = the next
                      ResNet (agreement); features = penultimate activations (Fréchet).
``digits-usps``       small CNNs on sklearn 8x8 digits -> USPS at 8x8 (two intensity maps) and CNNs on USPS at 8x8
                      -> sklearn digits; meta-set = corrupted source-domain images; partner = the other seed.
``imdb``              light IMDb sentiment models (bag of words, mean of embeddings); meta-set = perturbed IMDb
                      test reviews; targets = RT polarity, NLTK movie reviews, four Amazon domains.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from helpers.benchmark.task import LabelledLogits, ShiftTask

__all__ = ["cifar_tasks", "digits_tasks", "text_tasks", "CIFAR_FIT_NAMES", "CIFAR_HELDOUT_NAMES"]

#: notebook 05's default corruption split (fit types build the meta-set; held-out types are targets)
CIFAR_FIT_NAMES = (
    "gaussian_noise", "shot_noise", "defocus_blur", "motion_blur", "snow", "frost", "fog",
    "brightness", "contrast", "elastic_transform", "pixelate", "jpeg_compression",
)  # fmt: skip
CIFAR_HELDOUT_NAMES = (
    "impulse_noise", "speckle_noise", "glass_blur", "zoom_blur", "gaussian_blur", "spatter", "saturate",
)  # fmt: skip


def _lazy(make: Callable[[], Any]) -> Callable[[], Any]:
    """``make()`` called once, on first use."""
    memo: dict[str, Any] = {}

    def get() -> Any:
        if "v" not in memo:
            memo["v"] = make()
        return memo["v"]

    return get


def _collect(specs, *, inputs, predictors, reference_inputs, key, progress) -> tuple[dict, dict]:
    """Outputs per predictor and set, and on the reference, exactly as :func:`helpers.experiments.p5_mde.metaset_frame`."""
    from helpers.data.metaset import ShiftSpec
    from helpers.experiments import p5_mde as me

    out = me.collect_outputs(specs, inputs=inputs, predictors=predictors, key=key, progress=progress)
    ref_spec = ShiftSpec("reference", "reference", "clean", (), 0)
    ref = me.collect_outputs(
        [ref_spec],
        inputs=lambda s: reference_inputs() if callable(reference_inputs) else reference_inputs,
        predictors=predictors,
        key={**key, "part": "reference"},
        progress=False,
    )
    return out, {p: ref[p]["reference"] for p in predictors}


def _build_tasks(
    *,
    family: str,
    prefix: str,
    specs: Sequence,
    outputs: Mapping,
    ref_outputs: Mapping,
    labels: Callable[[Any], np.ndarray],
    reference_labels: np.ndarray,
    meta_splits: Sequence[str],
    target_splits: Sequence[str],
    info: Mapping[str, Any],
    use_features: bool = True,
) -> list[ShiftTask]:
    """One ShiftTask per predictor; the partner (agreement) is the next predictor, cyclically."""
    names = list(outputs)
    partners = {b: names[(i + 1) % len(names)] for i, b in enumerate(names)} if len(names) > 1 else {}
    meta_specs = [s for s in specs if s.split in meta_splits]
    target_specs = [s for s in specs if s.split in target_splits]
    all_names = ["reference"] + [s.name for s in meta_specs + target_specs]
    tasks = []
    for b in names:

        def sets(ss, b=b):
            return {s.name: LabelledLogits(outputs[b][s.name]["logits"], labels(s)) for s in ss}

        def arrays(pred: str, what: str, ref=ref_outputs) -> dict[str, np.ndarray]:
            return {n: (ref[pred] if n == "reference" else outputs[pred][n])[what] for n in all_names}

        partner = arrays(partners[b], "logits") if b in partners else {}
        has_features = use_features and "features" in ref_outputs[b]
        tasks.append(
            ShiftTask(
                name=f"{prefix}/{b}",
                family=family,
                reference=LabelledLogits(ref_outputs[b]["logits"], reference_labels),
                targets=sets(target_specs),
                meta=sets(meta_specs),
                partner=partner,
                features=arrays(b, "features") if has_features else {},
                info={**info, "model": b, "partner": partners.get(b)},
            )
        )
    return tasks


def cifar_tasks(
    *,
    backbones: Sequence[int] = (20, 32),
    n_per_set: int = 250,
    n_reference: int = 1000,
    fit_names: Sequence[str] = CIFAR_FIT_NAMES,
    heldout_names: Sequence[str] = CIFAR_HELDOUT_NAMES,
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    heldout_severities: Sequence[int] = (3,),
    n_compositions: int = 4,
    n_heldout_compositions: int = 3,
    stress_names: Sequence[str] = ("cutout", "shear", "equalize", "color_temperature"),
    stress_bases: Sequence[str] = ("clean", "zoom_blur-3"),
    stress_levels: Sequence[int] = (2,),
    batch_size: int = 500,
    seed: int = 0,
    progress: bool = True,
) -> list[ShiftTask]:
    """CIFAR-10 ResNets x corruption shifts (family ``cifar-corruption``); defaults = notebook 05's defaults."""
    from helpers.data import load
    from helpers.data.metaset import apply_image_shift, image_metaset
    from helpers.models.resnet_cifar import cifar_preprocess, load_cifar_resnet
    from helpers.training import features_and_logits

    cifar = load("cifar10_jpeg")
    order = np.random.default_rng(seed).permutation(len(cifar.y))
    ref_idx, pool = order[:n_reference], order[n_reference : n_reference + n_per_set]
    specs = image_metaset(
        fit_names=fit_names,
        heldout_names=heldout_names,
        severities=severities,
        heldout_severities=heldout_severities,
        n_compositions=n_compositions,
        n_heldout_compositions=n_heldout_compositions,
        stress_names=stress_names,
        stress_bases=stress_bases,
        stress_levels=stress_levels,
        seed=seed,
    )
    predictors = {}
    for d in backbones:
        model = _lazy(lambda d=d: load_cifar_resnet(d))
        predictors[f"resnet{d}"] = lambda x, m=model: features_and_logits(
            m(), x, batch_size=batch_size, preprocess=cifar_preprocess
        )
    key = {"data": "cifar10_jpeg", "seed": seed, "n": n_per_set, "n_ref": n_reference}
    out, ref = _collect(
        specs,
        inputs=lambda s: apply_image_shift(cifar.x[pool], s),
        predictors=predictors,
        reference_inputs=cifar.x[ref_idx],
        key=key,
        progress=progress,
    )
    return _build_tasks(
        family="cifar-corruption",
        prefix="cifar10",
        specs=specs,
        outputs=out,
        ref_outputs=ref,
        labels=lambda s: cifar.y[pool],
        reference_labels=cifar.y[ref_idx],
        meta_splits=("fit",),
        target_splits=("heldout", "unseen"),
        info={"data": "CIFAR-10 test (JPEG)", "n_per_set": n_per_set},
    )


def _digit_cnns(prefix: str, x: np.ndarray, y: np.ndarray, *, n_train: int, epochs: int, seed: int) -> dict:
    """Lazily trained 8x8 CNNs (seeds ``seed`` and ``seed + 1``), checkpointed under notebook 05's names."""
    from helpers.models import build_model
    from helpers.paths import cache_dir
    from helpers.training import fit

    def make(s: int):
        m = build_model("cnn", seed=s)
        ckpt = cache_dir() / "checkpoints" / f"05_mde/{prefix}-cnn-seed{s}-n{n_train}-e{epochs}-init"
        fit(m, (x, y), epochs=epochs, seed=s, lr=2e-3, checkpoint_dir=ckpt, progress=False)
        return m.eval()

    return {s: _lazy(lambda s=s: make(s)) for s in (seed, seed + 1)}


def _digit_direction(
    *, prefix, model_name, cnns, fit_specs, natural, pool, reference, key, info, progress
) -> list[ShiftTask]:
    """One digits direction: 8x8 CNNs (0..16 pixel scale) on the meta-set of ``pool`` and the natural target sets.

    ``natural`` maps a set name to (images, labels); ``pool`` / ``reference`` are (images, labels) on the 0..16
    scale.  Cache keys are notebook 05's (``key`` + predictor + set).
    """
    from helpers.data.metaset import ShiftSpec, apply_image_shift
    from helpers.training import features_and_logits

    predictors = {
        f"{model_name}-seed{s}": (lambda x, m=m: features_and_logits(m(), (x / 16).astype(np.float32)))
        for s, m in cnns.items()
    }
    specs = fit_specs + [ShiftSpec(n, "unseen", "natural", (), 0) for n in natural]
    out, ref_out = _collect(
        specs,
        inputs=lambda s: (
            natural[s.name][0] if s.family == "natural" else apply_image_shift(pool[0], s, value_range=(0, 16))
        ),
        predictors=predictors,
        reference_inputs=reference[0],
        key=key,
        progress=progress,
    )
    return _build_tasks(
        family="digits-usps",
        prefix=prefix,
        specs=specs,
        outputs=out,
        ref_outputs=ref_out,
        labels=lambda s: natural[s.name][1] if s.family == "natural" else pool[1],
        reference_labels=reference[1],
        meta_splits=("fit",),
        target_splits=("unseen",),
        info=info,
    )


def digits_tasks(
    *,
    n_train: int = 1000,
    n_reference: int = 300,
    epochs: int = 15,
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    n_compositions: int = 8,
    fit_names: Sequence[str] = CIFAR_FIT_NAMES,
    heldout_names: Sequence[str] = CIFAR_HELDOUT_NAMES,
    usps_n_train: int = 2000,
    usps_n_reference: int = 300,
    directions: Sequence[str] = ("digits->usps", "usps->digits"),
    seed: int = 0,
    progress: bool = True,
) -> list[ShiftTask]:
    """Digits <-> USPS at 8x8 (family ``digits-usps``); defaults = notebook 05's defaults.

    Targets are the natural shifts only (``usps-histogram`` / ``usps-linear`` for digits->usps,
    ``sklearn-digits`` for usps->digits); the meta-set is 05's ``fit`` split of corrupted source images.
    """
    from helpers.data import load, usps_to_digits
    from helpers.data.metaset import image_metaset
    from helpers.errors import InputValidationError

    bad = sorted(set(directions) - {"digits->usps", "usps->digits"})
    if bad:
        raise InputValidationError(f"directions: expected 'digits->usps' and/or 'usps->digits', got {bad}")
    digits = load("digits")
    usps = load("usps", part="test")
    base_specs = image_metaset(
        fit_names=fit_names,
        heldout_names=heldout_names,
        severities=severities,
        n_compositions=n_compositions,
        n_heldout_compositions=max(1, n_compositions // 2),
        seed=seed,
    )
    fit_specs = [s for s in base_specs if s.split == "fit"]
    usps_x = {"usps-histogram": usps_to_digits(usps.x, method="histogram"), "usps-linear": usps_to_digits(usps.x)}
    tasks: list[ShiftTask] = []

    if "digits->usps" in directions:
        order = np.random.default_rng(seed).permutation(len(digits.y))
        tr, ref = order[:n_train], order[n_train : n_train + n_reference]
        pool = order[n_train + n_reference :]
        cnns = _digit_cnns(
            "digits", (digits.x[tr] / 16).astype(np.float32), digits.y[tr], n_train=n_train, epochs=epochs, seed=seed
        )
        tasks += _digit_direction(
            prefix="digits->usps", model_name="cnn", cnns=cnns, fit_specs=fit_specs,
            natural={n: (x, usps.y) for n, x in usps_x.items()},
            pool=(digits.x[pool], digits.y[pool]), reference=(digits.x[ref], digits.y[ref]),
            key=dict(data="digits", seed=seed, train=n_train, ref=n_reference, ep=epochs, init=True),
            info={"data": "sklearn digits -> USPS 8x8"}, progress=progress,
        )  # fmt: skip
    if "usps->digits" in directions:
        usps_tr = load("usps", part="train")
        u_train = np.random.default_rng(seed).permutation(len(usps_tr.y))[:usps_n_train]
        u_x = (usps_to_digits(usps_tr.x[u_train], method="histogram") / 16).astype(np.float32)
        cnns = _digit_cnns(
            "usps8x8-hist", u_x, usps_tr.y[u_train], n_train=usps_n_train, epochs=epochs, seed=seed
        )
        u_order = np.random.default_rng(seed).permutation(len(usps.y))
        u_ref, u_pool = u_order[:usps_n_reference], u_order[usps_n_reference:]
        hist = usps_x["usps-histogram"]
        tasks += _digit_direction(
            prefix="usps->digits", model_name="usps-cnn", cnns=cnns, fit_specs=fit_specs,
            natural={"sklearn-digits": (digits.x, digits.y)},
            pool=(hist[u_pool], usps.y[u_pool]), reference=(hist[u_ref], usps.y[u_ref]),
            key=dict(data="usps8x8-hist", seed=seed, train=usps_n_train, ref=usps_n_reference, ep=epochs, init=True),
            info={"data": "USPS 8x8 -> sklearn digits"}, progress=progress,
        )  # fmt: skip
    return tasks


def text_tasks(
    *,
    models: Sequence[str] = ("minilm-frozen", "embsum", "bow"),
    n_train: int = 8000,
    epochs: int = 3,
    minilm_n_train: int = 2000,
    minilm_max_tokens: int = 64,
    n_per_set: int = 250,
    n_reference: int = 500,
    fit_names: Sequence[str] = ("word_dropout", "char_typos", "local_shuffle"),
    heldout_names: Sequence[str] = ("truncate", "filler_insertion"),
    severities: Sequence[int] = (1, 2, 3, 4, 5),
    heldout_severities: Sequence[int] | None = (2, 4),
    n_compositions: int = 6,
    n_heldout_compositions: int = 3,
    seed: int = 0,
    progress: bool = True,
) -> list[ShiftTask]:
    """IMDb sentiment models -> RT / NLTK movie reviews / four Amazon domains (family ``imdb``); 05's defaults.

    Mirrors notebook 05's text setup (same samples, checkpoints and output cache keys), so after 05 ran nothing
    is recomputed: ``minilm*`` models are trained on the first ``minilm_n_train`` training reviews and read the
    first ``minilm_max_tokens`` WordPiece tokens; the word-level models use ``n_train`` reviews.
    """
    from helpers.data import load
    from helpers.data.metaset import ShiftSpec, apply_text_shift, text_metaset
    from helpers.models.text import Vocab
    from helpers.models.zoo import train_text_classifier
    from helpers.paths import cache_dir

    imdb_train, imdb_test = load("imdb", split="train"), load("imdb", split="test")
    tr = imdb_train.sample(n=min(max(n_train, minilm_n_train), len(imdb_train)), random_state=seed)
    te = imdb_test.sample(n=n_per_set + n_reference, random_state=seed)
    t_pool, t_ref = te.iloc[:n_per_set], te.iloc[n_per_set:]
    vocab = Vocab.build(tr.text.iloc[:n_train], min_freq=3, max_size=20000)

    def trained(name: str):
        big = name.startswith("minilm")
        t_tr = tr.iloc[: minilm_n_train if big else n_train]
        key = f"05_mde/imdb-{name}-seed{seed}-n{len(t_tr)}-e{epochs}-v{len(vocab)}-init"
        ckpt = cache_dir() / "checkpoints" / (key + (f"-t{minilm_max_tokens}" if big else ""))
        return train_text_classifier(
            name, t_tr.text, t_tr.label, vocab=vocab, epochs=epochs, seed=seed, checkpoint_dir=ckpt,
            **({"max_len": minilm_max_tokens} if big else {}),
        )[1]

    predictors = {}
    for name in models:
        fn = _lazy(lambda name=name: trained(name))
        predictors[name] = lambda xs, fn=fn: fn()(xs)
    natural = {"rt_polarity": load("rt_polarity"), "movie_reviews": load("movie_reviews")}
    natural.update({f"amazon-{d}": load("amazon", domain=d) for d in ["books", "dvd", "electronics", "kitchen"]})
    natural = {k: v.sample(n=min(n_per_set, len(v)), random_state=seed) for k, v in natural.items()}
    specs = text_metaset(
        fit_names=fit_names,
        heldout_names=heldout_names,
        severities=severities,
        heldout_severities=heldout_severities,
        n_compositions=n_compositions,
        n_heldout_compositions=n_heldout_compositions,
        seed=seed,
    ) + [ShiftSpec(name, "unseen", "natural", (), 0) for name in natural]
    specs = [s for s in specs if s.split != "heldout"]  # the benchmark uses the fit split and natural shifts
    pool_texts, pool_y = list(t_pool.text), t_pool.label.to_numpy()
    key = {"data": "imdb", "seed": seed, "n": n_per_set, "train": len(tr), "ep": epochs, "v": len(vocab),
           "minilm": [minilm_n_train, minilm_max_tokens], "init": True}  # fmt: skip
    out, ref = _collect(
        specs,
        inputs=lambda s: list(natural[s.name].text) if s.family == "natural" else apply_text_shift(pool_texts, s),
        predictors=predictors,
        reference_inputs=list(t_ref.text),
        key=key,
        progress=progress,
    )
    return _build_tasks(
        family="imdb",
        prefix="imdb",
        specs=specs,
        outputs=out,
        ref_outputs=ref,
        labels=lambda s: natural[s.name].label.to_numpy() if s.family == "natural" else pool_y,
        reference_labels=t_ref.label.to_numpy(),
        meta_splits=("fit",),
        target_splits=("unseen",),
        info={"data": "IMDb -> RT / movie reviews / Amazon", "n_per_set": n_per_set},
    )
