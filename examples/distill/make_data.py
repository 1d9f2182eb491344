"""Label structures (data.py) with ANI-2x through mlff and save them.

    PYTHONPATH=python MLFF_LIBRARY=build/api/libmlff.so python3 examples/distill/make_data.py [N] [OUT.npz]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import data  # noqa: E402
import mlff  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1200
    out = sys.argv[2] if len(sys.argv) > 2 else "distill_data.npz"
    systems = data.structures(0, n)
    energies, forces = [], []
    with mlff.Model(None, device="cpu", precision="float64") as model:
        for k in range(0, n, 100):
            e, f = data.label(model, systems[k:k + 100])
            energies += list(e)
            forces += f
            print("labelled", k + len(e), flush=True)
    counts = np.array([len(z) for z, _ in systems])
    np.savez(out, counts=counts, numbers=np.concatenate([z for z, _ in systems]),
             positions=np.concatenate([r for _, r in systems]), energies=np.array(energies),
             forces=np.concatenate(forces))


if __name__ == "__main__":
    main()
