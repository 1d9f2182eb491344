#!/usr/bin/python3
"""The ctypes binding (mlff.Model) on its own, without ASE: library lookup,
model info, energies and forces against TorchANI, batches, errors.

Usage: test_binding.py   (PYTHONPATH and MLFF_LIBRARY as set by meson)
"""
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.require("numpy")
import numpy as np  # noqa: E402

import mlff  # noqa: E402

WATER = ([8, 1, 1], [[0.0, 0.0, 0.0], [0.96, 0.0, 0.0], [-0.24, 0.93, 0.0]])


def run_python(code, **env_changes):
    """Run code in a fresh /usr/bin/python3 with the environment changed
    (None removes a variable); returns the CompletedProcess."""
    env = dict(os.environ)
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


class LibraryLookup(unittest.TestCase):
    def test_mlff_library_is_used(self):
        path = os.environ.get("MLFF_LIBRARY")
        if not path:
            self.skipTest("MLFF_LIBRARY not set")
        self.assertEqual(os.path.realpath(mlff.library_path()), os.path.realpath(path))
        self.assertEqual(mlff.library_version(), mlff.__version__)

    def test_bad_mlff_library_is_an_error_not_a_fallback(self):
        r = run_python("import mlff; mlff.Model()", MLFF_LIBRARY="/nonexistent/libmlff.so")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("LibraryNotFoundError", r.stderr)
        self.assertIn("MLFF_LIBRARY=/nonexistent/libmlff.so", r.stderr)

    def test_system_library_path(self):
        # Without MLFF_LIBRARY: the build tree (if this is one) or the
        # loader's path; give the latter the library's folder.
        path = os.environ.get("MLFF_LIBRARY")
        if not path:
            self.skipTest("MLFF_LIBRARY not set")
        r = run_python("import mlff; print(mlff.library_path()); print(mlff.Model().name)",
                       MLFF_LIBRARY=None, LD_LIBRARY_PATH=os.path.dirname(path))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.strip().endswith("ANI-2x"), r.stdout)


class ModelBasics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = mlff.Model()

    def test_info(self):
        m = self.model
        self.assertEqual(m.name, "ANI-2x")
        self.assertEqual(sorted(m.elements), [1, 6, 7, 8, 9, 16, 17])
        self.assertAlmostEqual(m.cutoff, 5.1)
        self.assertTrue(os.path.exists(m.path), m.path)
        self.assertTrue(m.device)
        self.assertIn("cpu", mlff.list_devices())

    def test_outputs(self):
        energy, forces = self.model.evaluate(*WATER)
        self.assertIsInstance(energy, float)
        self.assertEqual(forces.shape, (3, 3))
        self.assertEqual(forces.dtype, np.float64)
        self.assertLess(abs(forces.sum(axis=0)).max(), 1e-4)  # no net force
        energy2, none = self.model.evaluate(*WATER, forces=False)
        self.assertIsNone(none)
        self.assertEqual(energy, energy2)

    def test_symbols_and_odd_layouts(self):
        # Symbols, int64 numbers, Fortran-ordered float32 positions.
        e0, f0 = self.model.evaluate(*WATER)
        positions = np.asfortranarray(np.array(WATER[1], dtype=np.float32))
        e1, f1 = self.model.evaluate(np.array(["O", "H", "H"]), positions.astype(np.float64))
        self.assertEqual(e0, e1)
        e2, _ = self.model.evaluate(np.array(WATER[0], dtype=np.int64), positions)
        self.assertAlmostEqual(e0, e2, delta=1e-3)  # float32 rounding of the input

    def test_batch_and_packed(self):
        names = _common.reference_names()[:4]
        refs = [_common.load_reference(n) for n in names]
        energies, forces = self.model.evaluate_batch([r[0] for r in refs], [r[1] for r in refs])
        offsets = np.cumsum([0] + [len(r[0]) for r in refs])
        e2, f2 = self.model.evaluate_packed(offsets, np.concatenate([r[0] for r in refs]),
                                            np.concatenate([r[1] for r in refs]))
        np.testing.assert_array_equal(energies, e2)
        for a, b, r in zip(forces, f2, refs):
            self.assertEqual(a.shape, (len(r[0]), 3))
            np.testing.assert_array_equal(a, b)
        empty_e, empty_f = self.model.evaluate_batch([], [])
        self.assertEqual(empty_e.shape, (0,))
        self.assertEqual(empty_f, [])

    def test_python_side_argument_errors(self):
        with self.assertRaises(ValueError):
            self.model.evaluate([8, 1], WATER[1])  # 2 numbers, 3 positions
        with self.assertRaises(ValueError):
            self.model.evaluate(["O", "Xx", "H"], WATER[1])
        with self.assertRaises(ValueError):
            mlff.Model(precision="float16")
        with self.assertRaises(ValueError):
            mlff.Model(device="tpu")

    def test_library_errors(self):
        with self.assertRaises(mlff.BadInputError) as cm:
            self.model.evaluate([8, 11, 1], WATER[1])
        e = cm.exception
        self.assertIsInstance(e, ValueError)
        self.assertEqual((e.status, e.system, e.atom), (-5, 0, 1))
        self.assertIn("Na", str(e))
        self.assertIn("atom index 1", str(e))
        # The location is per system of a batch.
        with self.assertRaises(mlff.BadInputError) as cm:
            self.model.evaluate_batch([WATER[0], WATER[0]],
                                      [WATER[1], [[0, 0, 0], [0.96, 0, 0], [0, 0, np.nan]]])
        self.assertEqual((cm.exception.system, cm.exception.atom), (1, 2))
        self.assertIn("not finite", str(cm.exception))
        # The context still works after an error.
        self.model.evaluate(*WATER)

    def test_virial_and_neighbour_modes(self):
        numbers, positions, cell, pbc, _, _ = _common.load_reference("water_box_64")
        energy, forces, virial = self.model.evaluate(numbers, positions, cell, pbc, virial=True)
        self.assertEqual(virial.shape, (3, 3))
        self.assertLess(abs(virial - virial.T).max(), 1e-3)  # rotation invariance
        self.assertEqual(self.model.evaluate(numbers, positions, cell, pbc)[0], energy)
        # The dense search takes molecules only, and says so.
        dense = mlff.Model(neighbors="dense")
        with self.assertRaises(mlff.UnsupportedError) as cm:
            dense.evaluate(numbers, positions, cell, pbc)
        self.assertIsInstance(cm.exception, NotImplementedError)
        self.assertIn("periodic", str(cm.exception))
        # Both searches give the same numbers for a molecule.
        sparse = mlff.Model(neighbors="sparse", skin=1.0)
        e_dense, f_dense = dense.evaluate(*WATER)
        e_sparse, f_sparse = sparse.evaluate(*WATER)
        self.assertLess(abs(e_dense - e_sparse), 1e-5)
        self.assertLess(abs(f_dense - f_sparse).max(), 1e-5)
        with self.assertRaises(mlff.InvalidArgumentError):
            mlff.Model(skin=-1.0)

    def test_model_file_errors(self):
        with self.assertRaises(mlff.FileError) as cm:
            mlff.Model("/nonexistent/model.mlff")
        self.assertIsInstance(cm.exception, OSError)
        self.assertIn("/nonexistent/model.mlff", str(cm.exception))
        with self.assertRaises(mlff.ModelFormatError):
            mlff.Model(os.path.abspath(__file__))

    def test_close(self):
        m = mlff.Model()
        with m:
            m.evaluate(*WATER)
        self.assertTrue(m.closed)
        with self.assertRaises(mlff.MLFFError):
            m.evaluate(*WATER)
        m.close()  # twice is fine


class AgainstTorchANI(unittest.TestCase):
    def check(self, precision):
        model = mlff.Model(precision=precision)
        for name in _common.reference_names() + _common.reference_names(periodic=True):
            numbers, positions, cell, pbc, energy, forces = _common.load_reference(name)
            e_tol, f_tol = _common.tolerances(precision, len(numbers))
            e, f = model.evaluate(numbers, positions, cell, pbc)
            with self.subTest(name=name, precision=precision):
                self.assertLessEqual(abs(e - energy), e_tol)
                self.assertLessEqual(abs(f - forces).max(), f_tol)

    def test_float32(self):
        self.check("float32")

    def test_float64(self):
        self.check("float64")


if __name__ == "__main__":
    unittest.main()
