"""The notebooks as a graph: which notebook reads another's cache, and the runner's concurrent loop over them.

A notebook declares the notebooks whose cache it reads in its own metadata, once::

    "metadata": {"helpers": {"needs": ["01_discriminator_bounds", "05_mde"], "minutes": 5}}

``minutes`` is the notebook's work under the ``default`` profile in CPU-minutes on the reference machine (2 cores),
measured; it only orders the work (:func:`critical_minutes`), so a rough figure is enough (default 1).
:func:`run_graph` starts a notebook when every notebook it needs that is part of the same run has finished (ok or
failed: the dependent then computes what it cannot read), keeps at most ``slots`` notebooks in flight, and hands
each finished one to a callback, in the calling thread, so that the run's status file has one writer.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from helpers.errors import ProfileError

__all__ = ["notebook_needs", "notebook_minutes", "dependency_order", "dependents", "critical_minutes", "run_graph"]


def notebook_needs(notebook: Path) -> list[str]:
    """The stems listed under ``metadata.helpers.needs`` of ``notebook`` (empty when none)."""
    meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    needs = (meta.get("helpers") or {}).get("needs") or []
    if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
        raise ProfileError(f"{Path(notebook).name}: metadata.helpers.needs must be a list of notebook stems")
    return list(needs)


def notebook_minutes(notebook: Path) -> float:
    """``metadata.helpers.minutes`` of ``notebook``: its measured work in CPU-minutes (1.0 when not declared)."""
    meta = json.loads(Path(notebook).read_text(encoding="utf-8")).get("metadata", {})
    minutes = (meta.get("helpers") or {}).get("minutes", 1.0)
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not minutes >= 0:
        raise ProfileError(f"{Path(notebook).name}: metadata.helpers.minutes must be a number >= 0, got {minutes!r}")
    return float(minutes)


def critical_minutes(notebooks: Sequence[Path], graph: dict[str, list[str]]) -> dict[str, float]:
    """``{stem: minutes of work from its start to the end of the run}``: its own :func:`notebook_minutes` plus the
    longest chain of notebooks that wait for it (the critical path, in CPU-minutes).

    The runner starts the notebooks with the longest chain first and hands their units the highest priority on the
    cluster, so that the chain that bounds the run's wall clock (03 → 06 in ``default``) never queues behind work
    that could run later.
    """
    own = {nb.stem: notebook_minutes(nb) for nb in notebooks}
    out: dict[str, float] = {}

    def chain(stem: str) -> float:
        if stem not in out:
            after = [s for s, needs in graph.items() if stem in needs]
            out[stem] = own.get(stem, 0.0) + max((chain(s) for s in after), default=0.0)
        return out[stem]

    for nb in notebooks:
        chain(nb.stem)
    return out


def dependency_order(notebooks: Sequence[Path], known: Sequence[str]) -> dict[str, list[str]]:
    """``{stem: needs among notebooks}``, after checking every need names a notebook and the graph has no cycle.

    ``known`` are the stems of every notebook of the project: a need outside it is an error; a need outside the
    selection (``--only``) is not waited for.
    """
    selected = {p.stem for p in notebooks}
    graph = {}
    for nb in notebooks:
        needs = notebook_needs(nb)
        unknown = sorted(set(needs) - set(known))
        if unknown:
            raise ProfileError(f"{nb.name}: metadata.helpers.needs names unknown notebook(s) {', '.join(unknown)}")
        graph[nb.stem] = [n for n in needs if n in selected]
    done: set[str] = set()
    while len(done) < len(graph):
        ready = {s for s, needs in graph.items() if s not in done and set(needs) <= done}
        if not ready:
            raise ProfileError(f"notebook dependencies form a cycle among {', '.join(sorted(set(graph) - done))}")
        done |= ready
    return graph


def run_graph(
    notebooks: Sequence[Path],
    graph: dict[str, list[str]],
    submit: Callable[[Path], Any],
    wait_one: Callable[[list[Any]], Any],
    finished: Callable[[Path, Any], None],
    *,
    slots: int,
    echo: Callable[[str], None] | None = None,
) -> None:
    """Run ``notebooks`` by ``graph`` with at most ``slots`` in flight.

    ``submit(nb)`` starts one and returns a handle; ``wait_one(handles)`` blocks until one of them is done and
    returns it (or None after a while without one: the console is told what still runs); ``finished(nb, handle)``
    is called for each, in this thread.  Among ready notebooks, the one with the longest chain of work ahead of it
    (:func:`critical_minutes`) starts first, so that the dependents' wait is short and the short independent
    notebooks fill the machine while the last ones run; ties keep the order of ``notebooks``.
    """
    chain = critical_minutes(notebooks, graph)
    pending = sorted(notebooks, key=lambda nb: -chain[nb.stem])  # stable: ties keep the given order
    t_start = time.perf_counter()
    in_flight: dict[Any, tuple[Path, float]] = {}
    done: set[str] = set()

    def say(event: str) -> None:
        if echo:
            running = ", ".join(nb.stem for nb, _ in in_flight.values()) or "-"
            waiting = ", ".join(nb.stem for nb in pending) or "-"
            load = f"; load {os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else ""
            echo(f"{event}  [running: {running}; waiting: {waiting}{load}]")

    while pending or in_flight:
        for nb in [nb for nb in pending if set(graph.get(nb.stem, [])) <= done]:
            if len(in_flight) >= max(1, slots):
                break
            pending.remove(nb)
            in_flight[submit(nb)] = (nb, time.perf_counter())
            say(f"started {nb.stem}")
        handle = wait_one(list(in_flight))
        if handle is None:
            say(f"{(time.perf_counter() - t_start) / 60:.0f} min")
            continue
        nb, t0 = in_flight.pop(handle)
        done.add(nb.stem)
        finished(nb, handle)
        say(f"finished {nb.stem} after {time.perf_counter() - t0:.0f} s")


def dependents(stem: str, graph: dict[str, list[str]]) -> set[str]:
    """Every notebook that needs ``stem``, directly or through others."""
    out: set[str] = set()
    frontier = {stem}
    while frontier:
        frontier = {s for s, needs in graph.items() if set(needs) & frontier} - out
        out |= frontier
    return out
