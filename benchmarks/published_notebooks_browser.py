"""Open every published notebook in JupyterLab in a headless browser: no error, and its figures shown.

Not part of the tests (it needs a browser): ``pip install playwright && playwright install chromium``, then
``python benchmarks/published_notebooks_browser.py`` starts JupyterLab on ``docs/notebooks`` (no token, a free
local port), opens each notebook, waits for it to render, and checks that JupyterLab shows no error dialog and
that the notebook shows as many images as its saved outputs hold; a screenshot of each goes to
``runs/browser/<notebook>.png``. Exit status 1 when a notebook fails a check.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "docs" / "notebooks"
OUT = ROOT / "runs" / "browser"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _saved_images(path: Path) -> int:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return sum("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))


def main() -> int:
    from playwright.sync_api import sync_playwright

    port = _free_port()
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.token=",
         "--ServerApp.password=", f"--ServerApp.root_dir={NOTEBOOKS}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    failures = []
    try:
        time.sleep(8)
        with sync_playwright() as p:
            browser = p.chromium.launch()
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
                page.goto(f"http://127.0.0.1:{port}/lab/tree/{nb.name}")
                page.wait_for_selector(".jp-Notebook", timeout=60_000)
                page.wait_for_timeout(3_000)
                errors = page.locator(".jp-Dialog .jp-Dialog-header").all_inner_texts()
                shown = page.locator(".jp-OutputArea-output img").count()
                saved = _saved_images(nb)
                page.screenshot(path=str(OUT / f"{nb.stem}.png"))
                ok = not errors and shown >= min(saved, 1)
                print(f"{nb.stem}: {'ok' if ok else 'FAILED'} (images shown {shown} of {saved} saved; "
                      f"dialogs {errors or 'none'}) -> {OUT / (nb.stem + '.png')}")  # fmt: skip
                if not ok:
                    failures.append(nb.stem)
            browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
