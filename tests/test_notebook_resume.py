"""Re-running a notebook resumes: notebook 00's second smoke run reuses the model it trained and the logits it
cached (its own file, so that under ``make test`` it runs beside tests/test_notebooks.py's smoke run of every
notebook instead of after it)."""

from __future__ import annotations

from helpers.run import runner


def _training_line(run) -> str:
    import nbformat

    nb = nbformat.read(run.output, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if "history = fit(" in c.source for o in c.outputs)


def test_example_notebook_resumes_training_from_its_checkpoint():
    """Re-running the notebook reuses the trained model and cached logits instead of recomputing them."""
    first = runner.run_notebooks(profile="smoke", only=["00_example"], echo=False)[0]
    assert first.status == "ok", first.error
    first_line = _training_line(first)  # read now: the second run writes the same executed copy
    second = runner.run_notebooks(profile="smoke", only=["00_example"], echo=False)[0]
    assert second.status == "ok", second.error
    second_line = _training_line(second)
    steps = first_line.split(" steps")[0]
    assert "trained from scratch" in first_line, first_line
    assert f"resumed from step {steps}" in second_line, second_line  # nothing retrained
