#!/usr/bin/python3
"""Energy conservation in NVE molecular dynamics through the ASE calculator,
and no plan rebuilds while atoms move.

System: water_cluster_100 (300 atoms), float32, velocity Verlet, 0.5 fs.

Protocol. The reference geometry is far from equilibrium: started from it,
the cluster heats from 300 K to about 800 K within 0.2 ps, and at 800 K the
velocity Verlet energy error on the O-H stretches alone is about 3e-4 eV per
atom (an integrator effect: it scales with dt^2 -- 0.25 fs gave 7e-5 -- and
is not float32 noise). So, as one would before production MD:
  1. relax the cluster (LBFGS to fmax 0.2 eV/A),
  2. draw Maxwell-Boltzmann velocities for 600 K (from a minimum, half of the
     kinetic energy goes into the potential: the cluster then sits near
     300 K), zero momentum and angular momentum,
  3. equilibrate 200 NVE steps (not measured),
  4. run 1000 NVE steps of 0.5 fs and record E_tot = E_pot + E_kin per step.

Measured, over those 1000 steps (N = 300 atoms):
  - drift (the asserted criterion): slope of a least-squares line through
    E_tot(t), times the run length, divided by N: must stay below 1e-4 eV
    per atom;
  - fluctuation: max |E_tot(t) - E_tot(0)| / N. At 300 K and 0.5 fs this is
    about 1.4e-4 eV/atom here, bounded and not growing: the shadow-energy
    oscillation of velocity Verlet, again O(dt^2). It is asserted below a
    looser 5e-4 eV/atom, which still catches force noise or jumps (a kink
    at the cutoff, a wrong force, a rebuilt plan with other numbers).
Also asserted: the calculator's context keeps one compiled plan
(plan_builds constant over all MD steps), runs again only what the
positions change (nodes_reused grows) and evaluates once per step.

Usage: test_md.py   (PYTHONPATH and MLFF_LIBRARY as set by meson)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.require("numpy", "ase")
import numpy as np  # noqa: E402
from ase import units  # noqa: E402
from ase.md.velocitydistribution import (MaxwellBoltzmannDistribution,  # noqa: E402
                                         Stationary, ZeroRotation)
from ase.md.verlet import VelocityVerlet  # noqa: E402
from ase.optimize import LBFGS  # noqa: E402

from mlff.ase import MLFFCalculator  # noqa: E402

TIMESTEP_FS = 0.5
EQUILIBRATION_STEPS = 200
MEASURED_STEPS = 1000
DRIFT_LIMIT = 1e-4        # eV/atom over the measured run (linear fit)
FLUCTUATION_LIMIT = 5e-4  # eV/atom, max |E_tot(t) - E_tot(0)|


def main():
    failures = []
    atoms = _common.reference_atoms("water_cluster_100")
    n = len(atoms)
    atoms.calc = MLFFCalculator(precision="float32")

    t0 = time.perf_counter()
    with open(os.devnull, "w") as log:
        opt = LBFGS(atoms, logfile=log)
        opt.run(fmax=0.2, steps=300)
    print("relaxed in %d LBFGS steps (%.1f s)" % (opt.nsteps, time.perf_counter() - t0))

    MaxwellBoltzmannDistribution(atoms, temperature_K=600, rng=np.random.default_rng(2024))
    Stationary(atoms)
    ZeroRotation(atoms)
    md = VelocityVerlet(atoms, timestep=TIMESTEP_FS * units.fs)
    md.run(0)  # the forces of the start geometry: the last evaluation that may build
    start = atoms.calc.stats()

    t0 = time.perf_counter()
    md.run(EQUILIBRATION_STEPS)
    energies, temperatures = [], []

    def record():
        energies.append(atoms.get_potential_energy() + atoms.get_kinetic_energy())
        temperatures.append(atoms.get_temperature())

    record()
    md.attach(record, interval=1)
    md.run(MEASURED_STEPS)
    seconds = time.perf_counter() - t0
    end = atoms.calc.stats()

    e = np.array(energies)
    t_ps = np.arange(len(e)) * TIMESTEP_FS * 1e-3
    slope = np.polyfit(t_ps, e, 1)[0]  # eV/ps
    drift = abs(slope) * t_ps[-1] / n
    fluctuation = np.abs(e - e[0]).max() / n
    steps = EQUILIBRATION_STEPS + MEASURED_STEPS
    print("NVE %d atoms, %g fs, %d measured steps after %d: T %.0f-%.0f K (mean %.0f K)"
          % (n, TIMESTEP_FS, MEASURED_STEPS, EQUILIBRATION_STEPS, min(temperatures),
             max(temperatures), np.mean(temperatures)))
    print("  drift (linear fit over %.2f ps): %.2e eV/atom (limit %.0e)"
          % (t_ps[-1], drift, DRIFT_LIMIT))
    print("  max |E_tot(t) - E_tot(0)|: %.2e eV/atom (limit %.0e)"
          % (fluctuation, FLUCTUATION_LIMIT))
    print("  %.1f ms per MD step (ASE included)" % (1e3 * seconds / steps))
    print("  stats at MD start %s, at the end %s" % (start, end))

    if not drift < DRIFT_LIMIT:
        failures.append("energy drift %.2e eV/atom >= %.0e" % (drift, DRIFT_LIMIT))
    if not fluctuation < FLUCTUATION_LIMIT:
        failures.append("energy fluctuation %.2e eV/atom >= %.0e"
                        % (fluctuation, FLUCTUATION_LIMIT))
    if end["plan_builds"] != start["plan_builds"]:
        failures.append("plan_builds grew during MD: %d -> %d"
                        % (start["plan_builds"], end["plan_builds"]))
    if end["nodes_reused"] <= start["nodes_reused"]:
        failures.append("no graph node reused during MD (the self energies read nothing that moves)")
    if end["evaluations"] - start["evaluations"] != steps:
        failures.append("%d evaluations for %d MD steps"
                        % (end["evaluations"] - start["evaluations"], steps))
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
