"""Loaders on the real data (row counts from the data mirror's MANIFEST.md, shapes, dtypes, parsing quirks).

These tests need the data directory: CI sets ``HELPERS_DATA=../shared/data``. Without it they are skipped.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

import helpers.data as hd
from helpers.errors import InputValidationError, UnknownNameError
from helpers.paths import data_dir

HAVE_DATA = (data_dir() / "scan" / "tasks.txt.gz").is_file()
needs_data = pytest.mark.skipif(
    not HAVE_DATA, reason=f"data directory {data_dir()} has no data; set HELPERS_DATA (CI: ../shared/data)"
)


def test_registry_covers_every_manifest_dataset():
    names = hd.list_datasets()
    assert set(hd.DATASETS) <= set(names)
    assert {"digits", "scan_generated"} <= set(names)
    assert names == sorted(names)


def test_unknown_dataset_name():
    with pytest.raises(UnknownNameError, match="scan_simple"):
        hd.load("no_such_dataset")
    with pytest.raises(UnknownNameError):
        hd.dataset_info("nope")


def test_embedded_digits_and_info():
    d = hd.load("digits")
    assert d.x.shape == (1797, 8, 8) and d.x.dtype == np.float64 and d.y.dtype == np.int64
    assert d.x.min() == 0 and d.x.max() == 16
    assert hd.dataset_info("digits") is None
    assert hd.dataset_info("imdb").files == ("sentiment/imdb.csv.gz",)


SCAN_COUNTS = {
    "scan_simple": (16728, 4182),
    "scan_length": (16990, 3920),
    "scan_addprim_jump": (14670, 7706),
    "scan_addprim_turn_left": (21890, 1208),
}


@needs_data
@pytest.mark.parametrize("name", sorted(SCAN_COUNTS))
def test_scan_splits(name):
    parts = hd.load(name)
    assert (len(parts["train"]), len(parts["test"])) == SCAN_COUNTS[name]
    cmd, act = parts["train"][0]
    assert cmd and act.startswith("I_")
    assert len(hd.load(name, part="test")) == SCAN_COUNTS[name][1]


@needs_data
def test_scan_tasks_and_bad_part():
    assert len(hd.load("scan_tasks")) == 20910
    with pytest.raises(InputValidationError):
        hd.load("scan_simple", part="dev")
    with pytest.raises(InputValidationError):
        hd.load_scan("nope")


@needs_data
def test_scan_addprim_jump_test_has_jump_everywhere():
    test = hd.load("scan_addprim_jump", part="test")
    assert all("jump" in ex.input.split() for ex in test)


@needs_data
def test_cogs_counts_and_categories():
    cogs = hd.load("cogs")
    assert {k: len(v) for k, v in cogs.items()} == {"train": 24155, "dev": 3000, "test": 3000}
    cats = Counter(ex.category for ex in cogs["train"])
    assert cats["in_distribution"] == 24000 and cats["primitive"] == 143
    assert sum(1 for c in cats if c.startswith("exposure_example_")) == 12
    vf = hd.load("cogs_varfree")
    assert {k: len(v) for k, v in vf.items()} == {"train": 32755, "dev": 4046, "test": 4046}
    assert Counter(ex.category for ex in vf["dev"])["object_modifying_RC"] == 635
    gen = hd.load("cogs_gen_varfree")
    counts = Counter(ex.category for ex in gen)
    assert len(gen) == 21000 and len(counts) == 21 and set(counts.values()) == {1000}


@needs_data
@pytest.mark.parametrize("lf", ["varfree", "cogs"])
def test_slog_in_memory(lf, tmp_path, monkeypatch):
    monkeypatch.setenv("HELPERS_DATA", str(data_dir()))  # a relative $HELPERS_DATA is resolved from the cwd
    monkeypatch.chdir(tmp_path)
    rows = hd.load("slog_gen", lf=lf)
    assert len(rows) == 17000
    assert len({r.category for r in rows}) == 17
    assert list(tmp_path.iterdir()) == []  # nothing written


@needs_data
def test_treebank_and_universal():
    tb = hd.load("treebank")
    assert len(tb) == 3914 and sum(map(len, tb)) == 94084
    assert tb[0][:2] == [("Pierre", "NNP"), ("Vinken", "NNP")]
    assert sum(map(len, hd.load("treebank", keep_traces=True))) == 100676
    uni = hd.load("treebank", tagset="universal")
    tags = {t for s in uni for _, t in s}
    assert tags <= set(hd.pos.UNIVERSAL_TAGS)
    assert uni[0][:3] == [("Pierre", "NOUN"), ("Vinken", "NOUN"), (",", ".")]


@needs_data
def test_brown_and_universal():
    br = hd.load("brown")
    assert len(br) == 57340 and sum(map(len, br)) == 1161192
    assert br[0][:2] == [("The", "AT"), ("Fulton", "NP-TL")]
    news = hd.load("brown", categories="news")
    assert 0 < len(news) < len(br)
    uni = hd.to_universal(br, source="en-brown")
    counts = Counter(t for s in uni for _, t in s)
    assert (
        counts["NOUN"] == 275558 and counts["VERB"] == 182750
    )  # as NLTK's brown.tagged_words(tagset='universal')
    with pytest.raises(InputValidationError):
        hd.load("brown", categories="nope")


@needs_data
def test_brown_to_universal_with_penn_conventions():
    sent = [("his", "PP$"), ("whose", "WP$"), ("there", "EX"), ("all", "ABN"), ("oh", "UH"), ("Fulton", "NP-TL"),
            ("His", "PP$-TL"), ("the", "AT")]  # fmt: skip
    ptb = [t for _, t in hd.brown_to_universal([sent])[0]]
    assert ptb == ["PRON", "PRON", "DET", "DET", "X", "NOUN", "PRON", "DET"]
    native = [t for _, t in hd.brown_to_universal([sent], conventions="brown")[0]]
    assert native == ["DET", "DET", "PRT", "PRT", "PRT", "NOUN", "DET", "DET"]  # the en-brown map as it is
    assert native == [t for _, t in hd.to_universal([sent], source="en-brown")[0]]
    # the two maps agree with en-ptb on the Penn counterparts where conventions="ptb" changes the class
    ptb_map = hd.load("universal_tagset", source="en-ptb")
    assert [ptb_map[t] for t in ("PRP$", "WP$", "EX", "PDT", "UH")] == ptb[:5]
    assert hd.has_contraction([("I'm", "PPSS+BEM")]) and not hd.has_contraction(sent)
    with pytest.raises(InputValidationError, match="conventions"):
        hd.brown_to_universal([sent], conventions="penn")
    # "to": Penn tags it TO (PRT) everywhere; Brown and EWT's XPOS tag the preposition IN (ADP)
    to = [("to", "IN"), ("To", "IN-HL"), ("to", "TO"), ("in", "IN")]
    assert [t for _, t in hd.brown_to_universal([to])[0]] == ["PRT", "PRT", "PRT", "ADP"]
    assert [t for _, t in hd.brown_to_universal([to], conventions="brown")[0]] == ["ADP", "ADP", "PRT", "ADP"]
    assert hd.penn_to([[("To", "IN"), ("to", "TO"), ("into", "IN")]]) == [[("To", "TO"), ("to", "TO"), ("into", "IN")]]


@needs_data
def test_universal_maps():
    ptb = hd.load("universal_tagset", source="en-ptb")
    assert ptb["NN"] == "NOUN" and ptb["VBZ"] == "VERB" and ptb["."] == "."
    brown = hd.load("universal_tagset", source="en-brown")
    assert brown["AT"] == "DET"
    assert hd.to_universal([[("x", "-NONE-")]])[0] == [("x", "X")]
    with pytest.raises(InputValidationError):
        hd.load("universal_tagset", source="xx-none")


@needs_data
def test_ud_ewt():
    ud = hd.load("ud_ewt")
    sizes = {k: (len(v), sum(map(len, v))) for k, v in ud.items()}
    assert sizes == {"train": (12544, 204577), "dev": (2001, 25147), "test": (2077, 25094)}
    upos = {t for s in ud["dev"] for _, t in s}
    assert "NOUN" in upos and "PROPN" in upos and len(upos) == 17
    full = hd.load("ud_ewt", part="dev", full=True)
    assert full[0].words[:3] == ["From", "the", "AP"] and full[0].xpos[0] == "IN"


@needs_data
def test_imdb():
    df = hd.load("imdb")
    assert df.shape == (50000, 4) and list(df.columns) == ["text", "label", "split", "source_file"]
    assert df["label"].dtype == np.int64
    assert df.groupby(["split", "label"]).size().to_dict() == {
        ("test", 0): 12500,
        ("test", 1): 12500,
        ("train", 0): 10000,
        ("train", 1): 10000,
        ("val", 0): 2500,
        ("val", 1): 2500,
    }
    assert len(hd.load("imdb", split="val")) == 5000
    with pytest.raises(InputValidationError):
        hd.load("imdb", split="unsup")


@needs_data
def test_rt_polarity_and_movie_reviews():
    rt = hd.load("rt_polarity")
    assert rt.shape == (10662, 2) and rt["label"].value_counts().to_dict() == {0: 5331, 1: 5331}
    assert rt["text"].str.len().min() > 0
    mr = hd.load("movie_reviews")
    assert mr.shape == (2000, 3) and mr["label"].sum() == 1000
    assert mr["fileid"].iloc[0].startswith("neg/")


@needs_data
def test_amazon():
    df = hd.load("amazon")
    assert len(df) == 8000
    assert df.groupby(["domain", "label"]).size().eq(1000).all()
    assert set(df.loc[df.label == 1, "rating"]) <= {4.0, 5.0}
    assert set(df.loc[df.label == 0, "rating"]) <= {1.0, 2.0}
    assert (df["text"].str.len() > 0).all()
    books = hd.load("amazon", domain="books", with_title=True)
    assert len(books) == 2000  # books_positive's <data> wrapper handled
    assert books["text"].iloc[0].startswith(books["title"].iloc[0] + "\n")
    with pytest.raises(InputValidationError):
        hd.load("amazon", domain="kitchen_&_housewares")


def test_parse_amazon_quirks():
    text = (
        "<data>\n<review>\n<title>\nA & B\n</title>\n<rating>\n5.0\n</rating>\n"
        "<review_text>\nGood < great & cheap\n</review_text>\n</review>\n</data>\n"
    )
    (r,) = hd.text.parse_amazon_reviews(text)
    assert r == {"title": "A & B", "rating": "5.0", "review_text": "Good < great & cheap"}


@needs_data
def test_usps_and_downsample():
    usps = hd.load("usps")
    assert usps["train"].x.shape == (7291, 16, 16) and usps["test"].x.shape == (2007, 16, 16)
    assert usps["train"].x.min() == -1 and usps["train"].x.max() == 1
    assert usps["train"].y.dtype == np.int64 and set(np.unique(usps["test"].y)) == set(range(10))
    small = hd.usps_to_digits(usps["test"].x)
    assert small.shape == (2007, 8, 8) and small.min() >= 0 and small.max() <= 16
    hist = hd.usps_to_digits(usps["test"].x, method="histogram", round_values=True)
    digits = hd.load("digits").x
    assert abs(hist.mean() - digits.mean()) < 0.5
    assert np.array_equal(hist, np.rint(hist))


def test_usps_to_digits_blocks():
    x = -np.ones((1, 16, 16))
    x[0, :2, :2] = 1.0  # one full 2x2 block of ink
    out = hd.usps_to_digits(x)
    assert out[0, 0, 0] == 16 and out.sum() == 16
    with pytest.raises(InputValidationError):
        hd.usps_to_digits(np.zeros((2, 8, 8)))


@needs_data
def test_cifar10_jpeg_and_resnets():
    c = hd.load("cifar10_jpeg")
    assert c.x.shape == (10000, 32, 32, 3) and c.x.dtype == np.uint8 and c.y.dtype == np.int64
    assert np.bincount(c.y).tolist() == [1000] * 10 and c.classes[0] == "airplane" and c.classes[9] == "truck"
    paths = hd.load("cifar10_resnets")
    assert sorted(paths) == [20, 32, 44, 56] and all(
        p.is_file() and p.suffix == ".th" for p in paths.values()
    )
    assert hd.cifar_resnet_path(20).name == "resnet20-12fca82f.th"
    with pytest.raises(InputValidationError):
        hd.cifar_resnet_path(110)


@needs_data
def test_loaders_return_plain_types():
    assert isinstance(hd.load("rt_polarity"), pd.DataFrame)
    ex = hd.load("cogs", part="dev")[0]
    sentence, lf, cat = ex
    assert isinstance(sentence, str) and cat == "in_distribution"


@pytest.mark.skipif(not (data_dir() / "vision" / "cifar10c_frost").is_dir(), reason="frost photographs not found")
def test_frost_photographs():
    imgs = hd.load("cifar10c_frost")
    assert len(imgs) == 6 and all(a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 3 for a in imgs)
    assert min(min(a.shape[:2]) for a in imgs) >= 32 * 5  # large enough for make_cifar_c's 0.2 rescale + 32x32 crop


def test_read_conllu_user_file_universal_upos_and_unlabelled(tmp_path):
    from helpers.data.pos import UNIVERSAL_TAGS, UPOS_TO_UNIVERSAL, read_conllu
    from helpers.errors import DataNotFoundError, InputValidationError

    rows = [
        "# sent_id = s1", "# text = Don't stop now.",
        "1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_",
        "1\tDo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_", "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_",
        "3\tstop\tstop\tVERB\tVB\t_\t0\troot\t_\t_", "4\tnow\tnow\tADV\tRB\t_\t3\tadvmod\t_\t_",
        "5\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_", "",
        "1\tMary\tMary\tPROPN\tNNP\t_\t2\tnsubj\t_\t_", "2\tand\tand\tCCONJ\tCC\t_\t3\tcc\t_\t_",
        "3\tif\tif\tSCONJ\tIN\t_\t0\troot\t_\t_", "",
    ]  # fmt: skip
    f = tmp_path / "mine.conllu"
    f.write_text("\n".join(rows), encoding="utf-8")
    uni = read_conllu(f)
    assert uni == [
        [("Do", "VERB"), ("n't", "PRT"), ("stop", "VERB"), ("now", "ADV"), (".", ".")],
        [("Mary", "NOUN"), ("and", "CONJ"), ("if", "ADP")],
    ]
    assert read_conllu(f, tags="upos")[1] == [("Mary", "PROPN"), ("and", "CCONJ"), ("if", "SCONJ")]
    assert read_conllu(f, tags="none") == [["Do", "n't", "stop", "now", "."], ["Mary", "and", "if"]]
    assert set(UPOS_TO_UNIVERSAL.values()) == set(UNIVERSAL_TAGS) and len(UPOS_TO_UNIVERSAL) == 17
    unlabelled = tmp_path / "raw.conllu"
    unlabelled.write_text("1\tHello\t_\t_\t_\t_\t_\t_\t_\t_\n", encoding="utf-8")
    assert read_conllu(unlabelled, tags="none") == [["Hello"]]
    with pytest.raises(InputValidationError, match="tags='none'"):
        read_conllu(unlabelled)
    with pytest.raises(DataNotFoundError):
        read_conllu(tmp_path / "missing.conllu")
    with pytest.raises(InputValidationError, match="tags must be"):
        read_conllu(f, tags="ptb")
    (tmp_path / "empty.conllu").write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(InputValidationError, match="no sentences"):
        read_conllu(tmp_path / "empty.conllu")


@needs_data
def test_upos_mapping_agrees_with_the_ptb_route_on_ewt(tmp_path):
    """UD EWT test carries both UPOS and Penn XPOS: the two routes to the 12 tags agree on most words."""
    from helpers.data.pos import UPOS_TO_UNIVERSAL

    sents = hd.load("ud_ewt", part="test", full=True)
    ptb = hd.load_universal_tagset(source="en-ptb")
    pairs = [(UPOS_TO_UNIVERSAL[u], ptb.get(x, "X")) for s in sents for u, x in zip(s.upos, s.xpos)]
    agree = np.mean([a == b for a, b in pairs])
    assert len(pairs) == 25094 and agree > 0.95, agree
