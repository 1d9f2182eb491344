"""A model loaded into its own libmlff context, with numpy in and out.

One Model owns one context and one model: the library keeps the compiled
plan and its device buffers inside them, so evaluating the same model again
(an MD run, an optimisation) reuses them instead of recompiling. Keep the
Model alive for as long as you evaluate; closing it (or dropping the last
reference) destroys the context.
"""
import collections.abc
import ctypes
import operator
import os
import threading
import weakref

import numpy as np

from . import _lib
from .errors import BY_STATUS, InvalidArgumentError, MLFFError, UnsupportedError


INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# Atoms a batch gathers in evaluate_iter (as `mlff energy` does): enough that
# a GPU is busy and a call's fixed cost is spread thin; on CPUs a call costs
# little beside 10 MFLOP an atom, and small batches keep memory small.
BATCH_ATOMS_GPU = 65536
BATCH_ATOMS_CPU = 1024


def _address(array):
    """Address of a contiguous numpy array's data (the caller keeps it alive).
    Through the buffer protocol: a tenth of the time of array.ctypes, which
    matters at a microsecond a pointer."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError, BufferError):  # read-only or empty
        return array.ctypes.data


def _batch(offsets, numbers, positions, cells, pbc):
    """The library's batch over checked arrays (offsets and numbers already
    checked), and the arrays it points into, which the caller keeps alive
    until the call returns."""
    n_atoms, n_systems = numbers.shape[0], offsets.shape[0] - 1
    positions = _as_reals(positions, (n_atoms, 3), "positions")
    batch = _lib.Batch()
    batch.n_systems = n_systems
    batch.system_offsets = _address(offsets)
    batch.atomic_numbers = _address(numbers)
    batch.positions = _address(positions)
    if cells is not None:
        cells = _as_reals(cells, (n_systems, 3, 3), "cells")
        batch.cells = _address(cells)
    if pbc is not None:
        pbc = _as_pbc(pbc, n_systems)
        batch.pbc = _address(pbc)
    return batch, (offsets, numbers, positions, cells, pbc)


def _integer(value, what, low, high):
    """value as a Python int in [low, high]; floats and bools are refused, so
    that ctypes never truncates or wraps what it is given."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError("%s must be an integer, not %r" % (what, value))
    try:
        number = operator.index(value)
    except TypeError:
        raise ValueError("%s must be an integer, not %r" % (what, value)) from None
    if not low <= number <= high:
        raise ValueError("%s must be between %d and %d, not %d" % (what, low, high, number))
    return number


def _parse_device(device):
    """'cpu', 'opencl:1', ... -> (mlff_device_kind, device_index)."""
    name, _, index = str(device).partition(":")
    if name not in _lib.DEVICES:
        raise ValueError("device must be one of %s (optionally ':INDEX'), not %r"
                         % (", ".join(_lib.DEVICES), device))
    try:
        return _lib.DEVICES[name], _integer(int(index), "device index", 0, INT32_MAX) if index else -1
    except ValueError:
        raise ValueError("bad device index in %r" % (device,)) from None


def _choice(value, table, what):
    try:
        return table[value]
    except (KeyError, TypeError):
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(table), value)) from None


def _as_numbers(numbers, lib, what="atomic numbers"):
    """Atomic numbers as a contiguous 1-D int32 array (no copy if they are
    one already); element symbols are accepted."""
    array = np.asarray(numbers)
    if array.dtype.kind in "USO":
        flat = [lib.mlff_element_number(str(s).encode()) if isinstance(s, (str, np.str_)) else s
                for s in array.ravel().tolist()]
        for symbol, z in zip(array.ravel().tolist(), flat):
            if z == 0:
                raise ValueError("%r is not a chemical element symbol" % (symbol,))
        array = np.asarray(flat).reshape(array.shape)
    if array.ndim != 1:
        raise ValueError("%s must be one-dimensional, not of shape %s" % (what, array.shape))
    if array.dtype.kind not in "iu":
        raise ValueError("%s must be integers, not %s" % (what, array.dtype))
    if array.dtype != np.int32 and array.size and (
            array.min() < -INT32_MAX - 1 or array.max() > INT32_MAX):
        raise ValueError("%s out of range" % what)
    return np.ascontiguousarray(array, dtype=np.int32)


def _as_reals(values, shape, what):
    """values as a contiguous float64 array of exactly this shape."""
    array = np.asarray(values)
    if array.dtype.kind not in "fiu":
        raise ValueError("%s must be real numbers, not %s" % (what, array.dtype))
    if array.shape != shape:
        raise ValueError("%s must have shape %s, not %s" % (what, shape, array.shape))
    return np.ascontiguousarray(array, dtype=np.float64)


def _as_offsets(offsets, n_atoms):
    """System offsets as contiguous int64: 1-D integers from 0 to n_atoms, never decreasing."""
    array = np.asarray(offsets)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise ValueError("offsets must be a one-dimensional array of integers (the number of "
                         "systems + 1), not %s of shape %s" % (array.dtype, array.shape))
    if array.dtype.kind == "u" and array.max() > INT64_MAX:
        raise ValueError("offsets out of range")
    array = np.ascontiguousarray(array, dtype=np.int64)
    if array[0] != 0 or array[-1] != n_atoms:
        raise ValueError("offsets must run from 0 to the number of atoms (%d)" % n_atoms)
    if array.size > 2 and (array[1:] < array[:-1]).any():
        raise ValueError("offsets must not decrease")
    return array


def _as_pbc(pbc, n_systems):
    array = np.asarray(pbc)
    if array.dtype.kind not in "biu":
        raise ValueError("pbc must be booleans, not %s" % array.dtype)
    if array.shape != (n_systems, 3):
        raise ValueError("pbc must have shape (%d, 3), not %s" % (n_systems, array.shape))
    return np.ascontiguousarray(array != 0, dtype=np.uint8)


class SystemArrays(collections.abc.Sequence):
    """Per-system parts of one packed array, as a sequence: item s is the
    view array[offsets[s]:offsets[s + 1]], made when it is asked for (so a
    call returns in constant time whatever the number of systems). .array
    is the whole (n_atoms x 3) array, .offsets the systems' bounds."""

    __slots__ = ("array", "offsets")

    def __init__(self, array, offsets):
        self.array = array
        self.offsets = offsets

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        s = operator.index(index)
        if s < 0:
            s += n
        if not 0 <= s < n:
            raise IndexError("system index out of range")
        return self.array[self.offsets[s]:self.offsets[s + 1]]

    def __iter__(self):
        bounds = self.offsets.tolist()
        array = self.array
        for s in range(len(bounds) - 1):
            yield array[bounds[s]:bounds[s + 1]]

    def __eq__(self, other):
        if not isinstance(other, collections.abc.Sequence):
            return NotImplemented
        return len(self) == len(other) and all(np.array_equal(a, b) for a, b in zip(self, other))

    __hash__ = None

    def __repr__(self):
        return "SystemArrays(%d systems, %d atoms)" % (len(self), len(self.array))


def _pack_systems(numbers, positions):
    """Per-system lists of numbers and positions as the C API wants them:
    (offsets, numbers, positions) concatenated."""
    if len(numbers) != len(positions):
        raise ValueError("%d lists of atomic numbers but %d of positions"
                         % (len(numbers), len(positions)))
    # Whole-batch operations, not a check per system: numpy's loops over
    # the list cost a fraction of Python's.
    try:
        counts = np.fromiter(map(len, numbers), dtype=np.int64, count=len(numbers))
        rows = np.fromiter(map(len, positions), dtype=np.int64, count=len(positions))
        all_numbers = np.concatenate(numbers)
        all_positions = np.concatenate(positions)
    except (TypeError, ValueError) as e:
        raise ValueError("numbers and positions must be one array (or list) per system: "
                         "n atomic numbers and n x 3 positions (%s)" % e) from None
    if all_numbers.ndim != 1 or all_positions.ndim != 2 or all_positions.shape[1] != 3 or (
            counts != rows).any():
        s = int(np.argmax(counts != rows)) if (counts != rows).any() else 0
        raise ValueError("system %d: %s atomic numbers need positions of shape (%d, 3), not %s"
                         % (s, np.shape(numbers[s]), counts[s], np.shape(positions[s])))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, all_numbers, all_positions


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

    Attributes: name, elements (atomic numbers), cutoff (Angstrom),
    interaction_layers (an atom's energy reaches that many cutoffs: 1 for
    ANI, L for a message-passing model of L layers), path, device.

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
        settings.n_threads = _integer(n_threads, "n_threads", 0, INT32_MAX)
        if skin is not None:
            settings.skin = float(skin)
        if max_chunk_atoms is not None:
            settings.max_chunk_atoms = _integer(max_chunk_atoms, "max_chunk_atoms", 1, INT64_MAX)

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
        layers = ctypes.c_int()
        self._check(lib.mlff_model_get_interaction_layers(self._model, ctypes.byref(layers)))
        self.interaction_layers = layers.value
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
        virials): energies an array of n_systems floats in eV, forces a
        sequence of n_i x 3 arrays in eV/Angstrom (views of one array, see
        SystemArrays; None if not asked), virials an n_systems x 3 x 3 array
        in eV.
        """
        if len(numbers) != len(positions):
            raise ValueError("%d lists of atomic numbers but %d of positions"
                             % (len(numbers), len(positions)))
        if not len(numbers):
            return self.evaluate_packed(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros((0, 3)),
                                        cells, pbc, forces, virials)
        offsets, all_numbers, all_positions = _pack_systems(numbers, positions)
        return self.evaluate_packed(offsets, all_numbers, all_positions, cells, pbc, forces, virials)

    def evaluate_packed(self, offsets, numbers, positions, cells=None, pbc=None, forces=True,
                        virials=False):
        """evaluate_batch() on arrays already laid out as the C API wants
        them: system s owns atoms offsets[s]:offsets[s + 1] of numbers (n)
        and positions (n x 3); cells (n_systems x 3 x 3) and pbc
        (n_systems x 3) may be None.

        Shapes, types and ranges are checked here, before the library sees
        them; arrays that are already contiguous int64 (offsets), int32
        (numbers) and float64 (positions, cells) are passed through without
        a copy. The forces come back as one (n x 3) array, split into
        systems lazily (SystemArrays: .array and .offsets)."""
        numbers = _as_numbers(numbers, self._lib)
        n_atoms = numbers.shape[0]
        offsets = _as_offsets(offsets, n_atoms)
        batch, arrays = _batch(offsets, numbers, positions, cells, pbc)
        n_systems = offsets.shape[0] - 1

        energies = np.empty(n_systems, dtype=np.float64)
        out_forces = np.empty((n_atoms, 3), dtype=np.float64) if forces else None
        out_virials = np.empty((n_systems, 3, 3), dtype=np.float64) if virials else None
        results = _lib.Results()
        results.energies = _address(energies)
        if out_forces is not None:
            results.forces = _address(out_forces)
        if out_virials is not None:
            results.virials = _address(out_virials)
        with self._lock:
            self._require_open()
            status = self._lib.mlff_compute(self._model, ctypes.byref(batch), ctypes.byref(results))
            if status != _lib.OK:
                raise self._error(status)
        split = None if out_forces is None else SystemArrays(out_forces, offsets)
        return (energies, split, out_virials) if virials else (energies, split)

    def hessian(self, numbers, positions, cell=None, pbc=None):
        """Energy (eV), forces (eV/Angstrom, n x 3) and Hessian (eV/Angstrom^2,
        3n x 3n, row and column 3 * atom + axis: d2E / dx_ai dx_bj) of one
        system, exact (the library's tangent pass, not finite differences).

        Inputs as for evaluate(); a periodic system's Hessian is taken with
        its cell fixed. Use precision='float64' for vibrational analysis:
        float32 Hessians carry errors of about 1e-4 eV/Angstrom^2. Every
        device computes them (a GPU without fp64 in float32 only).
        Returns (energy, forces, hessian).
        """
        energies, forces, hessians = self.hessian_batch(
            [numbers], [positions], None if cell is None else [cell], None if pbc is None else [pbc])
        return float(energies[0]), forces[0], hessians[0]

    def hessian_batch(self, numbers, positions, cells=None, pbc=None):
        """hessian() of many systems in one library call (inputs as for
        evaluate_batch()). Returns (energies, forces, hessians): energies an
        array of n_systems floats (eV), forces a SystemArrays of n_i x 3
        arrays (eV/Angstrom), hessians a list of (3 n_i) x (3 n_i) arrays
        (eV/Angstrom^2, views of one array). Memory: the Hessians take 8 (3
        n_i)^2 bytes each; gather systems accordingly.
        """
        if not _lib.has("mlff_compute_hessians"):
            raise UnsupportedError("this libmlff (%s) has no Hessians (since 0.6)"
                                   % self._lib.mlff_version_string().decode(), status=_lib.ERROR_UNSUPPORTED)
        if not len(numbers):
            return np.zeros(0), SystemArrays(np.zeros((0, 3)), np.zeros(1, np.int64)), []
        offsets, all_numbers, all_positions = _pack_systems(numbers, positions)
        all_numbers = _as_numbers(all_numbers, self._lib)
        n_atoms = all_numbers.shape[0]
        batch, arrays = _batch(offsets, all_numbers, all_positions, cells, pbc)
        n_systems = offsets.shape[0] - 1
        sizes = 3 * np.diff(offsets)
        starts = np.concatenate(([0], np.cumsum(sizes * sizes)))
        energies = np.empty(n_systems, dtype=np.float64)
        forces = np.empty((n_atoms, 3), dtype=np.float64)
        packed = np.empty(int(starts[-1]), dtype=np.float64)
        results = _lib.HessianResults()
        results.energies = _address(energies)
        results.forces = _address(forces)
        if packed.size:
            results.hessians = _address(packed)
        with self._lock:
            self._require_open()
            status = self._lib.mlff_compute_hessians(self._model, ctypes.byref(batch), ctypes.byref(results))
            if status != _lib.OK:
                raise self._error(status)
        hessians = [packed[starts[s]:starts[s + 1]].reshape(sizes[s], sizes[s]) for s in range(n_systems)]
        return energies, SystemArrays(forces, offsets), hessians

    @property
    def batch_atoms(self):
        """Atoms evaluate_iter gathers into one call on this device."""
        return BATCH_ATOMS_GPU if "gpu" in self.device.lower() else BATCH_ATOMS_CPU

    def evaluate_iter(self, frames, forces=True, virials=False, batch_atoms=None):
        """Streams frames through batches sized to the device, in constant
        memory: for each frame, in order, yields (energy, forces) or, with
        virials=True, (energy, forces, virial), as evaluate() returns them.

        frames: any iterable (a generator reading a file, say) of
        (numbers, positions) or (numbers, positions, cell, pbc), cell and
        pbc None for a molecule. Frames are gathered until they hold
        batch_atoms atoms (default: Model.batch_atoms), evaluated in one
        library call, and handed out before more are read. A bad frame
        raises as evaluate_batch() does, with .system the frame's index in
        frames (from 0); the frames before it have been yielded.
        """
        target = self.batch_atoms if batch_atoms is None else _integer(
            batch_atoms, "batch_atoms", 1, INT64_MAX)
        pending, atoms, first = [], 0, 0
        for frame in frames:
            if len(frame) not in (2, 4):
                raise ValueError("a frame is (numbers, positions) or (numbers, positions, cell, pbc), "
                                 "not %d items" % len(frame))
            pending.append(frame)
            atoms += len(frame[0])
            if atoms >= target:
                yield from self._evaluate_frames(pending, first, forces, virials)
                first += len(pending)
                pending, atoms = [], 0
        if pending:
            yield from self._evaluate_frames(pending, first, forces, virials)

    def _evaluate_frames(self, frames, first, forces, virials):
        periodic = any(len(f) == 4 and f[2] is not None for f in frames)
        cells = pbc = None
        if periodic:
            cells = [np.zeros((3, 3)) if len(f) == 2 or f[2] is None else f[2] for f in frames]
            pbc = [(False, False, False) if len(f) == 2 or f[3] is None else f[3] for f in frames]
        try:
            out = self.evaluate_batch([f[0] for f in frames], [f[1] for f in frames], cells, pbc,
                                      forces=forces, virials=virials)
        except MLFFError as e:
            if e.system is None or first == 0:
                raise
            raise type(e)(e.message, status=e.status, system=e.system + first, atom=e.atom) from None
        energies, split = out[0], out[1]
        forces_of = iter(split) if split is not None else None
        for s in range(len(frames)):
            one = (float(energies[s]), next(forces_of) if forces_of is not None else None)
            yield one + (out[2][s],) if virials else one
