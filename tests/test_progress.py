"""Progress bars in a log file are lines, not one carriage-returned line (#44 item 7)."""

import io

import numpy as np
import torch

from helpers.progress import LOG_STEP_PERCENT, LineProgress, tqdm


def test_a_bar_written_to_a_file_logs_a_line_per_step():
    buf = io.StringIO()  # not a terminal
    bar = tqdm(range(200), desc="work", file=buf)
    assert isinstance(bar, LineProgress)
    for _ in bar:
        pass
    text = buf.getvalue()
    lines = text.splitlines()
    assert "\r" not in text
    assert len(lines) == 1 + 100 // LOG_STEP_PERCENT  # the first item (it started), then 10 %, 20 %, ..., 100 %
    assert lines[0].startswith("work:") and "200/200" in lines[-1]


def test_fit_labels_its_bar_with_what_it_trains():
    from helpers.training import fit

    buf = io.StringIO()
    model = torch.nn.Linear(3, 2)
    x, y = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32), np.zeros(32, dtype=np.int64)
    import sys

    old = sys.stderr
    sys.stderr = buf
    try:
        fit(model, (x, y), epochs=1, batch_size=8, device="cpu", progress="training the toy model")
    finally:
        sys.stderr = old
    assert "training the toy model" in buf.getvalue() and "\r" not in buf.getvalue()
