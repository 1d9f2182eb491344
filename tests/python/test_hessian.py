#!/usr/bin/python3
"""Hessians from Python: mlff.Model.hessian / hessian_batch and
MLFFCalculator.get_hessian / get_vibrations, against the command line
(`mlff hessian`, a C consumer of the same API), central finite differences
of the forces, and ASE's own vibrational analysis (VibrationsData).

Usage: test_hessian.py MLFF_EXE   (PYTHONPATH and MLFF_LIBRARY as set by meson)
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.require("numpy", "ase")
import numpy as np  # noqa: E402
from ase.build import molecule  # noqa: E402
from ase.units import invcm  # noqa: E402

import mlff  # noqa: E402
from mlff.ase import MLFFCalculator  # noqa: E402

MLFF_EXE = None


def cli_hessian(atoms, *options):
    """`mlff hessian` of one Atoms, positions written with repr (exact)."""
    lines = ["%d" % len(atoms), "Properties=species:S:1:pos:R:3"]
    lines += ["%s %r %r %r" % (s, *map(float, p)) for s, p in zip(atoms.get_chemical_symbols(), atoms.positions)]
    proc = subprocess.run([MLFF_EXE, "hessian", *options, "-"], input=("\n".join(lines) + "\n").encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300, check=True)
    return json.loads(proc.stdout)


class HessianTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.calc = MLFFCalculator(device="cpu", precision="float64")
        cls.ethanol = molecule("CH3CH2OH")

    @classmethod
    def tearDownClass(cls):
        cls.calc.close()

    def test_equals_the_command_line(self):
        if MLFF_EXE is None:
            self.skipTest("no MLFF_EXE")
        hessian = self.calc.get_hessian(self.ethanol)
        n = 3 * len(self.ethanol)
        self.assertEqual(hessian.shape, (n, n))
        line = cli_hessian(self.ethanol, "--project", "none")
        deviation = np.abs(hessian - np.array(line["hessian"])).max()
        print("get_hessian vs mlff hessian: %.3g eV/A^2" % deviation)
        self.assertLessEqual(deviation, 1e-12)

    def test_finite_differences(self):
        """Central differences of float64 forces, step 1e-5 Angstrom. CELU
        has no second derivative at 0: a unit whose input changes sign
        within the step puts an O(step) error in the differences, so the
        bound is 1e-4 eV/A^2, not rounding."""
        atoms = molecule("CH3OH")
        hessian = self.calc.get_hessian(atoms)
        model = self.calc.engine
        step, n = 1e-5, 3 * len(atoms)
        differences = np.empty((n, n))
        for i in range(n):
            columns = []
            for sign in (1, -1):
                positions = atoms.positions.copy()
                positions.flat[i] += sign * step
                columns.append(model.evaluate(atoms.numbers, positions)[1].ravel())
            differences[i] = -(columns[0] - columns[1]) / (2 * step)
        deviation = np.abs(hessian - differences).max()
        print("get_hessian vs central differences: %.3g eV/A^2" % deviation)
        self.assertLess(deviation, 1e-4)

    def test_vibrations_data(self):
        """ASE's analysis of our Hessian equals `mlff hessian --project none`
        (same masses: IUPAC 2016 as ase.data; same constants)."""
        if MLFF_EXE is None:
            self.skipTest("no MLFF_EXE")
        vibrations = self.calc.get_vibrations(self.ethanol)
        frequencies = vibrations.get_frequencies()  # imaginary ones as imaginary numbers
        ase_signed = np.where(np.abs(frequencies.imag) > 0, -np.abs(frequencies.imag), frequencies.real)
        ours = np.array(cli_hessian(self.ethanol, "--project", "none")["wavenumbers"])
        clear = np.abs(ours) > 1  # not at a minimum: rotations among them
        relative = np.abs(ase_signed[clear] - ours[clear]) / np.abs(ours[clear])
        print("VibrationsData vs mlff hessian: max relative %.3g" % relative.max())
        self.assertLess(relative.max(), 1e-9)
        self.assertLess(np.abs(ase_signed[~clear] - ours[~clear]).max(), 1.0)
        # The zero-point energy of the real modes, ASE's sum against ours.
        zpe = 0.5 * invcm * ours[ours > 0].sum()
        self.assertAlmostEqual(vibrations.get_zero_point_energy(), zpe, delta=1e-6)

    def test_model_hessian_batch(self):
        """A batch of systems of different sizes gives each its own Hessian."""
        water, methane = molecule("H2O"), molecule("CH4")
        with mlff.Model(device="cpu", precision="float64") as model:
            energies, forces, hessians = model.hessian_batch(
                [water.numbers, methane.numbers], [water.positions, methane.positions])
            for k, atoms in enumerate((water, methane)):
                energy, force, hessian = model.hessian(atoms.numbers, atoms.positions)
                self.assertEqual(hessians[k].shape, (3 * len(atoms),) * 2)
                self.assertAlmostEqual(energies[k], energy, delta=1e-9)
                self.assertLess(np.abs(forces[k] - force).max(), 1e-10)
                self.assertLess(np.abs(hessians[k] - hessian).max(), 1e-9)
                reference = model.evaluate(atoms.numbers, atoms.positions)
                self.assertAlmostEqual(energy, reference[0], delta=1e-9)
            self.assertEqual(model.hessian_batch([], [])[2], [])

    def test_float32(self):
        with mlff.Model(device="cpu", precision="float32") as model:
            _, _, single = model.hessian(self.ethanol.numbers, self.ethanol.positions)
        self.assertLess(np.abs(single - self.calc.get_hessian(self.ethanol)).max(), 1e-2)

    def test_bad_input(self):
        with self.assertRaises(mlff.BadInputError) as caught:
            self.calc.engine.hessian([26, 8], [[0, 0, 0], [0, 0, 1.6]])
        self.assertEqual(caught.exception.atom, 0)
        with self.assertRaises(ValueError):
            self.calc.engine.hessian([8, 1], [[0, 0, 0]])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        MLFF_EXE = sys.argv.pop(1)
    unittest.main()
