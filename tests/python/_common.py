"""Shared by the Python tests: dependency checks, reference data, tolerances.

Run by meson with PYTHONPATH=<source>/python and MLFF_LIBRARY=<build>/libmlff.so.
If numpy or ASE is missing the tests are skipped (exit 77), except under CI
(CI=true), where a missing dependency is a failure.
"""
import json
import os
import sys

HARTREE_TO_EV = 27.211386024367243
SKIP = 77

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE_DIR = os.environ.get(
    "MLFF_REFERENCE_DIR", os.path.join(HERE, "..", "data", "reference"))


def require(*modules):
    """Import the modules the test needs, or skip/fail as above."""
    missing = []
    for name in modules:
        try:
            __import__(name)
        except ImportError as e:
            missing.append("%s (%s)" % (name, e))
    if missing:
        message = "%s: missing %s; install python3-numpy, python3-ase (and python3-torch for the exporter)" % (
            os.path.basename(sys.argv[0]), ", ".join(missing))
        if os.environ.get("CI") == "true":
            print("FAIL: " + message + " (required under CI)", file=sys.stderr)
            sys.exit(1)
        print("SKIP: " + message, file=sys.stderr)
        sys.exit(SKIP)


def reference_names(periodic=False):
    """Names of the reference structures, molecules (periodic=False) or boxes."""
    with open(os.path.join(REFERENCE_DIR, "index.json")) as f:
        index = json.load(f)
    return [s["name"] for s in index["structures"] if s["periodic"] == periodic]


def load_reference(name):
    """(numbers, positions, cell, pbc, energy eV, forces eV/A) from <name>.json,
    which holds the exact geometry and full-precision TorchANI float64 values."""
    import numpy as np
    with open(os.path.join(REFERENCE_DIR, name + ".json")) as f:
        d = json.load(f)
    cell = np.array(d["cell"], dtype=float) if d["cell"] is not None else np.zeros((3, 3))
    return (np.array(d["species"], dtype=int), np.array(d["coordinates"], dtype=float), cell,
            np.array(d["pbc"], dtype=bool), d["energy"] * HARTREE_TO_EV,
            np.array(d["forces"], dtype=float) * HARTREE_TO_EV)


def reference_atoms(name):
    """The reference structure as ase.Atoms."""
    from ase import Atoms
    numbers, positions, cell, pbc, _, _ = load_reference(name)
    return Atoms(numbers=numbers, positions=positions, cell=cell, pbc=pbc)


def tolerances(precision, n_atoms):
    """(energy eV, force component eV/A) against TorchANI float64: float32
    5e-6 eV/atom (at least 1e-5 eV) and 1e-4 eV/A; float64 1e-8 eV/atom and
    1e-7 eV/A."""
    if precision == "float32":
        return max(5e-6 * n_atoms, 1e-5), 1e-4
    return 1e-8 * n_atoms, 1e-7
