"""Benchmark blocks built from other notebooks' outputs: seq2seq bounds rows (hand-computed) and RI/RM intervals."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from helpers.benchmark import BenchmarkResult
from helpers.errors import InputValidationError
from helpers.experiments.p6_benchmark.selftrain import _boot_flags, selftraining_grid
from helpers.experiments.p6_benchmark.seq2seq_block import seq2seq_rows


def _set(name, shift, conf, correct, votes):
    correct = np.asarray(correct, dtype=bool)
    return SimpleNamespace(name=name, shift=shift, confidence=np.asarray(conf, float), correct=correct,
                           votes=np.asarray(votes, int), accuracy=float(correct.mean()))  # fmt: skip


def test_seq2seq_rows_bounds_and_baselines_by_hand():
    dev = _set("dev", "id", [0.9, 0.8, 0.3, 0.2], [1, 1, 0, 0], np.ones((4, 2)))
    # 4 examples, 2 discriminators: any-Correct (upper) = 3/4, all-Correct (lower) = 1/4, mean_discrim = 4/8
    ood = _set("ood", "ood", [0.6, 0.6, 0.6, 0.6], [1, 1, 0, 0], [[1, 1], [1, 0], [0, 1], [0, 0]])
    result = SimpleNamespace(task="scan", dev=dev, sets={"ood": ood})
    df = seq2seq_rows(result, n_boot=50).set_index("method")
    assert set(df["family"]) == {"seq2seq"}
    assert df.loc["discriminator_mean_bounds", "lower"] == pytest.approx(0.25)
    assert df.loc["discriminator_mean_bounds", "upper"] == pytest.approx(0.75)
    assert df.loc["discriminator_mean_bounds", "estimate"] == pytest.approx(0.5)
    assert df.loc["discriminator_mean_discrim", "estimate"] == pytest.approx(0.5)
    assert bool(df.loc["discriminator_mean_bounds", "covered"])  # gold 0.5 in [0.25, 0.75]
    assert df.loc["discriminator_mean_bounds", "width"] == pytest.approx(0.5)
    # average confidence 0.6 (constant: zero-width bootstrap); DoC: 0.6 - (0.55 - 0.5) = 0.55
    assert df.loc["average_confidence", "estimate"] == pytest.approx(0.6)
    assert df.loc["doc", "estimate"] == pytest.approx(0.55)
    assert df.loc["maxprob", "estimate"] == pytest.approx(1.0)
    assert df.loc["doc", "set"] == "ood (ood)"
    assert BenchmarkResult(df.reset_index()).mae().loc["doc", "seq2seq"] == pytest.approx(0.05)


def test_boot_flags_interval_contains_point_and_shrinks_with_n():
    small = np.r_[np.ones(20), np.zeros(80)].astype(bool)
    big = np.tile(small, 20)
    lo_s, hi_s = _boot_flags(small, n_boot=500, level=0.95, seed=0)
    lo_b, hi_b = _boot_flags(big, n_boot=500, level=0.95, seed=0)
    assert lo_s <= 0.8 <= hi_s and lo_b <= 0.8 <= hi_b
    assert (hi_b - lo_b) < (hi_s - lo_s) / 2


def test_selftraining_grid_rejects_unknown_pairs():
    pair = SimpleNamespace(source="books", target="dvd")
    with pytest.raises(InputValidationError, match="not among the pairs"):
        selftraining_grid([pair], SimpleNamespace(ens_size=1), family="amazon", self_training_pairs=["dvd->books"])
    with pytest.raises(InputValidationError, match="ens_size"):
        selftraining_grid([pair], SimpleNamespace(ens_size=0), family="amazon")


def test_mde_scatter_limits_stay_within_percent_range():
    import matplotlib.pyplot as plt
    import pandas as pd

    from helpers.experiments.p5_mde.measures import scatter_with_fit

    frame = pd.DataFrame(
        {"MDE": [0.0, 0.1, 0.2, 0.3, 0.4], "accuracy": [0.99, 0.6, 0.98, 0.55, 0.57],
         "split": ["fit"] * 4 + ["heldout"]}
    )  # fmt: skip
    fig, ax = plt.subplots()
    scatter_with_fit(ax, frame, measure="MDE")
    lo, hi = ax.get_ylim()
    assert 0.0 <= lo < 55.0 and 99.0 < hi <= 100.0
    plt.close(fig)


def _toy_text_pair():
    """A 2-class text pair whose features are (share of 'good' words, 1): perturbing texts moves the features."""
    from helpers.experiments.p3_selftraining import DomainPair

    def featurize(texts):
        share = [sum(w == "good" for w in t.split()) / max(1, len(t.split())) for t in texts]
        return np.c_[np.asarray(share) * 4 - 1, np.ones(len(texts))].astype(np.float32)

    rng = np.random.default_rng(0)

    def texts(n):
        y = rng.integers(0, 2, n)
        words = [["good" if rng.random() < (0.8 if c else 0.2) else "bad" for _ in range(8)] for c in y]
        return [" ".join(w) for w in words], y.astype(np.int64)

    (ttr, ytr), (tho, yho), (tt, yt) = texts(64), texts(40), texts(30)
    pair = DomainPair("toy", "a", "b", featurize(ttr), ytr, featurize(tho), yho, featurize(tt), yt, 2,
                      raw_heldout=tho, featurize=featurize)  # fmt: skip
    return pair


def test_selftraining_grid_meta_set_from_the_held_out_source_part(monkeypatch):
    import helpers.experiments.p3_selftraining as ex
    from helpers.data.metaset import ShiftSpec, apply_image_shift, text_metaset
    from helpers.experiments.p6_benchmark.selftrain import shifted_heldout

    cfg = ex.RunConfig(typical_model="mlp", dann_model="dann_mlp", f_epochs=2, batch_size=32, ens_size=1,
                       model_kwargs={"mlp": {"in_features": 2, "hidden": 8}})  # fmt: skip
    pair = _toy_text_pair()
    specs = [s for s in text_metaset(fit_names=["word_dropout"], severities=[1, 3, 5], seed=0) if s.split == "fit"]
    task = selftraining_grid([pair], cfg, family="toy", meta_specs=specs).tasks[0]
    assert sorted(task.meta) == sorted(s.name for s in specs) and len(task.meta) == 4
    # the clean spec leaves the texts as they are: its meta set is the reference, model outputs included
    np.testing.assert_allclose(task.meta["clean"].logits, task.reference.logits, atol=1e-6)
    np.testing.assert_array_equal(task.meta["clean"].labels, pair.y_heldout)
    assert set(task.meta) <= set(task.partner) and task.info["meta_sets"] == 4
    # word dropout at severity 5 really changed the model inputs of the held-out part
    heavy = next(s for s in specs if s.steps == (("word_dropout", 5),))
    assert not np.allclose(shifted_heldout(pair, heavy), pair.x_heldout)
    # the outputs are cached: a second call runs neither model
    from helpers.experiments.p6_benchmark.selftrain import _meta_outputs

    class Boom:
        def __call__(self, *a, **k):
            raise AssertionError("recomputed")

    again = _meta_outputs(pair, cfg, Boom(), Boom(), specs)
    np.testing.assert_allclose(again["f/clean"], task.meta["clean"].logits)
    # images (no raw inputs kept): the [0, 1] held-out images corrupted by 05's generator
    x = np.random.default_rng(1).random((5, 8, 8), dtype=np.float32)
    y = np.zeros(5, dtype=np.int64)
    img = ex.DomainPair("toy", "a", "b", x, y, x, y, x, y, 10)
    spec = ShiftSpec("noise-3", "fit", "corruption", (("gaussian_noise", 3),), 7)
    np.testing.assert_allclose(shifted_heldout(img, spec), apply_image_shift(x, spec, value_range=(0, 1)))
    assert not np.allclose(shifted_heldout(img, spec), x)
    # features without raw inputs cannot be shifted: a clear error, not a corruption-module shape error
    flat = ex.DomainPair("toy", "a", "b", x[:, 0], y, x[:, 0], y, x[:, 0], y, 10)
    with pytest.raises(InputValidationError, match="raw_heldout"):
        shifted_heldout(flat, spec)


def test_metaset_specs_are_notebook_05s_fit_sets():
    from helpers.experiments import p5_mde as me

    p5 = me.notebook_parameters("smoke")
    digits = me.metaset_specs(p5, "digits")
    assert digits and {s.split for s in digits} == {"fit"}
    assert digits == [s for s in me.digits_setup(p5).specs if s.split == "fit"]
    text = me.metaset_specs(p5, "text")
    assert {step[0] for s in text for step in s.steps} <= set(p5.text_fit_names)
    with pytest.raises(InputValidationError, match="modality"):
        me.metaset_specs(p5, "audio")


@pytest.mark.slow
def test_selftraining_grid_by_source_equals_one_call_over_all_pairs(monkeypatch):
    """One unit per source (here in this process, HELPERS_WORKERS=1) gives the tasks and rows of one call."""
    from conftest import shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("real data not found: set HELPERS_DATA (USPS)")
    from helpers import parallel
    from helpers.experiments.p3_selftraining import digits_pairs
    from helpers.experiments.p6_benchmark.selftrain import digits_config, selftraining_grid_by_source

    monkeypatch.setenv("HELPERS_WORKERS", "1")
    monkeypatch.setattr(parallel, "_NOTEBOOK_EXECUTOR", None)
    names = ["digits->usps", "usps->digits", "digits->contrast:5"]
    cfg = digits_config(f_epochs=1, dann_epochs=1, num_models=1, rounds=1, ens_size=1)
    kw = dict(family="digits-usps", n_boot=20, seed=0)
    one = selftraining_grid(digits_pairs(targets=names, seed=0), cfg, self_training_pairs=["usps->digits"], **kw)
    by = selftraining_grid_by_source("digits", names, cfg, load_kwargs={"seed": 0},
                                     self_training_pairs=["usps->digits"], progress=False, **kw)  # fmt: skip
    assert [t.name for t in by.tasks] == [t.name for t in one.tasks] == ["digits-usps/digits/cnn_bn", "digits-usps/usps/cnn_bn"]
    for a, b in zip(one.tasks, by.tasks):
        assert list(a.targets) == list(b.targets)
        for name in a.targets:
            np.testing.assert_array_equal(a.targets[name].logits, b.targets[name].logits)
    cols = [c for c in one.rows.columns if c != "seconds"]
    pd.testing.assert_frame_equal(one.rows[cols], by.rows[cols])
    with pytest.raises(InputValidationError, match="not among the pairs"):
        selftraining_grid_by_source("digits", names, cfg, self_training_pairs=["digits->mnist"])
    with pytest.raises(InputValidationError, match="kind: expected 'amazon' or 'digits'"):
        selftraining_grid_by_source("mnist", names, cfg)


def test_pre_registered_families_of_cifar_sets_and_the_jpeg_rule():
    """cifar_family: CIFAR-10-C's own category of a single held-out type, compositions and stress sets apart;
    jpeg_sets: clean + the first held-out type per category at severity 3 (else the middle held-out severity)."""
    from helpers.data.metaset import ShiftSpec
    from helpers.experiments.p6_benchmark.beyond import FAMILIES
    from helpers.experiments.p6_benchmark.producers import cifar_family, jpeg_sets

    def spec(name, family, steps):
        return ShiftSpec(name, "heldout", family, steps, 0)

    assert cifar_family(spec("impulse_noise-2", "corruption", (("impulse_noise", 2),))) == "cifar-noise"
    assert cifar_family(spec("zoom_blur-5", "corruption", (("zoom_blur", 5),))) == "cifar-blur"
    assert cifar_family(spec("spatter-1", "corruption", (("spatter", 1),))) == "cifar-weather"
    assert cifar_family(spec("saturate-3", "corruption", (("saturate", 3),))) == "cifar-digital"
    assert cifar_family(spec("comp-heldout-00", "composition", (("spatter", 1), ("zoom_blur", 2)))) == "cifar-composition"
    assert cifar_family(spec("stress-cutout-B@clean", "stress", (("cutout", 2),))) == "cifar-stress"
    with pytest.raises(InputValidationError, match="no CIFAR-10-C category"):
        cifar_family(spec("rotate-1", "corruption", (("rotate", 1),)))
    assert {"cifar-noise", "cifar-blur", "cifar-weather", "cifar-digital"} <= set(FAMILIES) and len(FAMILIES) >= 9
    from helpers.experiments.p5_mde.setups import notebook_parameters

    default = notebook_parameters("default")
    assert default.cifar_heldout_names == ["impulse_noise", "speckle_noise", "glass_blur", "zoom_blur", "gaussian_blur",
                                           "spatter", "saturate"] and default.cifar_heldout_severities == [1, 2, 3, 4, 5]  # fmt: skip
    assert jpeg_sets(default) == ["clean", "impulse_noise-3", "glass_blur-3", "spatter-3", "saturate-3"]
    other = dataclasses.replace(default, cifar_heldout_names=["zoom_blur", "saturate"], cifar_heldout_severities=[4, 2])
    assert jpeg_sets(other) == [
        "clean", "zoom_blur-4", "saturate-4"]  # fmt: skip


def test_label_shift_tasks_resample_the_reference_and_keep_model_reference_and_meta_set():
    """label_shift_tasks: targets are long-tailed subsets of the clean reference (ratios < 1 only, smallest /
    largest class size = the ratio), partner / features follow the same rows; reference and meta-set unchanged."""
    from helpers.benchmark import ShiftTask
    from helpers.experiments.p6_benchmark.producers import label_shift_tasks

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(4), 50)
    ref = (rng.normal(size=(200, 4)), y)
    meta = {f"m{i}": (rng.normal(size=(200, 4)), y) for i in range(3)}
    sets = {"reference": 0, "t": 0, **dict.fromkeys(meta, 0)}
    task = ShiftTask(name="cifar10/resnet20", family="cifar-corruption", reference=ref, targets={"t": ref},
                     meta=meta, partner={k: rng.normal(size=(200, 4)) for k in sets},
                     features={k: rng.normal(size=(200, 3)) for k in sets}, info={"model": "resnet20"})  # fmt: skip
    other = ShiftTask(name="cifar10/resnet32", family="cifar-corruption", reference=ref, targets={"t": ref},
                      info={"model": "resnet32"})  # fmt: skip
    (out,) = label_shift_tasks([task, other], [0.25, 1.0], seed=0)
    assert out.name == "cifar10-labels/resnet20" and out.family == "label-shift" and list(out.targets) == ["imbalance-0.25"]
    t = out.targets["imbalance-0.25"]
    counts = np.bincount(t.labels, minlength=4)
    assert counts.min() / counts.max() == pytest.approx(0.25, abs=0.03)
    rows = [np.flatnonzero((ref[0] == row).all(axis=1))[0] for row in t.logits]  # which reference rows were kept
    assert np.array_equal(out.partner["imbalance-0.25"], task.partner["reference"][rows])
    assert np.array_equal(out.features["imbalance-0.25"], task.features["reference"][rows])
    assert out.meta.keys() == task.meta.keys() and out.reference is task.reference and "t" not in out.partner
