"""Regenerate the worked-example files of the README's "Bring your own data" section.

    .venv/bin/python examples/byod/make_examples.py

writes, next to this script:

* ``reviews.csv``  -- text, label, split: 300 training and 150 reference ("val") three-class reviews and three
  target sets (``mild``, ``strong``, ``all new words``) in which more and more of the sentiment words are
  synonyms the model never saw in training (10 % label noise everywhere);
* ``logits.npz``   -- saved logits and labels of a 4-class model: reference, two target sets and a 4-set
  meta-set (random logits whose accuracy falls with their noise level).

Both come from :mod:`helpers.byod.demo` with seed 0, so the files are identical on every machine.
"""

from pathlib import Path

from helpers.byod.demo import make_logits_npz, make_text_csv

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    for path in (make_text_csv(HERE / "reviews.csv"), make_logits_npz(HERE / "logits.npz")):
        print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB)")
