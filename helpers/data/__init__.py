"""Dataset loaders, the dataset registry, embedded data generators and shift generators.

Data files are read from :func:`helpers.paths.data_dir` (``$HELPERS_DATA``, else the repository's ``data/``);
see ``data/README.md`` for origins, licenses and ``python -m helpers data fetch NAME``.

Examples
--------
>>> from helpers import data
>>> data.list_datasets()[:3]
['amazon', 'brown', 'cifar10_jpeg']
>>> train = data.load("scan_simple", part="train")      # doctest: +SKIP
>>> imdb = data.load("imdb", split="test")               # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from helpers.data import pos, scan_grammar, seq2seq, text, vision  # noqa: F401  (register loaders)
from helpers.data.files import require, sha256_file
from helpers.data.manifest import DATASETS, FILES, DatasetEntry
from helpers.data.pos import (
    brown_to_universal,
    has_contraction,
    load_brown,
    load_treebank,
    load_ud_ewt,
    load_universal_tagset,
    penn_to,
    read_conllu,
    to_universal,
)
from helpers.data.registry import LOADERS
from helpers.data.scan_grammar import generate_scan
from helpers.data.seq2seq import (
    COGSExample,
    Pair,
    load_cogs,
    load_cogs_gen_varfree,
    load_cogs_varfree,
    load_scan,
    load_slog,
    read_seq2seq_tsv,
)
from helpers.data.text import load_amazon, load_imdb, load_movie_reviews, load_rt_polarity
from helpers.data.vision import (
    CIFAR10_CLASSES,
    ImageSet,
    cifar_resnet_path,
    load_cifar10_jpeg,
    load_digits,
    load_usps,
    usps_to_digits,
)

__all__ = [
    "load",
    "list_datasets",
    "dataset_info",
    "LOADERS",
    "DATASETS",
    "FILES",
    "require",
    "sha256_file",
    "Pair",
    "COGSExample",
    "ImageSet",
    "CIFAR10_CLASSES",
    "load_scan",
    "read_seq2seq_tsv",
    "read_conllu",
    "load_cogs",
    "load_cogs_varfree",
    "load_cogs_gen_varfree",
    "load_slog",
    "generate_scan",
    "load_treebank",
    "load_brown",
    "load_universal_tagset",
    "to_universal",
    "brown_to_universal",
    "has_contraction",
    "penn_to",
    "load_ud_ewt",
    "load_imdb",
    "load_rt_polarity",
    "load_movie_reviews",
    "load_amazon",
    "load_usps",
    "usps_to_digits",
    "load_cifar10_jpeg",
    "load_digits",
    "cifar_resnet_path",
    "corrupt",
    "imbalance_resample",
]

#: Datasets that need no data files (embedded or generated).
EMBEDDED = ("digits", "scan_generated")


def load(name: str, **options: Any) -> Any:
    """Load the dataset registered as ``name``; ``options`` are the loader's keyword-only options.

    Raises
    ------
    UnknownNameError
        ``name`` is not registered (the message lists the known names).
    DataNotFoundError
        A file is missing (the message names the path, the data directory and the fetch command).
    ChecksumError
        A file does not match its sha256 in the manifest.
    """
    return LOADERS.get(name)(**options)


def list_datasets() -> list[str]:
    """Names accepted by :func:`load`, sorted."""
    return LOADERS.names()


def dataset_info(name: str) -> DatasetEntry | None:
    """Manifest entry (files, origin, license, sources) of a file-backed dataset; ``None`` for embedded ones."""
    LOADERS.get(name)  # raises UnknownNameError
    return DATASETS.get(name)


def __getattr__(attr: str) -> Any:  # lazy: corruptions pull in scipy and Pillow
    if attr in ("corrupt", "imbalance_resample"):
        from helpers.data import corruptions

        return getattr(corruptions, attr)
    raise AttributeError(f"module 'helpers.data' has no attribute {attr!r}")
