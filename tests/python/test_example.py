#!/usr/bin/python3
"""examples/optimize_and_md.py runs (shortened) and writes what it promises.

Usage: test_example.py   (PYTHONPATH and MLFF_LIBRARY as set by meson)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.require("numpy", "ase")
from ase.io import read  # noqa: E402

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "optimize_and_md.py")


def main():
    with tempfile.TemporaryDirectory(prefix="mlff-example-") as tmp:
        r = subprocess.run([sys.executable, EXAMPLE, "--steps", "200", "--outdir", tmp],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=600)
        print(r.stdout)
        if r.returncode != 0:
            print("FAIL: the example exited with %d" % r.returncode, file=sys.stderr)
            return 1
        optimised = read(os.path.join(tmp, "CH3CH2OH_opt.xyz"))
        frames = read(os.path.join(tmp, "CH3CH2OH_md.traj"), ":")
        failures = []
        if len(optimised) != 9:
            failures.append("optimised ethanol has %d atoms" % len(optimised))
        if len(frames) != 21:  # steps 0, 10, ..., 200
            failures.append("%d trajectory frames, expected 21" % len(frames))
        elif frames[-1].get_potential_energy() >= 0:
            failures.append("trajectory frames carry no sensible energy")
        for f in failures:
            print("FAIL: " + f, file=sys.stderr)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
