"""Open every published notebook in JupyterLab in a headless browser: no error, and its figures shown.

Not part of the tests (it needs a browser): ``pip install playwright``, and a Chromium (``playwright install
chromium``, or a system one, e.g. Debian's ``apt-get install chromium``, given with ``--chromium /usr/bin/chromium``).
``python scripts/published_notebooks_browser.py`` then starts JupyterLab on ``docs/notebooks`` (no token, a free
local port, cells rendered all at once instead of on scrolling), opens each notebook and checks that JupyterLab shows
no error dialog, that every saved figure is shown and decoded (as many images, each with a width), and that no
stderr output or error traceback is rendered; a screenshot of each goes to ``runs/browser/<notebook>.png``. Exit
status 1 when a notebook fails a check.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
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


def _wait_for_lab(port: int, lab: subprocess.Popen, timeout_s: float = 180) -> None:
    """Until JupyterLab answers on ``port`` (it starts slowly on a busy machine); raise if it exits or times out."""
    import urllib.request

    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if lab.poll() is not None:
            raise RuntimeError(
                f"JupyterLab exited with status {lab.returncode}; see {OUT / 'jupyterlab.log'}"
            )
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5)
            return
        except OSError:
            time.sleep(1)
    raise TimeoutError(f"JupyterLab did not answer on port {port} within {timeout_s:.0f} s")


def _lab_settings() -> str:
    """A JupyterLab settings folder in which notebooks render every cell at once (so every figure can be counted)."""
    folder = Path(tempfile.mkdtemp(prefix="lab-settings-"))
    overrides = {
        "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    }
    (folder / "overrides.json").write_text(json.dumps(overrides))
    for plugin, values in overrides.items():  # the user-settings layout too: <package>/<plugin>.jupyterlab-settings
        package, name = plugin.split(":")
        (folder / package).mkdir(parents=True, exist_ok=True)
        (folder / package / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    return str(folder)


def main(argv: list[str] | None = None) -> int:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chromium", default=None, help="a Chromium executable (default: Playwright's own)")
    args = parser.parse_args(argv)
    port = _free_port()
    OUT.mkdir(parents=True, exist_ok=True)
    log = (OUT / "jupyterlab.log").open("w")
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.token=",
         "--ServerApp.password=", f"--ServerApp.root_dir={NOTEBOOKS}", "--allow-root",
         # nothing leaves the machine: no news feed, no update check
         "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "JUPYTERLAB_SETTINGS_DIR": _lab_settings()},
    )  # fmt: skip
    failures = []
    (OUT / "summary.txt").write_text("")
    try:
        _wait_for_lab(port, lab)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for nb in sorted(NOTEBOOKS.glob("*.ipynb")):
                # single-document mode, a fresh workspace: only this notebook is open
                page.goto(f"http://127.0.0.1:{port}/doc/workspaces/check-{nb.stem}/tree/{nb.name}?reset")
                notebook = page.locator(".jp-Notebook:visible").first
                notebook.wait_for(timeout=120_000)
                page.wait_for_timeout(5_000)
                errors = page.locator(".jp-Dialog .jp-Dialog-header").all_inner_texts()
                images = notebook.locator(".jp-OutputArea-output img")
                shown = images.count()
                decoded = sum(
                    images.nth(i).evaluate("img => img.complete && img.naturalWidth > 0")
                    for i in range(shown)
                )
                stderr = notebook.locator("[data-mime-type='application/vnd.jupyter.stderr']").count()
                saved = _saved_images(nb)
                page.screenshot(path=str(OUT / f"{nb.stem}.png"))
                if shown:  # the notebook's first figure as rendered
                    images.first.scroll_into_view_if_needed()
                    images.first.screenshot(path=str(OUT / f"{nb.stem}-figure1.png"))
                ok = not errors and shown == saved == decoded and stderr == 0
                line = (f"{nb.stem}: {'ok' if ok else 'FAILED'} (images shown {shown}, decoded {decoded}, saved {saved}; "
                        f"stderr/error outputs {stderr}; dialogs {errors or 'none'}) -> {OUT / (nb.stem + '.png')}")  # fmt: skip
                print(line, flush=True)
                with (OUT / "summary.txt").open("a") as summary:
                    summary.write(line + "\n")
                if not ok:
                    failures.append(nb.stem)
            browser.close()
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            lab.kill()
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
