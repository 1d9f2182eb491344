"""Structures for distilling ANI-2x, labelled by mlff itself.

Conformers of small organic molecules (the reference set's g2_* molecules,
tests/data/reference, with Gaussian displacements of 0.03 to 0.12 A) and
small water clusters (3 to 6 neighbouring molecules cut from
water_cluster_100, displaced likewise). structures(seed, n) is
deterministic: train.py uses seed 0 (split into training and held-out
parts); tests/python/test_student.py a fixed held-out set of seed 1.
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.environ.get("MLFF_REFERENCE_DIR", os.path.join(HERE, "..", "..", "tests", "data", "reference"))
ELEMENTS = ["H", "C", "N", "O", "F", "S", "Cl"]


def _load(name):
    with open(os.path.join(REFERENCE, name + ".json")) as f:
        d = json.load(f)
    return np.array(d["species"], np.int32), np.array(d["coordinates"], float)


def structures(seed, n, water_fraction=0.25):
    """n (numbers, positions) pairs."""
    with open(os.path.join(REFERENCE, "index.json")) as f:
        names = [s["name"] for s in json.load(f)["structures"] if s["name"].startswith("g2_")]
    molecules = [_load(name) for name in names]
    wz, wr = _load("water_cluster_100")
    oxygens = wr[0::3]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if rng.random() < water_fraction:
            k = rng.integers(3, 7)
            centre = rng.integers(len(oxygens))
            nearest = np.argsort(np.linalg.norm(oxygens - oxygens[centre], axis=1))[:k]
            atoms = np.concatenate([[3 * m, 3 * m + 1, 3 * m + 2] for m in nearest])
            z, r = wz[atoms], wr[atoms] - oxygens[centre]
        else:
            z, r = molecules[rng.integers(len(molecules))]
        sigma = rng.uniform(0.03, 0.12)
        out.append((z.copy(), r + rng.normal(0.0, sigma, r.shape)))
    return out


def label(model, systems):
    """ANI-2x energies [n] (eV) and forces (list of [atoms, 3], eV/A) through an mlff.Model."""
    energies, forces = model.evaluate_batch([z for z, _ in systems], [r for _, r in systems])
    return np.asarray(energies), [np.asarray(f) for f in forces]
