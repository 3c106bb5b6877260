"""The SCAN grammar generator regenerates exactly the official command set (Lake & Baroni 2018)."""

from __future__ import annotations

import gzip

import pytest

from helpers.data import load
from helpers.data.scan_grammar import generate_scan, interpret, s_phrases, v_phrases
from helpers.paths import data_dir


def test_counts():
    assert len(v_phrases()) == 34
    assert len(s_phrases()) == 102
    pairs = generate_scan()
    assert len(pairs) == 20910 == 102 + 2 * 102**2
    assert len({p.input for p in pairs}) == 20910


@pytest.mark.parametrize(
    ("command", "actions"),
    [
        ("jump", "I_JUMP"),
        ("turn left", "I_TURN_LEFT"),
        ("jump left", "I_TURN_LEFT I_JUMP"),
        ("walk opposite right", "I_TURN_RIGHT I_TURN_RIGHT I_WALK"),
        ("turn around right", "I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT I_TURN_RIGHT"),
        ("look around left", "I_TURN_LEFT I_LOOK I_TURN_LEFT I_LOOK I_TURN_LEFT I_LOOK I_TURN_LEFT I_LOOK"),
        ("run twice", "I_RUN I_RUN"),
        ("walk left thrice", "I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK I_TURN_LEFT I_WALK"),
        ("jump and walk", "I_JUMP I_WALK"),
        ("jump after walk", "I_WALK I_JUMP"),
        ("turn opposite left after run twice", "I_RUN I_RUN I_TURN_LEFT I_TURN_LEFT"),
    ],
)
def test_interpretation_examples(command, actions):
    assert interpret(command) == actions


def test_interpret_rejects_non_grammar():
    with pytest.raises((ValueError, KeyError)):
        interpret("fly left")


@pytest.mark.skipif(
    not (data_dir() / "scan" / "tasks.txt.gz").is_file(),
    reason=f"scan/tasks.txt.gz not in data directory {data_dir()}; set HELPERS_DATA (CI: ../shared/data)",
)
def test_matches_official_tasks_exactly():
    generated = generate_scan()
    official = load("scan_tasks")
    assert len(official) == len(generated) == 20910
    assert set(official) == set(generated)
    # the loader is not the only witness: also compare against the raw file lines
    with gzip.open(data_dir() / "scan" / "tasks.txt.gz", "rt", encoding="ascii") as fh:
        raw = {tuple(line.rstrip("\n")[4:].split(" OUT: ")) for line in fh}
    assert raw == {tuple(p) for p in generated}
