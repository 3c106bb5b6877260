"""Sentiment datasets: IMDb, Rotten Tomatoes sentence polarity, movie-review polarity and Blitzer's Amazon reviews.

Every loader returns a :class:`pandas.DataFrame` with at least the columns ``text`` (str) and ``label``
(int64, 0 = negative, 1 = positive -- the same polarity for every dataset, so they can be paired).

References
----------
Maas, A. et al. (2011). Learning word vectors for sentiment analysis. ACL. (IMDb)
Pang, B. & Lee, L. (2005). Seeing stars. ACL. (sentence polarity v1.0)
Pang, B. & Lee, L. (2004). A sentimental education. ACL. (movie review polarity v2.0)
Blitzer, J., Dredze, M. & Pereira, F. (2007). Biographies, Bollywood, boom-boxes and blenders. ACL. (Amazon)
"""

from __future__ import annotations

import gzip
import re
import zipfile
from collections.abc import Sequence

import pandas as pd

from helpers.data.files import require
from helpers.data.registry import register_loader
from helpers.errors import InputValidationError

__all__ = [
    "load_imdb",
    "load_rt_polarity",
    "load_movie_reviews",
    "load_amazon",
    "parse_amazon_reviews",
    "AMAZON_DOMAINS",
]

AMAZON_DOMAINS = ("books", "dvd", "electronics", "kitchen")


@register_loader("imdb")
def load_imdb(*, split: str | Sequence[str] | None = None) -> pd.DataFrame:
    """IMDb Large Movie Review Dataset (Maas et al. 2011): 50,000 reviews.

    Parameters
    ----------
    split : {"train", "val", "test"} or a sequence of them or None, keyword-only
        Rows to keep. train 20,000 / val 5,000 (the AMLM author's split of the original 25k train) /
        test 25,000 (the original test set); each half positive.

    Returns
    -------
    pandas.DataFrame
        Columns ``text`` (HTML ``<br />`` kept), ``label`` (int64; 1 positive), ``split``, ``source_file``
        (``train/pos/0_9.txt``: the star rating is in the file name).
    """
    path = require("imdb", "sentiment/imdb.csv.gz")
    df = pd.read_csv(
        path, compression="gzip", dtype={"text": str, "label": "int64", "split": str, "source_file": str}
    )
    if split is not None:
        wanted = [split] if isinstance(split, str) else list(split)
        bad = set(wanted) - {"train", "val", "test"}
        if bad:
            raise InputValidationError(f"imdb: split must be among train, val, test; got {sorted(bad)}")
        df = df[df["split"].isin(wanted)].reset_index(drop=True)
    return df


@register_loader("rt_polarity")
def load_rt_polarity() -> pd.DataFrame:
    """Rotten Tomatoes sentence polarity v1.0 (Pang & Lee 2005): 5,331 negative then 5,331 positive sentences.

    The files are Latin-1 (Windows-1252 quotes appear as Latin-1 code points) and already lower-cased and
    tokenised by the authors. Columns ``text``, ``label``.
    """
    path = require("rt_polarity", "sentiment/sentence_polarity.zip")
    frames = []
    with zipfile.ZipFile(path) as zf:
        for label, name in ((0, "neg"), (1, "pos")):
            lines = zf.read(f"sentence_polarity/rt-polarity.{name}").decode("latin-1").splitlines()
            lines = [ln.strip() for ln in lines if ln.strip()]
            frames.append(pd.DataFrame({"text": lines, "label": label}))
    df = pd.concat(frames, ignore_index=True)
    df["label"] = df["label"].astype("int64")
    return df


@register_loader("movie_reviews")
def load_movie_reviews() -> pd.DataFrame:
    """Movie review polarity v2.0 (Pang & Lee 2004): 1,000 negative then 1,000 positive full reviews.

    Columns ``text`` (lower-cased, tokenised, one sentence per line as released), ``label``, ``fileid``
    (``neg/cv000_29416.txt``).
    """
    path = require("movie_reviews", "sentiment/movie_reviews.zip")
    rows = []
    with zipfile.ZipFile(path) as zf:
        for name in sorted(zf.namelist()):
            parts = name.split("/")
            if len(parts) == 3 and parts[1] in ("neg", "pos") and name.endswith(".txt"):
                text = zf.read(name).decode("utf-8")
                rows.append((text, int(parts[1] == "pos"), f"{parts[1]}/{parts[2]}"))
    df = pd.DataFrame(rows, columns=["text", "label", "fileid"])
    df["label"] = df["label"].astype("int64")
    return df


_REVIEW = re.compile(r"<review>(.*?)</review>", re.S)
_FIELD = re.compile(r"<([a-z_]+)>\n?(.*?)\n?</\1>", re.S)


def parse_amazon_reviews(text: str) -> list[dict[str, str]]:
    """Parse Blitzer's pseudo-XML ``.review`` text into one dict of fields per ``<review>`` block.

    The format is not well-formed XML (no root element, unescaped ``&``, and ``books_positive`` alone is wrapped
    in ``<data>``), so it is read with regular expressions, not an XML parser. Values are stripped.
    """
    return [{k: v.strip() for k, v in _FIELD.findall(block)} for block in _REVIEW.findall(text)]


@register_loader("amazon")
def load_amazon(*, domain: str | Sequence[str] | None = None, with_title: bool = False) -> pd.DataFrame:
    """Blitzer et al. (2007) multi-domain Amazon reviews: 1,000 positive + 1,000 negative per domain.

    Parameters
    ----------
    domain : {"books", "dvd", "electronics", "kitchen"} or a sequence of them or None, keyword-only
        Domains to load (``None`` = all four, 8,000 rows).
    with_title : bool, keyword-only
        ``text`` is ``review_text`` only (default: the body Blitzer's features were built from), or
        ``title + "\\n" + review_text``. The title is always in its own column.

    Returns
    -------
    pandas.DataFrame
        Columns ``text``, ``label`` (1 = from ``positive.review``, ratings 4-5; 0 = ``negative.review``, 1-2),
        ``domain``, ``rating`` (float), ``title``, ``unique_id``. Order: domain, positive then negative, file order.
    """
    domains = AMAZON_DOMAINS if domain is None else ((domain,) if isinstance(domain, str) else tuple(domain))
    bad = set(domains) - set(AMAZON_DOMAINS)
    if bad:
        raise InputValidationError(
            f"amazon: unknown domain(s) {sorted(bad)}; expected some of {AMAZON_DOMAINS}"
        )
    rows = []
    for d in domains:
        for label, pol in ((1, "positive"), (0, "negative")):
            path = require("amazon", f"sentiment/amazon/{d}_{pol}.review.gz")
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                for r in parse_amazon_reviews(fh.read()):
                    body, title = r.get("review_text", ""), r.get("title", "")
                    text = f"{title}\n{body}" if with_title and title else body
                    rows.append(
                        (text, label, d, float(r.get("rating", "nan")), title, r.get("unique_id", ""))
                    )
    df = pd.DataFrame(rows, columns=["text", "label", "domain", "rating", "title", "unique_id"])
    df["label"] = df["label"].astype("int64")
    return df
