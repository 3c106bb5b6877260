"""notebooks/<stem>.ipynb with the `full` profile's parameters as one plain Python script (for the device run)."""
import json
import sys

sys.path.insert(0, sys.argv[1])
from helpers.run.runner import load_profile  # noqa: E402

stem, out = sys.argv[2], sys.argv[3]
PROFILE = sys.argv[4] if len(sys.argv) > 4 else "full"
params = load_profile(PROFILE)[stem]
nb = json.load(open(f"{sys.argv[1]}/notebooks/{stem}.ipynb"))
import papermill  # noqa: E402
from pathlib import Path  # noqa: E402

declared = {p.stem: papermill.inspect_notebook(str(p)) for p in Path(sys.argv[1], "notebooks").glob("*.ipynb")}
stub = ("import json, sys, types\n_pm = types.ModuleType('papermill')  # the device lacks papermill: its inspect_notebook, as read here\n"
        f"_DECLARED = json.loads({json.dumps(declared)!r})\n"
        "_pm.inspect_notebook = lambda path: _DECLARED[os.path.basename(str(path))[:-len('.ipynb')]]\n"
        "sys.modules['papermill'] = _pm\n")
lines = ["import os, time\nos.environ.setdefault('HELPERS_NOTEBOOK', %r)\nos.environ['HELPERS_PROFILE'] = %r\n" % (stem, PROFILE),
         stub, "import matplotlib\nmatplotlib.use('Agg')\n_T0 = time.time()\n",
         "def display(*objs, **_):\n    for o in objs:\n        print(o.to_string() if hasattr(o, 'to_string') else o, flush=True)\n"]
for i, cell in enumerate(nb["cells"]):
    if cell["cell_type"] != "code":
        continue
    src = "".join(cell["source"]).replace("from IPython.display import display\n", "")
    lines.append(f"print('--- cell {i}  %.0f s' % (time.time() - _T0), flush=True)\n" + src + "\n")
    if "parameters" in cell.get("metadata", {}).get("tags", []):
        lines.append(f"# injected: the {PROFILE} profile\nprofile = {PROFILE!r}\n" + "".join(f"{k} = {v!r}\n" for k, v in params.items()))
lines.append("print('--- done  %.0f s' % (time.time() - _T0), flush=True)\n")
open(out, "w").write("\n".join(lines))
print(params)
