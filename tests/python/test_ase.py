#!/usr/bin/python3
"""mlff.ase.MLFFCalculator: energies and forces through ASE against the C
library (the mlff command line, a C consumer of the same API) and TorchANI,
molecules and periodic boxes; the stress against finite differences; the
batch entry point against single calls; reuse of the compiled plan; a BFGS
optimisation; bad input raising clear exceptions.

Usage: test_ase.py [MLFF_EXE]   (PYTHONPATH and MLFF_LIBRARY as set by meson;
without MLFF_EXE the comparison with the command line is skipped)
"""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.require("numpy", "ase")
import numpy as np  # noqa: E402
from ase import Atoms  # noqa: E402
from ase.calculators.calculator import PropertyNotImplementedError  # noqa: E402
from ase.io import read  # noqa: E402
from ase.optimize import BFGS  # noqa: E402

import mlff  # noqa: E402
from mlff.ase import MLFFCalculator  # noqa: E402

MLFF_EXE = None
PRECISIONS = ("float32", "float64")
# Batch against single calls: the same arithmetic, so far below the
# TorchANI tolerances (today they are bitwise equal).
BATCH_TOLERANCE = {"float32": (1e-6, 1e-5), "float64": (1e-10, 1e-9)}

_calculators = {}


def calculator(precision):
    """One calculator per precision for the whole file, as a user would."""
    if precision not in _calculators:
        _calculators[precision] = MLFFCalculator(precision=precision)
    return _calculators[precision]


def command_line(precision, names):
    """Energies and forces of the reference structures from `mlff energy`,
    one process per structure (a single-system batch, as the calculator)."""
    out = {}
    for name in names:
        path = os.path.join(_common.REFERENCE_DIR, name + ".extxyz")
        with tempfile.NamedTemporaryFile(suffix=".extxyz") as tmp:
            subprocess.run([MLFF_EXE, "energy", "--forces", "--precision", precision,
                            "-o", tmp.name, path], check=True, timeout=300)
            frame = read(tmp.name, format="extxyz")
        out[name] = (frame.info["energy"], frame.arrays["forces"])
    return out


ALL_NAMES = _common.reference_names() + _common.reference_names(periodic=True)


class AgainstReferences(unittest.TestCase):
    def check(self, precision):
        calc = calculator(precision)
        cli = command_line(precision, ALL_NAMES) if MLFF_EXE else {}
        for name in ALL_NAMES:
            numbers, positions, cell, pbc, energy, forces = _common.load_reference(name)
            atoms = Atoms(numbers=numbers, positions=positions, cell=cell, pbc=pbc)
            atoms.calc = calc
            e = atoms.get_potential_energy()
            f = atoms.get_forces()
            e_tol, f_tol = _common.tolerances(precision, len(atoms))
            with self.subTest(name=name, precision=precision):
                self.assertEqual(atoms.get_potential_energy(force_consistent=True), e)
                self.assertLessEqual(abs(e - energy), e_tol, "energy vs TorchANI")
                self.assertLessEqual(abs(f - forces).max(), f_tol, "forces vs TorchANI")
                if name in cli:
                    # The command line prints energies exactly and forces
                    # to 11 significant digits.
                    e_cli, f_cli = cli[name]
                    self.assertLessEqual(abs(e - e_cli), 1e-9 * abs(e_cli), "energy vs C")
                    self.assertLessEqual(abs(f - f_cli).max(), 1e-9, "forces vs C")

    def test_float32(self):
        self.check("float32")

    def test_float64(self):
        self.check("float64")


class Stress(unittest.TestCase):
    def test_against_finite_differences(self):
        # float64: central differences of the energy under strain (ASE's
        # own calculate_numerical_stress) are good to about 1e-9 eV/A^3.
        calc = calculator("float64")
        for name in _common.reference_names(periodic=True):
            atoms = _common.reference_atoms(name)
            atoms.calc = calc
            stress = atoms.get_stress()
            numerical = calc.calculate_numerical_stress(atoms, d=1e-5)
            with self.subTest(name=name):
                self.assertEqual(stress.shape, (6,))
                self.assertGreater(abs(stress).max(), 1e-4)  # not trivially zero
                self.assertLess(abs(stress - numerical).max(), 1e-7)
                # float32 within 1e-5 eV/A^3 of float64.
                single = atoms.copy()
                single.calc = calculator("float32")
                self.assertLess(abs(single.get_stress() - stress).max(), 1e-5)

    def test_molecules_have_none(self):
        atoms = _common.reference_atoms("g2_H2O")
        atoms.calc = calculator("float32")
        with self.assertRaises(PropertyNotImplementedError):
            atoms.get_stress()
        atoms.get_potential_energy()  # still fine


class Batch(unittest.TestCase):
    def test_batch_equals_single_calls(self):
        images = [_common.reference_atoms(n) for n in ALL_NAMES]
        for precision in PRECISIONS:
            calc = calculator(precision)
            results = calc.calculate_batch(images, properties=["energy", "forces", "stress"])
            self.assertEqual(len(results), len(images))
            e_tol, f_tol = BATCH_TOLERANCE[precision]
            for atoms, result in zip(images, results):
                single = atoms.copy()
                single.calc = calc
                with self.subTest(formula=atoms.get_chemical_formula(), precision=precision):
                    self.assertLessEqual(
                        abs(result["energy"] - single.get_potential_energy()),
                        e_tol * len(atoms))
                    self.assertEqual(result["free_energy"], result["energy"])
                    self.assertLessEqual(abs(result["forces"] - single.get_forces()).max(),
                                         f_tol)
                    if atoms.pbc.any():
                        self.assertLessEqual(
                            abs(result["stress"] - single.get_stress()).max(), f_tol)
                    else:
                        self.assertNotIn("stress", result)

    def test_energy_only_and_attach(self):
        images = [_common.reference_atoms(n) for n in ("g2_CH4", "g2_H2O", "g2_C6H6")]
        calc = calculator("float32")
        full = calc.calculate_batch(images)
        energy_only = calc.calculate_batch(images, properties=["energy"], attach=True)
        for atoms, a, b in zip(images, full, energy_only):
            self.assertNotIn("forces", b)
            self.assertEqual(a["energy"], b["energy"])
            self.assertEqual(atoms.get_potential_energy(), a["energy"])  # attached
        with self.assertRaises(ValueError):
            calc.calculate_batch(images, properties=["dipole"])

    def test_one_library_call(self):
        images = [_common.reference_atoms(n) for n in ALL_NAMES]
        calc = calculator("float32")
        before = calc.stats()["evaluations"]
        calc.calculate_batch(images)
        self.assertEqual(calc.stats()["evaluations"] - before, 1)


class Streaming(unittest.TestCase):
    """calculate_iter: any number of images through device-sized batches."""

    def test_iter_equals_batch(self):
        images = [_common.reference_atoms(n) for n in ALL_NAMES] * 3
        calc = calculator("float64")
        whole = calc.calculate_batch(images, properties=["energy", "forces", "stress"])
        before = calc.stats()["evaluations"]
        pulled = []

        def lazily():
            for atoms in images:
                pulled.append(atoms)
                yield atoms

        stream = calc.calculate_iter(lazily(), properties=["energy", "forces", "stress"], batch_atoms=200)
        first = next(stream)
        # Only the first batch was read before its results came out.
        self.assertLess(len(pulled), len(images))
        results = [first] + list(stream)
        self.assertEqual(len(results), len(images))
        self.assertGreater(calc.stats()["evaluations"] - before, 2)
        for a, b in zip(whole, results):
            self.assertEqual(set(a), set(b))
            self.assertLessEqual(abs(a["energy"] - b["energy"]), 1e-9)
            self.assertLessEqual(abs(a["forces"] - b["forces"]).max(), 1e-9)
            if "stress" in a:
                self.assertLessEqual(abs(a["stress"] - b["stress"]).max(), 1e-9)

    def test_iter_from_a_file(self):
        from ase.io import iread, write
        images = [_common.reference_atoms(n) for n in ("g2_CH4", "g2_H2O", "g2_C6H6")] * 20
        calc = calculator("float32")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "many.extxyz")
            write(path, images)
            attached = list(calc.calculate_iter(iread(path), attach=True))
        self.assertEqual(len(attached), len(images))
        expected = calc.calculate_batch(images)
        for atoms, result in zip(attached, expected):
            self.assertLessEqual(abs(atoms.get_potential_energy() - result["energy"]), 1e-6)
            self.assertEqual(atoms.get_forces().shape, (len(atoms), 3))
        with self.assertRaises(ValueError):
            list(calc.calculate_iter(images, properties=["dipole"]))


class Reuse(unittest.TestCase):
    def test_no_plan_rebuild_when_atoms_move(self):
        atoms = _common.reference_atoms("g2_CH3CH2OH")
        atoms.calc = MLFFCalculator()
        engine = atoms.calc.engine
        atoms.get_forces()
        builds = atoms.calc.stats()["plan_builds"]
        rng = np.random.default_rng(1)
        for _ in range(20):
            atoms.positions += rng.normal(scale=0.01, size=atoms.positions.shape)
            atoms.get_forces()
        stats = atoms.calc.stats()
        self.assertIs(atoms.calc.engine, engine)
        self.assertEqual(stats["evaluations"], 21)
        self.assertEqual(stats["plan_builds"], builds)

    def test_periodic_with_skin_reuses_neighbour_list(self):
        atoms = _common.reference_atoms("water_box_64")
        atoms.calc = MLFFCalculator(skin=1.0)
        atoms.get_stress()
        start = atoms.calc.stats()
        rng = np.random.default_rng(2)
        for _ in range(10):
            atoms.positions += rng.normal(scale=0.005, size=atoms.positions.shape)
            atoms.get_forces()
            atoms.get_stress()  # same step: no second evaluation
        stats = atoms.calc.stats()
        self.assertEqual(stats["evaluations"] - start["evaluations"], 10)
        self.assertEqual(stats["plan_builds"], start["plan_builds"])
        self.assertEqual(stats["neighbor_builds"], start["neighbor_builds"])

    def test_chunks_give_the_same_stress(self):
        atoms = _common.reference_atoms("water_box_64")
        atoms.calc = MLFFCalculator(precision="float64")
        stress, forces = atoms.get_stress(), atoms.get_forces()
        atoms.calc = MLFFCalculator(precision="float64", max_chunk_atoms=50)
        self.assertLess(abs(atoms.get_stress() - stress).max(), 1e-12)
        self.assertLess(abs(atoms.get_forces() - forces).max(), 1e-10)
        self.assertGreaterEqual(atoms.calc.stats()["plan_executions"], 4)
        with self.assertRaises(ValueError):
            MLFFCalculator(max_chunk_atoms=0)

    def test_set_reopens_engine(self):
        atoms = _common.reference_atoms("g2_H2O")
        calc = MLFFCalculator()
        atoms.calc = calc
        e32 = atoms.get_potential_energy()
        calc.set(precision="float64")
        self.assertEqual(calc.engine.precision, "float64")
        self.assertEqual(calc.results, {})
        e64 = atoms.get_potential_energy()
        self.assertNotEqual(e32, e64)
        self.assertLess(abs(e32 - e64), 1e-4)
        calc.close()
        with self.assertRaises(RuntimeError):
            calc.calculate(atoms)


class Optimisation(unittest.TestCase):
    def test_bfgs_converges(self):
        atoms = _common.reference_atoms("g2_CH3CH2OH")
        atoms.rattle(stdev=0.05, seed=3)
        atoms.calc = MLFFCalculator()
        e0 = atoms.get_potential_energy()
        with open(os.devnull, "w") as log:
            opt = BFGS(atoms, logfile=log)
            converged = opt.run(fmax=0.01, steps=200)
        fmax = np.sqrt((atoms.get_forces() ** 2).sum(axis=1)).max()
        print("BFGS: %d steps, E %.6f -> %.6f eV, fmax %.2g eV/A"
              % (opt.nsteps, e0, atoms.get_potential_energy(), fmax), file=sys.stderr)
        self.assertTrue(converged)
        self.assertLess(fmax, 0.01)
        self.assertLess(atoms.get_potential_energy(), e0)
        # A sane ethanol: the C-C and C-O bonds stayed bonds.
        self.assertLess(atoms.get_distance(0, 1), 1.6)


class Errors(unittest.TestCase):
    def evaluate(self, atoms):
        atoms.calc = calculator("float32")
        return atoms.get_potential_energy()

    def test_periodic_with_dense_neighbours(self):
        box = _common.reference_atoms("water_box_64")
        box.calc = MLFFCalculator(neighbors="dense")
        with self.assertRaises(mlff.UnsupportedError) as cm:
            box.get_potential_energy()
        self.assertIsInstance(cm.exception, NotImplementedError)
        self.assertIn("periodic", str(cm.exception))

    def test_unknown_element(self):
        atoms = _common.reference_atoms("g2_CH3Cl")
        atoms.numbers[2] = 11  # Na
        with self.assertRaises(mlff.BadInputError) as cm:
            self.evaluate(atoms)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertEqual(cm.exception.atom, 2)
        self.assertIn("Na", str(cm.exception))
        self.assertIn("atom index 2", str(cm.exception))

    def test_nan_positions(self):
        atoms = _common.reference_atoms("g2_CH4")
        atoms.positions[3, 1] = np.nan
        with self.assertRaises(mlff.BadInputError) as cm:
            self.evaluate(atoms)
        self.assertEqual(cm.exception.atom, 3)
        self.assertIn("finite", str(cm.exception))

    def test_overlapping_atoms(self):
        atoms = _common.reference_atoms("g2_CH4")
        atoms.positions[4] = atoms.positions[1] + 0.01
        with self.assertRaises(mlff.BadInputError) as cm:
            self.evaluate(atoms)
        self.assertEqual(cm.exception.atom, 4)
        self.assertIn("Angstrom", str(cm.exception))

    def test_still_usable_after_errors(self):
        atoms = _common.reference_atoms("g2_CH4")
        atoms.positions[0, 0] = np.inf
        with self.assertRaises(mlff.BadInputError):
            self.evaluate(atoms)
        self.evaluate(_common.reference_atoms("g2_CH4"))

    def test_missing_model_file(self):
        with self.assertRaises(mlff.FileError) as cm:
            MLFFCalculator(model="/nonexistent/ani.mlff")
        self.assertIsInstance(cm.exception, OSError)
        self.assertIn("/nonexistent/ani.mlff", str(cm.exception))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        MLFF_EXE = sys.argv.pop(1)
    unittest.main()
