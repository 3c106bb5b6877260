"""The run calibration: timed on every run, copied by publish, compared by `python -m helpers calibrate`."""

import json

from helpers.run.calibration import CALIBRATION_VERSION, calibrate, compare_with, write_calibration


def test_calibrate_times_both_workloads():
    c = calibrate(repeats=1)
    assert c["version"] == CALIBRATION_VERSION and c["numpy_s"] > 0 and c["torch_s"] > 0
    assert c["total_s"] == round(c["numpy_s"] + c["torch_s"], 4)


def test_write_keeps_the_first_calibration_of_a_run_folder(tmp_path):
    path = write_calibration(tmp_path)
    first = path.read_text()
    assert write_calibration(tmp_path).read_text() == first  # a resumed run keeps the machine it started on


def test_compare_with_the_published_machine(tmp_path):
    pub = tmp_path / "calibration.json"
    assert "no published calibration" in compare_with(pub, {"total_s": 2.0, "version": CALIBRATION_VERSION})
    pub.write_text(json.dumps({"version": CALIBRATION_VERSION, "total_s": 4.0, "load_1min": 0.2}))
    assert "x 0.50" in compare_with(pub, {"total_s": 2.0, "version": CALIBRATION_VERSION})
    pub.write_text(json.dumps({"version": CALIBRATION_VERSION + 1, "total_s": 4.0}))
    assert "another workload version" in compare_with(pub, {"total_s": 2.0, "version": CALIBRATION_VERSION})
