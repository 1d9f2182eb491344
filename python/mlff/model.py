"""A model loaded into its own libmlff context, with numpy in and out.

One Model owns one context and one model: the library keeps the compiled
plan and its device buffers inside them, so evaluating the same model again
(an MD run, an optimisation) reuses them instead of recompiling. Keep the
Model alive for as long as you evaluate; closing it (or dropping the last
reference) destroys the context.
"""
import ctypes
import os
import threading
import weakref

import numpy as np

from . import _lib
from .errors import BY_STATUS, InvalidArgumentError, MLFFError


def _ptr(array, ctype):
    """A C pointer to a contiguous numpy array (the caller keeps it alive)."""
    return array.ctypes.data_as(ctypes.POINTER(ctype))


def _parse_device(device):
    """'cpu', 'opencl:1', ... -> (mlff_device_kind, device_index)."""
    name, _, index = str(device).partition(":")
    if name not in _lib.DEVICES:
        raise ValueError("device must be one of %s (optionally ':INDEX'), not %r"
                         % (", ".join(_lib.DEVICES), device))
    try:
        return _lib.DEVICES[name], int(index) if index else -1
    except ValueError:
        raise ValueError("bad device index in %r" % (device,)) from None


def _choice(value, table, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(table), value)) from None


def _as_numbers(numbers, lib):
    """Atomic numbers as contiguous int32; element symbols are accepted."""
    array = np.asarray(numbers)
    if array.dtype.kind in "US" or array.dtype == object:
        flat = [lib.mlff_element_number(str(s).encode()) if isinstance(s, str) else s
                for s in array.ravel().tolist()]
        for symbol, z in zip(array.ravel().tolist(), flat):
            if z == 0:
                raise ValueError("%r is not a chemical element symbol" % (symbol,))
        array = np.asarray(flat).reshape(array.shape)
    if array.dtype.kind not in "iub":
        raise ValueError("atomic numbers must be integers, not %s" % array.dtype)
    if array.size and (array.min() < np.iinfo(np.int32).min or array.max() > np.iinfo(np.int32).max):
        raise ValueError("atomic number out of range")
    return np.ascontiguousarray(array, dtype=np.int32)


class Model:
    """An ML force field (ANI-2x by default) on one device.

    path: model file, None for the default model (MLFF_MODEL, then the one
    of the build tree or the installed one). device: 'auto', 'cpu',
    'opencl' or 'vulkan', optionally ':INDEX'. precision: 'float32' or
    'float64'. n_threads: CPU threads (0: all the process may use).

    neighbors: 'auto', 'dense' (all pairs; molecules only) or 'sparse'
    (cell lists; needed for periodic systems). skin: Verlet skin in Angstrom
    for the sparse path (the neighbour list is reused until an atom moved
    more than skin / 2; results do not depend on it beyond rounding; for
    MD, 0.3 suits molecules), None for the library's default.
    max_chunk_atoms: at most that many atoms per pass (None: as many as the
    device's memory allows; results do not depend on it).

    A Model may be shared between threads; calls are serialised, because a
    libmlff context must not be used from two threads at once.
    """

    def __init__(self, path=None, device="auto", precision="float32", neighbors="auto",
                 n_threads=0, skin=None, max_chunk_atoms=None):
        lib = _lib.load()
        settings = _lib.Settings()
        lib.mlff_default_settings(ctypes.byref(settings))
        settings.device, settings.device_index = _parse_device(device)
        settings.precision = _choice(precision, _lib.PRECISIONS, "precision")
        settings.neighbors = _choice(neighbors, _lib.NEIGHBORS, "neighbors")
        if int(n_threads) != n_threads or n_threads < 0:
            raise ValueError("n_threads must be a non-negative integer, not %r" % (n_threads,))
        settings.n_threads = int(n_threads)
        if skin is not None:
            settings.skin = float(skin)
        if max_chunk_atoms is not None:
            if int(max_chunk_atoms) != max_chunk_atoms or max_chunk_atoms < 1:
                raise ValueError("max_chunk_atoms must be a positive integer, not %r" % (max_chunk_atoms,))
            settings.max_chunk_atoms = int(max_chunk_atoms)

        self._lib = lib
        self._lock = threading.Lock()
        self.precision = precision
        ctx, model = _lib.context_p(), _lib.model_p()
        c_path = None if path is None else os.fsencode(path)
        # The device opens while the model file is read.
        status = lib.mlff_open(ctypes.byref(settings), c_path, ctypes.byref(ctx), ctypes.byref(model))
        if ctx.value:
            # Registered before any check: the context goes even if we raise.
            self._close = weakref.finalize(self, lib.mlff_context_destroy, ctx.value)
        self._ctx = ctx.value
        if status != _lib.OK:
            error = self._error(status)
            self.close()
            raise error
        self._model = model.value

        info = _lib.ModelInfo()
        self._check(lib.mlff_model_get_info(self._model, ctypes.byref(info)))
        self.name = info.name.decode()
        self.elements = tuple(info.atomic_numbers[i] for i in range(info.n_elements))
        self.cutoff = info.cutoff
        self.path = os.fsdecode(info.path) if info.path else None
        self.device = lib.mlff_device_description(self._ctx).decode()

    def __repr__(self):
        state = "closed" if self._ctx is None else self.device
        return "<mlff.Model %s (%s), %s, %s>" % (self.name, self.path, self.precision, state)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Destroy the context (and the model with it). Idempotent."""
        with self._lock:
            if getattr(self, "_close", None) is not None:
                self._close()
            self._ctx = None
            self._model = None

    @property
    def closed(self):
        return self._ctx is None

    def _error(self, status):
        """The exception for a failed call, with the context's message."""
        cls = BY_STATUS.get(status, MLFFError)
        if not self._ctx:
            return cls(self._lib.mlff_strerror(status).decode(), status=status)
        message = self._lib.mlff_last_error(self._ctx).decode("utf-8", "replace")
        if not message:
            message = self._lib.mlff_strerror(status).decode()
        system, atom = ctypes.c_int64(-1), ctypes.c_int64(-1)
        self._lib.mlff_last_error_location(self._ctx, ctypes.byref(system), ctypes.byref(atom))
        return cls(message, status=status,
                   system=system.value if system.value >= 0 else None,
                   atom=atom.value if atom.value >= 0 else None)

    def _check(self, status):
        if status != _lib.OK:
            raise self._error(status)

    def stats(self):
        """Counters of the context: evaluations, plan_executions, plan_builds
        (plans created or grown; constant once an MD run is warm),
        neighbor_builds (neighbour list searches; fewer than evaluations in
        MD with a skin), device_pair_lists (evaluations whose pair lists the
        GPU made itself), element_plans (graphs made for the elements of a
        batch: one per set of elements in use), nodes_reused (graph nodes
        not run again because nothing they read changed: in MD, all that
        does not depend on the positions), tuning_record (1 when the
        context uses a record `mlff tune` measured on its device)."""
        stats = _lib.Stats()
        with self._lock:
            self._require_open()
            self._check(self._lib.mlff_get_stats(self._ctx, ctypes.byref(stats)))
        return {"evaluations": stats.evaluations,
                "plan_executions": stats.plan_executions,
                "plan_builds": stats.plan_builds,
                "neighbor_builds": stats.neighbor_builds,
                "device_pair_lists": stats.device_pair_lists,
                "element_plans": stats.element_plans,
                "nodes_reused": stats.nodes_reused,
                "tuning_record": stats.tuning_record}

    def _require_open(self):
        if self._ctx is None:
            raise InvalidArgumentError("this mlff.Model has been closed")

    def evaluate(self, numbers, positions, cell=None, pbc=None, forces=True, virial=False):
        """Energy (eV) and forces (eV/Angstrom, n x 3, or None) of one system,
        and its virial (eV, 3 x 3) if virial=True.

        numbers: n atomic numbers (or element symbols); positions: n x 3
        Angstrom; cell: 3 x 3 (rows are lattice vectors) and pbc: 3 flags,
        for periodic systems. The virial is W = -dE/d(strain) (atoms and
        cell strained together); the stress is -W / volume.
        Returns (energy, forces), or (energy, forces, virial).
        """
        out = self.evaluate_batch(
            [numbers], [positions], None if cell is None else [cell],
            None if pbc is None else [pbc], forces=forces, virials=virial)
        single = (float(out[0][0]), None if out[1] is None else out[1][0])
        return single + (out[2][0],) if virial else single

    def evaluate_batch(self, numbers, positions, cells=None, pbc=None, forces=True,
                       virials=False):
        """Energies, forces (and virials) of many systems in one library call.

        numbers, positions: one entry per system, as for evaluate(); cells,
        pbc: None (no system periodic) or one entry per system. Returns
        (energies, forces) or, with virials=True, (energies, forces,
        virials): energies an array of n_systems floats in eV, forces a list
        of n_i x 3 arrays in eV/Angstrom (None if not asked), virials an
        n_systems x 3 x 3 array in eV.
        """
        if len(numbers) != len(positions):
            raise ValueError("%d lists of atomic numbers but %d of positions"
                             % (len(numbers), len(positions)))
        numbers = [_as_numbers(z, self._lib) for z in numbers]
        positions = [np.asarray(r, dtype=np.float64) for r in positions]
        counts = []
        for s, (z, r) in enumerate(zip(numbers, positions)):
            if z.ndim != 1 or r.shape != (len(z), 3):
                raise ValueError("system %d: %s atomic numbers need positions of shape (%d, 3), "
                                 "not %s" % (s, z.shape, len(z), r.shape))
            counts.append(len(z))
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return self.evaluate_packed(
            offsets,
            np.concatenate(numbers) if numbers else np.zeros(0, np.int32),
            np.concatenate(positions) if positions else np.zeros((0, 3)),
            cells, pbc, forces, virials)

    def evaluate_packed(self, offsets, numbers, positions, cells=None, pbc=None, forces=True,
                        virials=False):
        """evaluate_batch() on arrays already laid out as the C API wants
        them: system s owns atoms offsets[s]:offsets[s + 1] of numbers (n)
        and positions (n x 3); cells (n_systems x 3 x 3) and pbc
        (n_systems x 3) may be None."""
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        numbers = _as_numbers(numbers, self._lib)
        positions = np.ascontiguousarray(positions, dtype=np.float64)
        n_systems = len(offsets) - 1
        n_atoms = len(numbers)
        if offsets.ndim != 1 or n_systems < 0 or offsets[0] != 0 or offsets[-1] != n_atoms:
            raise ValueError("offsets must run from 0 to the number of atoms (%d)" % n_atoms)
        if positions.shape != (n_atoms, 3):
            raise ValueError("positions must have shape (%d, 3), not %s"
                             % (n_atoms, positions.shape))
        batch = _lib.Batch()
        batch.n_systems = n_systems
        batch.system_offsets = _ptr(offsets, ctypes.c_int64)
        batch.atomic_numbers = _ptr(numbers, ctypes.c_int32)
        batch.positions = _ptr(positions, ctypes.c_double)
        if cells is not None:
            cells = np.ascontiguousarray(cells, dtype=np.float64)
            if cells.shape != (n_systems, 3, 3):
                raise ValueError("cells must have shape (%d, 3, 3), not %s"
                                 % (n_systems, cells.shape))
            batch.cells = _ptr(cells, ctypes.c_double)
        if pbc is not None:
            pbc = np.ascontiguousarray(np.asarray(pbc, dtype=bool), dtype=np.uint8)
            if pbc.shape != (n_systems, 3):
                raise ValueError("pbc must have shape (%d, 3), not %s" % (n_systems, pbc.shape))
            batch.pbc = _ptr(pbc, ctypes.c_uint8)

        energies = np.empty(n_systems, dtype=np.float64)
        out_forces = np.empty((n_atoms, 3), dtype=np.float64) if forces else None
        out_virials = np.empty((n_systems, 3, 3), dtype=np.float64) if virials else None
        results = _lib.Results()
        results.energies = _ptr(energies, ctypes.c_double)
        if out_forces is not None:
            results.forces = _ptr(out_forces, ctypes.c_double)
        if out_virials is not None:
            results.virials = _ptr(out_virials, ctypes.c_double)
        with self._lock:
            self._require_open()
            status = self._lib.mlff_compute(self._model, ctypes.byref(batch),
                                            ctypes.byref(results))
            if status != _lib.OK:
                raise self._error(status)
        split = None if out_forces is None else [
            out_forces[offsets[s]:offsets[s + 1]] for s in range(n_systems)]
        return (energies, split, out_virials) if virials else (energies, split)
