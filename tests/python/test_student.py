"""The PaiNN student distilled from ANI-2x (examples/distill/student.mlff):
its error against ANI-2x (this build's model, float64, CPU) on a fixed
held-out set (examples/distill/data.py, seed 1: 40 structures the training
never saw) stays within what the README reports, and `mlff energy --model`
and the ASE calculator run it (the same numbers as mlff.Model)."""
import os
import subprocess
import sys
import tempfile

from _common import require

require("numpy", "ase")

import ase  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DISTILL = os.path.join(HERE, "..", "..", "examples", "distill")
sys.path.insert(0, DISTILL)

import data  # noqa: E402
import mlff  # noqa: E402
from mlff.ase import MLFFCalculator  # noqa: E402

STUDENT = os.path.join(DISTILL, "student.mlff")
# What the README reports for this set (energy per atom, eV; forces, eV/A).
ENERGY_MAE, FORCES_MAE = 0.012, 0.28

failures = []


def check(ok, what):
    print("%-4s %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def main():
    held = data.structures(1, 40)
    with mlff.Model(None, device="cpu", precision="float64") as teacher:
        e_ani, f_ani = data.label(teacher, held)
    with mlff.Model(STUDENT, device="cpu", precision="float64") as student:
        e, f = data.label(student, held)
    counts = np.array([len(z) for z, _ in held])
    de = np.mean(np.abs(e - e_ani) / counts)
    df = np.mean(np.abs(np.concatenate(f) - np.concatenate(f_ani)))
    check(de <= ENERGY_MAE and df <= FORCES_MAE,
          "student against ANI-2x on %d held-out structures: energy MAE %.4f eV/atom (<= %g), forces MAE %.4f eV/A "
          "(<= %g)" % (len(held), de, ENERGY_MAE, df, FORCES_MAE))

    numbers, pos = held[0]
    with tempfile.TemporaryDirectory() as tmp:
        xyz = os.path.join(tmp, "m.xyz")
        with open(xyz, "w") as out:
            out.write("%d\n\n" % len(numbers))
            for z, p in zip(numbers, pos):
                out.write("%s %.17g %.17g %.17g\n" % ((ase.data.chemical_symbols[z],) + tuple(p)))
        if len(sys.argv) > 1:
            run = subprocess.run([sys.argv[1], "energy", "--model", STUDENT, "--device", "cpu", "--precision",
                                  "float64", xyz], capture_output=True, text=True)
            energy = [float(w.split("=")[1]) for w in run.stdout.split() if w.startswith("energy=")]
            check(run.returncode == 0 and len(energy) == 1 and abs(energy[0] - e[0]) <= 1e-8,
                  "mlff energy --model student.mlff: %s eV against mlff.Model's %.10f %s" % (
                      energy, e[0], run.stderr.strip()))
    atoms = ase.Atoms(numbers=numbers, positions=pos)
    atoms.calc = MLFFCalculator(model=STUDENT, device="cpu", precision="float64")
    check(abs(atoms.get_potential_energy() - e[0]) <= 1e-8 and np.abs(atoms.get_forces() - f[0]).max() <= 1e-8,
          "ASE calculator runs the student: energy %.10f eV" % atoms.get_potential_energy())
    if failures:
        print("%d failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
