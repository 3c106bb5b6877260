"""Bring your own data (helpers.byod): loaders of saved logits, text files and image folders into ShiftTasks.

The datasets are generated in each test (helpers.byod.demo), so that nothing in the notebooks was written with
them in mind: a three-class "review" corpus whose target sets swap the training vocabulary for unseen synonyms,
shapes drawn in colour with noise and colour shifts, and random logits.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from helpers.benchmark.task import ShiftTask
from helpers.byod.demo import (
    logits_arrays,
    make_image_folder,
    make_logits_npz,
    make_text_csv,
    make_text_jsonl,
    text_rows,
)
from helpers.errors import DataNotFoundError, InputValidationError, UnknownNameError

# ------------------------------------------------------------------------------------------------ fixtures

FAST_TEXT = {"epochs": 6, "meta_severities": (1, 3, 5), "meta_compositions": 2}
FAST_IMAGES = {
    "epochs": 30,
    "lr": 3e-3,
    "meta_corruptions": ("gaussian_noise", "fog", "contrast"),
    "meta_compositions": 1,
}


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory):
    """A folder for the module's shared datasets and a private cache (module-scoped, so the autouse per-test
    isolation does not apply to it)."""
    base = tmp_path_factory.mktemp("byod")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HELPERS_CACHE", str(base / "cache"))
        yield base


@pytest.fixture(scope="module")
def text_task(module_dir):
    from helpers.byod import load_task

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HELPERS_CACHE", str(module_dir / "cache"))
        path = make_text_csv(module_dir / "reviews.csv")
        return load_task(path, seed=0, **FAST_TEXT)


@pytest.fixture(scope="module")
def image_task(module_dir):
    from helpers.byod import load_task

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HELPERS_CACHE", str(module_dir / "cache"))
        root = make_image_folder(module_dir / "shapes", n_train=60)
        return load_task(root, seed=0, **FAST_IMAGES)


# ------------------------------------------------------------------------------------------------ saved logits


def test_logits_npz_loads_reference_targets_and_meta(tmp_path):
    from helpers.byod import load_task

    arrays = logits_arrays(k=4, n=200, n_meta=4)
    task = load_task(make_logits_npz(tmp_path / "my run.npz"), kind="logits")
    assert isinstance(task, ShiftTask) and task.family == "byod" and task.name == "byod/my run"
    assert sorted(task.targets) == ["shift_a", "shift_b"]
    assert sorted(task.meta) == [f"meta_m{i}" for i in range(4)]
    assert task.n_classes == 4
    np.testing.assert_array_equal(task.reference.labels, arrays["reference_labels"])
    y, z = arrays["shift_b_labels"], arrays["shift_b_logits"]
    assert task.true_accuracies()["shift_b"] == pytest.approx((z.argmax(1) == y).mean())
    assert task.info["kind"] == "logits" and len(task.info["sha256"]) == 64
    # the noisier set is the less accurate one: the arrays went to the right sets
    assert task.true_accuracies()["shift_a"] > task.true_accuracies()["shift_b"]


def test_logits_folder_of_npy_and_npz_equals_the_archive(tmp_path):
    from helpers.byod import load_task

    arrays = logits_arrays()
    folder = tmp_path / "saved"
    folder.mkdir()
    for key, arr in arrays.items():
        if not key.startswith("meta_"):
            np.save(folder / f"{key}.npy", arr)
    np.savez(folder / "meta.npz", **{k: v for k, v in arrays.items() if k.startswith("meta_")})
    (folder / "README.txt").write_text("ignored")
    from_folder = load_task(folder)  # auto: a folder of .npy -> logits
    from_npz = load_task(make_logits_npz(tmp_path / "a.npz"))
    assert sorted(from_folder.targets) == sorted(from_npz.targets)
    assert sorted(from_folder.meta) == sorted(from_npz.meta)
    for name in from_npz.targets:
        np.testing.assert_array_equal(from_folder.targets[name].logits, from_npz.targets[name].logits)


def test_task_from_arrays_features_and_partner_all_or_none():
    from helpers.byod import task_from_arrays

    arrays = logits_arrays(n_meta=3)
    sets = sorted({k.rsplit("_", 1)[0] for k in arrays})
    rng = np.random.default_rng(1)
    extra = {f"{s}_features": rng.normal(size=(200, 5)) for s in sets}
    extra |= {f"{s}_partner": rng.normal(size=(200, 4)) for s in sets}
    task = task_from_arrays({**arrays, **extra}, name="mine")
    assert (
        set(task.features)
        == set(task.partner)
        == {"reference", "shift_a", "shift_b", "meta_m0", "meta_m1", "meta_m2"}
    )
    partial = {**arrays, "reference_features": extra["reference_features"]}
    with pytest.raises(InputValidationError, match="features: given for some sets but missing"):
        task_from_arrays(partial)
    bad = {**arrays, **extra, "shift_a_partner": rng.normal(size=(200, 3))}
    with pytest.raises(InputValidationError, match=r"shift_a_partner: expected shape \(200, 4\)"):
        task_from_arrays(bad)


def _drop(arrays, *keys):
    return {k: v for k, v in arrays.items() if k not in keys}


def _with(arrays, **changes):
    return {**arrays, **changes}


_A = logits_arrays(n_meta=3)
_NAN = _A["shift_a_logits"].copy()
_NAN[3, 1] = np.nan


@pytest.mark.parametrize(
    "arrays, match",
    [
        (
            _drop(_A, "reference_logits", "reference_labels"),
            "missing the labelled reference set: expected keys reference_logits",
        ),
        (_drop(_A, "shift_a_logits"), "set 'shift_a': missing shift_a_logits"),
        (_with(_A, shift_a_labels=_A["shift_a_labels"][:-5]), "shift_a_labels: expected 200 labels"),
        (_with(_A, shift_b_logits=_A["shift_b_logits"][:, :3]), "shift_b_logits: expected 4 columns"),
        (_with(_A, shift_a_logits=_NAN), "shift_a_logits: expected finite values, found 1 NaN"),
        (
            _with(_A, reference_labels=_A["reference_labels"] + 7),
            r"reference_labels: expected labels in \[0, 3\]",
        ),
        (
            _with(_A, reference_logits=_A["reference_logits"][:, :1]),
            "reference_logits: expected at least 2 column",
        ),
        (_drop(_A, "meta_m2_logits", "meta_m2_labels"), "meta-set: expected none or at least 3"),
        ({k: v for k, v in _A.items() if k.startswith(("reference", "meta"))}, "no target set"),
        (_with(_A, refernce_probs=_A["reference_logits"]), r"unexpected key\(s\) \['refernce_probs'\]"),
        (
            _with(_A, shift_a_labels=_A["shift_a_labels"] + 0.5),
            "shift_a_labels: expected integer class indices",
        ),
    ],
    ids=[
        "no-reference",
        "labels-only",
        "length-mismatch",
        "class-mismatch",
        "nan",
        "label-range",
        "one-class",
        "meta-of-2",
        "no-target",
        "unknown-key",
        "float-labels",
    ],
)
def test_bad_logits_name_what_was_expected(tmp_path, arrays, match):
    from helpers.byod import load_task

    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(InputValidationError, match=match):
        load_task(tmp_path / "bad.npz")


def test_pickled_arrays_are_refused(tmp_path):
    from helpers.byod import load_task

    np.savez(tmp_path / "obj.npz", **_A, shift_c_logits=np.array([{"a": 1}], dtype=object))
    with pytest.raises(InputValidationError, match="without pickle"):
        load_task(tmp_path / "obj.npz")


def test_odd_set_names_stay_names(tmp_path):
    """Set names come from keys/splits; '../x' or 'a/b' must not become paths anywhere."""
    from helpers.byod import load_task

    arrays = _with(_drop(_A, "shift_b_logits", "shift_b_labels"))
    arrays["../../escape_logits"], arrays["../../escape_labels"] = _A["shift_b_logits"], _A["shift_b_labels"]
    arrays["a/b c_logits"], arrays["a/b c_labels"] = _A["shift_a_logits"], _A["shift_a_labels"]
    np.savez(tmp_path / "odd.npz", **arrays)
    before = sorted(p.name for p in tmp_path.parent.iterdir())
    task = load_task(tmp_path / "odd.npz")
    assert {"../../escape", "a/b c", "shift_a"} == set(task.targets)
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == before


# ------------------------------------------------------------------------------------------------ kinds and paths


def test_auto_detection(tmp_path):
    from helpers.byod import detect_kind

    assert detect_kind(make_logits_npz(tmp_path / "x.npz")) == "logits"
    assert detect_kind(make_text_csv(tmp_path / "x.csv", n_train=5, n_ref=5, n_target=5)) == "text"
    assert detect_kind(make_text_jsonl(tmp_path / "x.jsonl", n_train=5, n_ref=5, n_target=5)) == "text"
    assert detect_kind(make_image_folder(tmp_path / "imgs", n_train=1, n_other=1)) == "images"
    (tmp_path / "npy").mkdir()
    np.save(tmp_path / "npy" / "reference_logits.npy", np.zeros((2, 2)))
    assert detect_kind(tmp_path / "npy") == "logits"
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "empty").mkdir()
    for bad in (tmp_path / "notes.txt", tmp_path / "empty"):
        with pytest.raises(
            InputValidationError, match=r"expected a \.npz file or a folder of \.npy/\.npz files"
        ):
            detect_kind(bad)


def test_missing_paths_and_unknown_kind(tmp_path, monkeypatch):
    from helpers.byod import load_task

    with pytest.raises(DataNotFoundError, match="byod path is empty"):
        load_task("")
    with pytest.raises(DataNotFoundError, match="not found; looked at"):
        load_task(tmp_path / "nope.csv")
    with pytest.raises(UnknownNameError, match="expected one of: auto, images, logits, text"):
        load_task(make_logits_npz(tmp_path / "x.npz"), kind="parquet")
    with pytest.raises(InputValidationError, match="unknown option"):
        load_task(tmp_path / "x.npz", epochs=3)
    with pytest.raises(InputValidationError, match="kind='text' expects a .csv or .jsonl file"):
        load_task(tmp_path, kind="text")
    monkeypatch.chdir(tmp_path)  # a relative path is found from the current directory
    assert load_task("x.npz").name == "byod/x"


# ------------------------------------------------------------------------------------------------ text


def test_text_task_from_csv(text_task):
    task = text_task
    assert task.family == "byod" and task.name == "byod/reviews"
    assert task.info["label_names"] == ["bad", "good", "meh"]  # sorted, mapped to 0, 1, 2
    assert task.info["kind"] == "text" and task.info["n_train"] == 300
    assert list(task.targets) == ["mild", "strong", "all new words"]
    assert task.reference.n == 150 and task.n_classes == 3
    # 5 perturbations x 3 severities + 2 compositions + the clean reference
    assert len(task.meta) == 18 and "meta_word_dropout-3" in task.meta and "meta_clean" in task.meta
    assert set(task.features) == {"reference", *task.targets, *task.meta}
    acc = task.true_accuracies()
    # the model learned something (3 classes, 10 % label noise) and the unseen vocabulary hurts it
    assert task.reference.accuracy > 0.7
    assert acc["mild"] > acc["strong"] > acc["all new words"]
    assert acc["all new words"] < task.reference.accuracy - 0.25


def test_text_labels_are_the_files_labels(module_dir, text_task):
    rows = text_rows()
    ref = [r["label"] for r in rows if r["split"] == "val"]
    names = text_task.info["label_names"]
    assert [names[i] for i in text_task.reference.labels] == ref


def test_integer_labels_sort_numerically_and_jsonl_matches_csv(tmp_path):
    from helpers.byod import load_task

    rows = text_rows(n_train=120, n_ref=40, n_target=30)
    relabel = {"bad": 10, "good": 2, "meh": 1}
    rows = [{**r, "label": relabel[r["label"]]} for r in rows]
    opts = {**FAST_TEXT, "meta": False, "epochs": 2}
    a = load_task(make_text_csv(tmp_path / "r.csv", rows), **opts)
    b = load_task(make_text_jsonl(tmp_path / "r.jsonl", rows), **opts)
    assert a.info["label_names"] == b.info["label_names"] == [1, 2, 10]
    assert not a.meta
    np.testing.assert_array_equal(a.reference.labels, b.reference.labels)
    np.testing.assert_allclose(a.targets["mild"].logits, b.targets["mild"].logits, rtol=1e-5, atol=1e-6)


def _rows_small():
    return text_rows(n_train=30, n_ref=10, n_target=10)


@pytest.mark.parametrize(
    "rows, match",
    [
        (
            [{"text": r["text"], "split": r["split"]} for r in _rows_small()],
            r"missing column\(s\) \['label'\]",
        ),
        ([r for r in _rows_small() if r["split"] != "train"], "no train rows"),
        ([r for r in _rows_small() if r["split"] != "val"], r"no reference rows; expected split values"),
        ([r for r in _rows_small() if r["split"] in ("train", "val")], "no target rows"),
        (
            [{**r, "label": "good"} if r["split"] == "train" else r for r in _rows_small()],
            "train rows have a single class",
        ),
        (
            [{**r, "label": ""} if i == 3 else r for i, r in enumerate(_rows_small())],
            r"1 row\(s\) have no label",
        ),
        ([{**r, "split": " "} if i == 3 else r for i, r in enumerate(_rows_small())], "empty split value"),
        (
            [{**r, "split": "meta_clean"} if r["split"] == "mild" else r for r in _rows_small()],
            "'meta_clean' starts with 'meta_'",
        ),
    ],
    ids=[
        "no-label-column",
        "no-train",
        "no-reference",
        "no-target",
        "single-class",
        "empty-label",
        "empty-split",
        "reserved-name",
    ],
)
def test_bad_text_files(tmp_path, rows, match):
    from helpers.byod import load_task

    with pytest.raises(InputValidationError, match=match):
        load_task(make_text_csv(tmp_path / "bad.csv", rows), **FAST_TEXT)


def test_bad_text_inputs_other(tmp_path):
    from helpers.byod import load_task

    path = make_text_jsonl(tmp_path / "x.jsonl", _rows_small())
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(InputValidationError, match=r"x.jsonl, line 71: not valid JSON"):
        load_task(path)
    (tmp_path / "x.txt").write_text("text,label,split\n")
    with pytest.raises(InputValidationError, match=r"expected a .csv or .jsonl file"):
        load_task(tmp_path / "x.txt", kind="text")
    csv_path = make_text_csv(tmp_path / "ok.csv", _rows_small())
    with pytest.raises(InputValidationError, match=r"unknown option\(s\) \['epoch'\]; accepted: batch_size"):
        load_task(csv_path, epoch=3)
    with pytest.raises(InputValidationError, match="model: expected one of"):
        load_task(csv_path, model="gpt")


def test_text_cache_trains_once_and_seed_decides(tmp_path, monkeypatch):
    import helpers.byod.text as byod_text
    from helpers.byod import load_task

    calls = []
    real = byod_text._train_text_model

    def counting(*args, **kwargs):
        calls.append(kwargs["seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(byod_text, "_train_text_model", counting)
    path = make_text_csv(tmp_path / "r.csv", text_rows(n_train=150, n_ref=40, n_target=30))
    opts = {**FAST_TEXT, "meta_perturbations": ("char_typos",), "meta_compositions": 0, "epochs": 2}
    a = load_task(path, seed=0, **opts)
    b = load_task(path, seed=0, **opts)  # cached: no training
    assert calls == [0]
    np.testing.assert_array_equal(a.targets["strong"].logits, b.targets["strong"].logits)
    c = load_task(path, seed=0, refresh=True, **opts)  # retrained from scratch: same seed, same logits
    assert calls == [0, 0]
    np.testing.assert_array_equal(a.targets["strong"].logits, c.targets["strong"].logits)
    np.testing.assert_array_equal(a.meta["meta_char_typos-3"].logits, c.meta["meta_char_typos-3"].logits)
    d = load_task(path, seed=1, **opts)
    assert calls == [0, 0, 1]
    assert not np.allclose(a.targets["strong"].logits, d.targets["strong"].logits)
    load_task(path, seed=0, name="other name", progress=True, **opts)  # name, progress: not in the cache key
    assert len(calls) == 3
    path.write_text(path.read_text() + "one more review, great,good,train\n".replace(", great", " great"))
    load_task(path, seed=0, **opts)  # new content: retrained
    assert len(calls) == 4


def test_meta_n_subsamples_the_reference(tmp_path):
    from helpers.byod import load_task

    path = make_text_csv(tmp_path / "r.csv", text_rows(n_train=100, n_ref=50, n_target=20))
    task = load_task(path, **{**FAST_TEXT, "epochs": 1, "meta_n": 20})
    assert {s.n for s in task.meta.values()} == {20}
    clean = task.meta["meta_clean"]  # the untouched subset: its labels and logits are rows of the reference
    ref = task.reference
    rows = [int(np.flatnonzero((ref.logits == z).all(1))[0]) for z in clean.logits]
    np.testing.assert_array_equal(ref.labels[rows], clean.labels)
    with pytest.raises(InputValidationError, match="meta_n: expected a positive number"):
        load_task(path, **{**FAST_TEXT, "epochs": 1, "meta_n": 0})


@pytest.mark.parametrize("model", ["bow", "tfidf_mlp"])
def test_other_text_models(tmp_path, model):
    from helpers.byod import load_task

    path = make_text_csv(tmp_path / "r.csv", text_rows(n_train=200, n_ref=60, n_target=40))
    task = load_task(path, model=model, **{**FAST_TEXT, "meta": False, "epochs": 10})
    assert task.info["model"] == model
    assert task.reference.accuracy > 0.6
    assert bool(task.features) == (model == "tfidf_mlp")  # the bag of words has no penultimate layer


# ------------------------------------------------------------------------------------------------ images


def test_image_task(image_task):
    task = image_task
    assert task.info["label_names"] == ["hbar", "square", "vbar"]
    assert sorted(task.targets) == ["blue", "noisy"]
    assert task.info["image_size"] == 16 and task.info["n_train"] == 180
    assert len(task.meta) == 1 + 3 * 5 + 1  # clean, 3 corruptions x 5 severities, 1 composition
    assert task.reference.n == 45 and set(task.features) == {"reference", "blue", "noisy", *task.meta}
    acc = task.true_accuracies()
    assert task.reference.accuracy > 0.7
    assert max(acc.values()) < task.reference.accuracy  # both shifts hurt


def test_image_odd_names_grayscale_and_ignored_files(tmp_path):
    from PIL import Image

    from helpers.byod import load_task

    root = tmp_path / "gray set"
    rng = np.random.default_rng(0)
    for split in ("train", "val", "-odd target ü"):
        for cls in ("0", "10", "2"):
            d = root / split / cls
            d.mkdir(parents=True)
            for i in range(4):
                Image.fromarray(rng.integers(0, 255, (10, 12), dtype=np.uint8), mode="L").save(
                    d / f"-{i} ..ü.png"
                )
            (d / ".hidden.png").write_bytes(b"not an image, hidden so ignored")
            (d / "labels.txt").write_text("ignored")
    task = load_task(root, **{**FAST_IMAGES, "meta": False, "epochs": 1})
    assert task.info["label_names"] == ["0", "2", "10"]  # numeric class folders sort numerically
    assert list(task.targets) == ["-odd target ü"] and task.reference.n == 12
    from helpers.byod.images import read_images, scan_image_folder

    x = read_images([f for _, _, f in scan_image_folder(root)][:2], size=8)
    assert x.shape == (2, 8, 8, 1) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 1


def test_bad_image_folders(tmp_path):
    from helpers.byod import load_task

    root = make_image_folder(tmp_path / "a", n_train=2, n_other=2)
    (root / "reference" / "loose.png").write_bytes((root / "train" / "hbar" / "img 000.png").read_bytes())
    with pytest.raises(InputValidationError, match="lie directly in the split folder"):
        load_task(root, kind="images")
    root = make_image_folder(tmp_path / "b", n_train=2, n_other=2)
    for cls in ("vbar", "square"):
        for f in (root / "train" / cls).iterdir():
            f.unlink()
    with pytest.raises(InputValidationError, match="train/ has a single class folder"):
        load_task(root)
    root = make_image_folder(tmp_path / "c", n_train=2, n_other=2)
    (root / "reference").rename(root / "holdout")
    with pytest.raises(InputValidationError, match=r"no reference images; expected root/train/<class>/"):
        load_task(root)
    root = make_image_folder(tmp_path / "d", n_train=2, n_other=2)
    (root / "noisy" / "hbar" / "broken.png").write_bytes(b"\x89PNG not really")
    with pytest.raises(InputValidationError, match="broken.png: not a readable image"):
        load_task(root, **FAST_IMAGES)
    (tmp_path / "e" / "train").mkdir(parents=True)
    with pytest.raises(DataNotFoundError, match="no images found"):
        load_task(tmp_path / "e", kind="images")


# ------------------------------------------------------------------------------------------------ benchmark


def test_benchmark_runs_on_loaded_tasks(text_task, image_task):
    from helpers.benchmark import run_benchmark

    res = run_benchmark([text_task, image_task], n_boot=20, progress=False)
    df = res.to_df()
    assert set(df.task) == {"byod/reviews", "byod/shapes"} and set(df.family) == {"byod"}
    mae = df.groupby(["task", "method"]).abs_error.mean()
    for task in ("byod/reviews", "byod/shapes"):
        per = mae.loc[task]
        assert per.notna().all() and np.isfinite(per.to_numpy()).all()
        assert {"atc_mc", "doc", "mde_normalized", "nuclear_norm", "frechet"} <= set(per.index)


# ------------------------------------------------------------------------------------------------ the notebook


def test_benchmark_notebook_on_a_generated_dataset(tmp_path):
    """notebooks/06_benchmark.ipynb through papermill (the runner) on a JSONL file it was never written for."""
    import pandas as pd

    from helpers.paths import figures_dir
    from helpers.run.runner import run_notebooks

    rows = text_rows(seed=3, n_train=240, n_ref=120, n_target=80)
    rows = [{**r, "label": {"bad": -1, "meh": 0, "good": 1}[r["label"]]} for r in rows]  # integer labels
    path = make_text_jsonl(tmp_path / "my reviews.jsonl", rows)
    (run,) = run_notebooks(
        profile="smoke",
        only=["06_benchmark"],
        parameters={"byod_path": str(path), "byod_kind": "auto", "families": [], "n_boot": 20},
        echo=False,
    )
    assert run.status == "ok", f"cell {run.failed_cell}: {run.error}"
    tasks = pd.read_csv(figures_dir() / "06_benchmark_tasks.csv")
    assert tasks.task.tolist() == ["byod/my reviews"] and tasks.families.tolist() == ["byod"]
    assert tasks.targets.item() == 3 and tasks.meta_sets.item() == 31
    out = pd.read_csv(figures_dir() / "06_benchmark_rows.csv")
    out = out[out.task == "byod/my reviews"]
    assert set(out.set) == {"mild", "strong", "all new words"}
    mae = out.groupby("method").abs_error.mean()
    assert np.isfinite(mae.to_numpy()).all() and len(mae) >= 8
    # accuracy-type and meta-set-regressed methods both ran
    assert {"atc_mc", "doc", "cot", "mde_normalized", "nuclear_norm", "average_energy"} <= set(mae.index)
    truth = out.groupby("set").true_accuracy.first()
    assert truth["mild"] > truth["all new words"]
    cells = json.loads(Path(run.output).read_text(encoding="utf-8"))["cells"]
    printed = "".join("".join(o.get("text", "")) for c in cells for o in c.get("outputs", []))
    # no notice of a block this run did not ask for
    assert "seq2seq block skipped" not in printed and "this run has 1" in printed
