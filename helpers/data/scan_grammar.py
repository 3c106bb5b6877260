"""Generate SCAN from its grammar (Lake & Baroni 2018, Fig. 6 / Appendix), no files needed.

Phrase-structure grammar (``C`` is the start symbol)::

    C -> S and S | S after S | S
    S -> V twice | V thrice | V
    V -> D[1] opposite D[2] | D[1] around D[2] | D | U
    D -> U left | U right | turn left | turn right
    U -> walk | look | run | jump

where in ``D[1] opposite D[2]`` / ``D[1] around D[2]`` both ``D`` share the primitive, i.e. the phrase is
``x opposite dir`` / ``x around dir`` with ``x`` in U or ``turn``. Interpretation::

    [[walk]] = I_WALK  [[look]] = I_LOOK  [[run]] = I_RUN  [[jump]] = I_JUMP
    [[turn left]] = I_TURN_LEFT                 [[u left]] = I_TURN_LEFT [[u]]
    [[turn opposite left]] = I_TURN_LEFT x2     [[u opposite left]] = [[turn opposite left]] [[u]]
    [[turn around left]] = I_TURN_LEFT x4       [[u around left]] = (I_TURN_LEFT [[u]]) x4
    [[x twice]] = [[x]] x2   [[x thrice]] = [[x]] x3
    [[x1 and x2]] = [[x1]] [[x2]]   [[x1 after x2]] = [[x2]] [[x1]]

(and the same with ``right``). The grammar yields 34 V-phrases, 102 S-phrases and 102 + 2 * 102^2 = 20,910
commands, exactly the official ``tasks.txt`` (checked in ``tests/test_scan_generator.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

from helpers.data.registry import register_loader
from helpers.data.seq2seq import Pair

__all__ = ["PRIMITIVES", "interpret", "generate_scan", "v_phrases", "s_phrases"]

#: Primitive verbs and their action tokens.
PRIMITIVES = {"walk": "I_WALK", "look": "I_LOOK", "run": "I_RUN", "jump": "I_JUMP"}
_TURN = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}


def _v(words: tuple[str, ...]) -> list[str]:
    """Interpret a V-phrase (1-3 words)."""
    head = words[0]
    act = [] if head == "turn" else [PRIMITIVES[head]]
    if len(words) == 1:
        return act
    if len(words) == 2:
        return [_TURN[words[1]], *act]
    mod, turn = words[1], _TURN[words[2]]
    if mod == "opposite":
        return [turn, turn, *act]
    if mod == "around":
        return [turn, *act] * 4
    raise ValueError(f"not a SCAN V-phrase: {' '.join(words)!r}")


def v_phrases() -> list[tuple[str, ...]]:
    """The 34 V-phrases: ``u``, ``x dir``, ``x opposite dir``, ``x around dir`` (x in U or ``turn``)."""
    out: list[tuple[str, ...]] = [(u,) for u in PRIMITIVES]
    for x in (*PRIMITIVES, "turn"):
        for d in _TURN:
            out += [(x, d), (x, "opposite", d), (x, "around", d)]
    return out


def s_phrases() -> list[tuple[str, ...]]:
    """The 102 S-phrases: each V-phrase alone, ``twice`` and ``thrice``."""
    return [v + rep for v in v_phrases() for rep in ((), ("twice",), ("thrice",))]


def _s(words: tuple[str, ...]) -> list[str]:
    if words[-1] == "twice":
        return _v(words[:-1]) * 2
    if words[-1] == "thrice":
        return _v(words[:-1]) * 3
    return _v(words)


def interpret(command: str) -> str:
    """Action sequence of a SCAN command (raises ``ValueError`` if it is not in the grammar)."""
    words = tuple(command.split())
    for conj in ("and", "after"):
        if conj in words:
            i = words.index(conj)
            left, right = _s(words[:i]), _s(words[i + 1 :])
            return " ".join(left + right if conj == "and" else right + left)
    return " ".join(_s(words))


def iter_scan() -> Iterator[Pair]:
    """Yield every SCAN command with its actions: single S-phrases, then ``S and S``, then ``S after S``."""
    ss = s_phrases()
    for s in ss:
        yield Pair(" ".join(s), " ".join(_s(s)))
    for conj in ("and", "after"):
        for a in ss:
            act_a = _s(a)
            for b in ss:
                act_b = _s(b)
                acts = act_a + act_b if conj == "and" else act_b + act_a
                yield Pair(f"{' '.join(a)} {conj} {' '.join(b)}", " ".join(acts))


@register_loader("scan_generated")
def generate_scan() -> list[Pair]:
    """All 20,910 SCAN (command, actions) pairs, generated from the grammar (no data files needed)."""
    return list(iter_scan())
