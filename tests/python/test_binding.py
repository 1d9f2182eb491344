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
        # Symbols, int64 numbers, Fortran-ordered float32 positions: the same
        # numbers as numbers and C-ordered float64 of the same values (the
        # library keeps float64 positions exact even in float32: only the
        # rounding of the input to float32 moves the energy).
        rounded = np.array(WATER[1], dtype=np.float32)
        e0, f0 = self.model.evaluate(WATER[0], rounded.astype(np.float64))
        positions = np.asfortranarray(rounded)
        e1, f1 = self.model.evaluate(np.array(["O", "H", "H"]), positions.astype(np.float64, order="F"))
        self.assertEqual(e0, e1)
        e2, _ = self.model.evaluate(np.array(WATER[0], dtype=np.int64), positions)
        self.assertEqual(e0, e2)
        e3, _ = self.model.evaluate(*WATER)
        self.assertAlmostEqual(e0, e3, delta=1e-3)  # float32 rounding of the input

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


class CapturingLibrary:
    """The library with mlff_compute replaced by one that records what it was
    given (the Batch's addresses) and computes nothing."""

    def __init__(self, real):
        self.real = real
        self.batches = []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def mlff_compute(self, model, batch, results):
        b = batch._obj
        self.batches.append((b.n_systems, b.system_offsets, b.atomic_numbers, b.positions, b.cells, b.pbc))
        return 0


class PackedArguments(unittest.TestCase):
    """evaluate_packed checks shapes, dtypes and ranges before C sees them
    (issue 57: a non-1-D numbers array read past a buffer, (3, 2) was
    flattened, float offsets truncated, huge settings wrapped by ctypes),
    passes contiguous arrays through without copies, and returns the forces
    as one array with per-system views."""

    @classmethod
    def setUpClass(cls):
        cls.model = mlff.Model()

    def packed(self):
        names = _common.reference_names()[:3]
        refs = [_common.load_reference(n) for n in names]
        offsets = np.cumsum([0] + [len(r[0]) for r in refs]).astype(np.int64)
        numbers = np.concatenate([r[0] for r in refs]).astype(np.int32)
        positions = np.ascontiguousarray(np.concatenate([r[1] for r in refs]))
        return offsets, numbers, positions

    def test_bad_arguments(self):
        offsets, numbers, positions = self.packed()
        n = len(numbers)
        m = self.model
        cases = [
            ("numbers of shape (3, 0)", lambda: m.evaluate_packed([0, 0], np.zeros((3, 0), np.int32), np.zeros((0, 3)))),
            ("numbers of shape (3, 2)", lambda: m.evaluate_packed([0, 3], np.ones((3, 2), np.int32), np.zeros((3, 3)))),
            ("numbers as floats", lambda: m.evaluate_packed(offsets, numbers.astype(float), positions)),
            ("numbers beyond int32", lambda: m.evaluate_packed(offsets, numbers.astype(np.int64) + 2**40, positions)),
            ("float offsets", lambda: m.evaluate_packed(np.array([0, 3.7, n]), numbers, positions)),
            ("integral float offsets", lambda: m.evaluate_packed(offsets.astype(float), numbers, positions)),
            ("2-D offsets", lambda: m.evaluate_packed(offsets[None, :], numbers, positions)),
            ("empty offsets", lambda: m.evaluate_packed([], numbers, positions)),
            ("decreasing offsets", lambda: m.evaluate_packed([0, 5, 2, n], numbers, positions)),
            ("offsets not ending at n", lambda: m.evaluate_packed([0, n - 1], numbers, positions)),
            ("huge unsigned offsets", lambda: m.evaluate_packed(np.array([0, 2**63 + 5], np.uint64), numbers, positions)),
            ("positions (n, 2)", lambda: m.evaluate_packed(offsets, numbers, positions[:, :2])),
            ("positions flat", lambda: m.evaluate_packed(offsets, numbers, positions.ravel())),
            ("positions as strings", lambda: m.evaluate_packed(offsets, numbers, positions.astype(str))),
            ("cells of one system", lambda: m.evaluate_packed(offsets, numbers, positions, cells=np.eye(3))),
            ("pbc as strings", lambda: m.evaluate_packed(offsets, numbers, positions, cells=np.zeros((3, 3, 3)),
                                                         pbc=[["F"] * 3] * 3)),
            ("pbc of the wrong shape", lambda: m.evaluate_packed(offsets, numbers, positions, pbc=[True] * 3)),
        ]
        for what, call in cases:
            with self.subTest(what):
                with self.assertRaises(ValueError):
                    call()
        for kwargs in ({"n_threads": 2**40}, {"n_threads": -1}, {"n_threads": 2.5}, {"n_threads": True},
                       {"max_chunk_atoms": 2**70}, {"max_chunk_atoms": 0}, {"max_chunk_atoms": 3.0},
                       {"device": "cpu:99999999999"}, {"device": "cpu:-2"}):
            with self.subTest(**kwargs):
                with self.assertRaises(ValueError):
                    mlff.Model(**kwargs)
        # Still fine afterwards, and numpy integers are integers.
        mlff.Model(n_threads=np.int64(1), max_chunk_atoms=np.int32(1000)).evaluate(*WATER)
        self.model.evaluate_packed(offsets, numbers, positions)

    def test_no_copies(self):
        offsets, numbers, positions = self.packed()
        capture = CapturingLibrary(self.model._lib)
        model = mlff.Model()
        model._lib = capture
        try:
            model.evaluate_packed(offsets, numbers, positions)
            n, off, z, r, cells, pbc = capture.batches[-1]
            self.assertEqual((n, off, z, r), (len(offsets) - 1, offsets.ctypes.data, numbers.ctypes.data,
                                              positions.ctypes.data))
            self.assertIsNone(cells)
            self.assertIsNone(pbc)
            # Read-only arrays pass through too; other layouts are converted.
            positions.flags.writeable = False
            model.evaluate_packed(offsets, numbers, positions)
            self.assertEqual(capture.batches[-1][3], positions.ctypes.data)
            model.evaluate_packed(offsets, numbers.astype(np.int64), np.asfortranarray(positions))
            self.assertNotEqual(capture.batches[-1][2], numbers.ctypes.data)
        finally:
            model._lib = capture.real
            model.close()

    def test_forces_as_one_array(self):
        offsets, numbers, positions = self.packed()
        energies, forces = self.model.evaluate_packed(offsets, numbers, positions)
        self.assertIsInstance(forces, mlff.SystemArrays)
        self.assertEqual(forces.array.shape, (len(numbers), 3))
        np.testing.assert_array_equal(forces.offsets, offsets)
        self.assertEqual(len(forces), len(offsets) - 1)
        for s, f in enumerate(forces):
            self.assertTrue(np.shares_memory(f, forces.array))
            np.testing.assert_array_equal(f, forces.array[offsets[s]:offsets[s + 1]])
            np.testing.assert_array_equal(forces[s - len(forces)], f)
        self.assertEqual(len(forces[1:]), len(forces) - 1)
        self.assertEqual(forces, list(forces))
        with self.assertRaises(IndexError):
            forces[len(forces)]
        one_by_one = [self.model.evaluate(numbers[a:b], positions[a:b]) for a, b in zip(offsets, offsets[1:])]
        for (e, f), e2, f2 in zip(one_by_one, energies, forces):
            self.assertLessEqual(abs(e - e2), 1e-4)
            self.assertLessEqual(abs(f - f2).max(), 1e-4)


class Streaming(unittest.TestCase):
    def test_evaluate_iter(self):
        model = mlff.Model(precision="float64")
        names = _common.reference_names() + _common.reference_names(periodic=True)
        frames = []
        for name in names:
            numbers, positions, cell, pbc, _, _ = _common.load_reference(name)
            frames.append((numbers, positions, cell, pbc) if pbc.any() else (numbers, positions))
        frames = frames * 2
        before = model.stats()["evaluations"]
        results = list(model.evaluate_iter(iter(frames), virials=True, batch_atoms=100))
        self.assertGreater(model.stats()["evaluations"] - before, 2)
        self.assertEqual(len(results), len(frames))
        for frame, (e, f, w) in zip(frames, results):
            cell, pbc = (frame[2], frame[3]) if len(frame) == 4 else (None, None)
            e1, f1, w1 = model.evaluate(frame[0], frame[1], cell, pbc, virial=True)
            self.assertLessEqual(abs(e - e1), 1e-9)
            self.assertLessEqual(abs(f - f1).max(), 1e-9)
            self.assertLessEqual(abs(w - w1).max(), 1e-9)
        # A bad frame: the error names its index in the stream.
        bad = [(WATER[0], WATER[1])] * 7 + [([8, 11, 1], WATER[1])] + [(WATER[0], WATER[1])] * 3
        stream = model.evaluate_iter(bad, batch_atoms=6)
        got = []
        with self.assertRaises(mlff.BadInputError) as cm:
            for result in stream:
                got.append(result)
        self.assertEqual(cm.exception.system, 7)
        self.assertIn("system index 7", str(cm.exception))
        self.assertEqual(len(got), 6)  # the batches before the bad frame's
        with self.assertRaises(ValueError):
            list(model.evaluate_iter([(WATER[0],)]))


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
