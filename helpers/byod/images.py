"""A folder of labelled images → trained small CNN → :class:`~helpers.benchmark.task.ShiftTask` (``kind="images"``).

Folder layout
-------------
``root/<split>/<class>/<image>`` with ``<split>`` = ``train``, ``reference`` (or ``val`` / ``validation``) or any
other name (a target set), ``<class>`` = the class name (folder names are sorted and mapped to ``0..K-1``; the list
is kept in ``task.info["label_names"]``) and images in any format Pillow reads (``.png``, ``.jpg``, ``.jpeg``,
``.bmp``, ``.gif``, ``.webp``, ``.tif``, ``.tiff``).  Hidden files and other files are ignored.

Preprocessing: every image is converted to RGB (or to grayscale when *every* image of the folder is grayscale,
``channels="auto"``), resized to ``image_size x image_size`` pixels (default 16, bilinear, aspect ratio not
kept) and scaled to [0, 1].

What happens
------------
1. the small CNN of :func:`helpers.models.build_model` (``"cnn"``, or ``"cnn_bn"``) is trained on ``train``
   (Adam, seeded, deterministic on CPU);
2. its logits and penultimate features are computed on the reference and on every target set;
3. a meta-set (paper 5, Algorithm 1) is made of seeded corruptions of the reference images
   (:func:`helpers.data.metaset.image_metaset` with the corruptions of :mod:`helpers.data.corruptions` at every
   severity, plus random compositions of two), named ``meta_<corruption>-<severity>``;
4. everything is cached with :func:`helpers.cache.cached_arrays` under a sha256 of the image files (paths and
   bytes) + options + seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from helpers.benchmark.task import ShiftTask
from helpers.byod.common import (
    check_options,
    label_map,
    meta_subset,
    pack_sets,
    progress,
    sha256_files,
    split_role,
    unpack_task,
)
from helpers.cache import cached_arrays
from helpers.errors import DataNotFoundError, InputValidationError

__all__ = ["IMAGE_SUFFIXES", "IMAGE_OPTIONS", "scan_image_folder", "read_images", "load_image_task"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")
#: Corruptions of the default image meta-set (all of CIFAR-10-C's but the colour-only ``saturate`` and the
#: slow ``glass_blur``/``frost``/``spatter``/``gaussian_blur`` near-duplicates).
DEFAULT_CORRUPTIONS = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)
#: Options of ``load_task(kind="images")`` and their defaults.
IMAGE_OPTIONS: dict[str, Any] = {
    "name": None,  # task name, default "byod/<folder name>"
    "model": "cnn",  # "cnn" or "cnn_bn"
    "image_size": 16,  # images are resized to image_size x image_size (even)
    "channels": "auto",  # "auto", 1 (grayscale) or 3 (RGB)
    "epochs": 20,
    "batch_size": 64,
    "lr": 1e-3,
    "meta": True,
    "meta_corruptions": DEFAULT_CORRUPTIONS,
    "meta_severities": (1, 2, 3, 4, 5),
    "meta_compositions": 5,
    "meta_n": None,  # reference examples per meta set (seeded subset); None: all
    "progress": True,  # tqdm bars over images read, training and meta sets (False: silent)
    "refresh": False,
}
_NOT_IN_KEY = ("name", "refresh", "progress")


def _visible(p: Path) -> bool:
    return not p.name.startswith(".")


def scan_image_folder(root: Path) -> list[tuple[str, str, Path]]:
    """``(split, class, file)`` for every image under ``root/<split>/<class>/``, sorted.

    Raises
    ------
    DataNotFoundError
        No image in the expected layout (the message shows it).
    InputValidationError
        Images lying directly in a split folder (no class folder).
    """
    found = []
    for split_dir in sorted(p for p in root.iterdir() if p.is_dir() and _visible(p)):
        loose = [f.name for f in split_dir.iterdir() if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES]
        if loose:
            raise InputValidationError(
                f"{split_dir.name}/: images {loose[:3]} lie directly in the split folder; expected "
                f"root/{split_dir.name}/<class>/<image>"
            )
        for class_dir in sorted(p for p in split_dir.iterdir() if p.is_dir() and _visible(p)):
            for f in sorted(class_dir.iterdir()):
                if f.is_file() and _visible(f) and f.suffix.lower() in IMAGE_SUFFIXES:
                    found.append((split_dir.name, class_dir.name, f))
    if not found:
        raise DataNotFoundError(
            f"{root}: no images found; expected root/<split>/<class>/*.png|jpg with <split> = train, reference "
            "(or val) and target set names"
        )
    return found


def read_images(
    files: list[Path], *, size: int, channels: int | str = "auto", show_progress: bool = False
) -> np.ndarray:
    """Images as float32 ``(n, size, size, C)`` in [0, 1] (RGB, or grayscale when ``channels`` resolves to 1)."""
    from PIL import Image, UnidentifiedImageError

    rgb, gray_modes = [], []
    for f in progress(files, enabled=show_progress, desc="read images"):
        try:
            with Image.open(f) as im:
                gray_modes.append(im.mode in ("1", "L", "LA", "I", "I;16", "F"))
                rgb.append(
                    np.asarray(im.convert("RGB").resize((size, size), Image.BILINEAR), dtype=np.float32)
                )
        except (UnidentifiedImageError, OSError) as exc:
            raise InputValidationError(f"{f.name}: not a readable image ({exc})") from exc
    x = np.stack(rgb) / 255.0
    c = (1 if all(gray_modes) else 3) if channels == "auto" else int(channels)
    if c not in (1, 3):
        raise InputValidationError(f"channels: expected 'auto', 1 or 3, got {channels!r}")
    return (x[..., :1] if c == 1 else x).astype(np.float32)


def _train_image_model(x: np.ndarray, y: np.ndarray, *, n_classes: int, seed: int, opts: dict):
    """Train the CNN on NHWC images ``x``; return images → ``{"logits", "features"}`` (monkeypatched in tests)."""
    from helpers.models import build_model
    from helpers.training import TrainSettings, features_and_logits, fit, seed_everything

    seed_everything(seed)
    model = build_model(
        opts["model"], num_classes=n_classes, image_size=int(opts["image_size"]), in_channels=x.shape[-1]
    )
    nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    settings = TrainSettings(
        epochs=int(opts["epochs"]),
        batch_size=int(opts["batch_size"]),
        lr=float(opts["lr"]),
        seed=seed,
        progress=f"training the {opts['model']} on your {len(y)} images" if opts["progress"] else False,
    )
    fit(model, (nchw, y.astype(np.int64)), settings)
    model.eval()
    return lambda imgs: features_and_logits(model, np.ascontiguousarray(imgs.transpose(0, 3, 1, 2)))


def load_image_task(root: Path, *, seed: int = 0, **options: Any) -> ShiftTask:
    """Train on ``root/train`` and return the ``"byod"`` task (see the module docstring).

    Options (keyword-only) and defaults are :data:`IMAGE_OPTIONS`.
    """
    from helpers.data.metaset import apply_image_shift, image_metaset

    opts = check_options("images", options, IMAGE_OPTIONS)
    if opts["model"] not in ("cnn", "cnn_bn"):
        raise InputValidationError(f"model: expected 'cnn' or 'cnn_bn' for images, got {opts['model']!r}")
    size = int(opts["image_size"])
    if size < 4 or size % 2:
        raise InputValidationError(
            f"image_size: expected an even number of pixels >= 4, got {opts['image_size']!r}"
        )
    entries = scan_image_folder(root)
    roles = [split_role(s) for s, _, _ in entries]
    for role, what in (
        ("train", "train/"),
        ("reference", "reference/ (or val/)"),
        ("target", "a target folder"),
    ):
        if role not in roles:
            raise InputValidationError(
                f"{root.name}: no {role} images; expected root/train/<class>/, root/reference/<class>/ (or val/) "
                f"and at least one target root/<name>/<class>/, missing {what} "
                f"(found splits {sorted({s for s, _, _ in entries})})"
            )
    label_names, mapping = label_map([c for _, c, _ in entries], what="class")
    label_names = [str(n) for n in label_names]
    mapping = {str(k): v for k, v in mapping.items()}
    y = np.asarray([mapping[c] for _, c, _ in entries], dtype=np.int64)
    roles_arr = np.asarray(roles)
    if len(set(y[roles_arr == "train"].tolist())) < 2:
        raise InputValidationError(
            f"{root.name}: train/ has a single class folder; expected at least 2 classes"
        )
    digest = sha256_files(root, [f for _, _, f in entries])
    specs = (
        image_metaset(
            fit_names=list(opts["meta_corruptions"]),
            severities=list(opts["meta_severities"]),
            n_compositions=int(opts["meta_compositions"]),
            seed=seed,
        )
        if opts["meta"]
        else []
    )
    splits = np.asarray([s for s, _, _ in entries])
    target_names = list(dict.fromkeys(s for s, r in zip(splits, roles) if r == "target"))
    sub = meta_subset(int((roles_arr == "reference").sum()), opts["meta_n"], seed)

    def compute() -> dict[str, np.ndarray]:
        files = [f for _, _, f in entries]
        x = read_images(files, size=size, channels=opts["channels"], show_progress=bool(opts["progress"]))
        train, ref = roles_arr == "train", roles_arr == "reference"
        outputs = _train_image_model(x[train], y[train], n_classes=len(label_names), seed=seed, opts=opts)
        sets = {"reference": {**outputs(x[ref]), "labels": y[ref]}}
        set_roles = {"reference": "reference"}
        for t in target_names:
            sel = splits == t
            sets[t], set_roles[t] = {**outputs(x[sel]), "labels": y[sel]}, "target"
        meta_x, meta_y = x[ref][sub], y[ref][sub]
        for spec in progress(specs, enabled=bool(opts["progress"]), desc="meta-set"):
            m = f"meta_{spec.name}"
            shifted = apply_image_shift(meta_x, spec, value_range=(0.0, 1.0))
            sets[m], set_roles[m] = {**outputs(shifted), "labels": meta_y}, "meta"
        return pack_sets(sets, set_roles)

    key_opts = {k: (list(v) if isinstance(v, tuple) else v) for k, v in opts.items() if k not in _NOT_IN_KEY}
    arrays = cached_arrays(
        "byod",
        {"kind": "images", "sha256": digest, "seed": int(seed), "options": key_opts, "version": 1},
        compute,
        refresh=bool(opts["refresh"]),
        code=("helpers.byod", "helpers.models", "helpers.training", "helpers.data"),
    )
    info = {
        "kind": "images",
        "source": str(root),
        "sha256": digest,
        "model": opts["model"],
        "image_size": size,
        "label_names": label_names,
        "n_train": int((roles_arr == "train").sum()),
        "seed": int(seed),
    }
    return unpack_task(arrays, name=opts["name"] or f"byod/{root.name}", info=info)
