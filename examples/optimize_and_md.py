#!/usr/bin/python3
"""Optimise a molecule with ANI-2x, then run Langevin MD and save the trajectory.

    PYTHONPATH=python /usr/bin/python3 examples/optimize_and_md.py
    PYTHONPATH=python /usr/bin/python3 examples/optimize_and_md.py my_molecule.xyz --steps 2000

The molecule is any file ASE reads (XYZ, SDF, PDB, ...) or a name from ASE's
G2 collection (default: ethanol, CH3CH2OH). Writes
<name>_opt.xyz (the optimised geometry) and <name>_md.traj (every 10th MD
frame; view it with `ase gui <name>_md.traj`) into --outdir.

(From the source tree, PYTHONPATH=python makes `import mlff` work and the
library is found in build/; elsewhere install the package and set
MLFF_LIBRARY to libmlff.so.)
"""
import argparse
import os
import time

import numpy as np
from ase import units
from ase.build import molecule
from ase.io import read, write
from ase.md import MDLogger
from ase.md.langevin import Langevin
from ase.md.velocitydistribution import MaxwellBoltzmannDistribution, Stationary, ZeroRotation
from ase.optimize import BFGS

from mlff.ase import MLFFCalculator


def load(spec):
    """A file ASE can read, or a G2 molecule name."""
    if os.path.exists(spec):
        return read(spec), os.path.splitext(os.path.basename(spec))[0]
    return molecule(spec), spec


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("molecule", nargs="?", default="CH3CH2OH",
                        help="structure file or G2 name (default: CH3CH2OH)")
    parser.add_argument("--steps", type=int, default=1000, help="MD steps of 0.5 fs (default 1000)")
    parser.add_argument("--temperature", type=float, default=300.0, help="K (default 300)")
    parser.add_argument("--precision", default="float32", choices=["float32", "float64"])
    parser.add_argument("--outdir", default=".", help="where to write the results")
    args = parser.parse_args()

    atoms, name = load(args.molecule)
    atoms.calc = MLFFCalculator(precision=args.precision)
    print("%s: %d atoms, %s on %s" % (atoms.get_chemical_formula(), len(atoms),
                                      atoms.calc.engine.name, atoms.calc.engine.device))

    # 1. Geometry optimisation.
    e_start = atoms.get_potential_energy()
    BFGS(atoms, logfile="-").run(fmax=0.01, steps=500)
    print("optimised: E = %.4f eV (%.4f eV below the start)"
          % (atoms.get_potential_energy(), e_start - atoms.get_potential_energy()))
    opt_file = os.path.join(args.outdir, name + "_opt.xyz")
    write(opt_file, atoms)

    # 2. Langevin MD at the chosen temperature.
    MaxwellBoltzmannDistribution(atoms, temperature_K=args.temperature,
                                 rng=np.random.default_rng(7))
    Stationary(atoms)
    ZeroRotation(atoms)
    traj_file = os.path.join(args.outdir, name + "_md.traj")
    md = Langevin(atoms, timestep=0.5 * units.fs, temperature_K=args.temperature,
                  friction=0.01 / units.fs, trajectory=traj_file, loginterval=10,
                  rng=np.random.default_rng(8))
    md.attach(MDLogger(md, atoms, "-", header=True, peratom=False), interval=100)
    t0 = time.perf_counter()
    md.run(args.steps)
    elapsed = time.perf_counter() - t0
    print("MD: %d steps (%.2f ps) in %.1f s, %.1f ms per step; wrote %s and %s"
          % (args.steps, args.steps * 0.5e-3, elapsed, 1e3 * elapsed / max(args.steps, 1),
             opt_file, traj_file))


if __name__ == "__main__":
    main()
