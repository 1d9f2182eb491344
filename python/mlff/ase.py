"""ASE calculator for mlff.

    from mlff.ase import MLFFCalculator
    atoms.calc = MLFFCalculator()                 # ANI-2x, best device, float32
    atoms.get_potential_energy(), atoms.get_forces(), atoms.get_stress()

The calculator owns one mlff.Model (one libmlff context and model) for its
whole life, so the compiled plan and the device buffers are reused from one
call to the next: an MD run or an optimisation does not recompile or
reallocate per step. calculate_batch() evaluates many Atoms in one library
call, for screening; calculate_iter() streams any number of them (from
ase.io.iread, say) through batches sized to the device, in constant memory.

get_hessian(atoms) gives the exact Hessian (eV/Angstrom^2, 3N x 3N) and
get_vibrations(atoms) an ase.vibrations.VibrationsData built on it, so that
ASE's vibrational analysis (frequencies, modes, zero-point energy,
thermochemistry) runs on the analytic Hessian instead of finite
differences; use precision='float64' for them.

Periodic systems (any pbc True) go through libmlff's sparse neighbour path
and also get the stress, from the library's virial: stress = -W / volume
(eV/Angstrom^3, ASE's sign and Voigt order). Molecules (no pbc) have no
stress: asking for it raises PropertyNotImplementedError, as in ASE.
"""
import os

import numpy as np
from ase.calculators.calculator import Calculator, PropertyNotImplementedError, all_changes
from ase.calculators.singlepoint import SinglePointCalculator
from ase.stress import full_3x3_to_voigt_6_stress

from .model import Model

# Parameters that define the libmlff context and model: changing one of
# them (calc.set(...)) opens a new one.
_ENGINE_PARAMETERS = ("model", "device", "precision", "neighbors", "n_threads", "skin", "max_chunk_atoms")


def _is_periodic(atoms):
    return bool(np.any(atoms.pbc))


class MLFFCalculator(Calculator):
    """ANI-2x (or another mlff model) energies, forces and stress for ASE.

    model: path of a model file, None for the default ANI-2x.
    device: 'auto', 'cpu', 'opencl', 'vulkan' (optionally ':INDEX').
    precision: 'float32' or 'float64' (energies are summed in double either way).
    neighbors: 'auto', 'dense' (all pairs, molecules only) or 'sparse' (cell
        lists; periodic systems need it or 'auto').
    n_threads: CPU threads, 0 for all the process may use.
    skin: Verlet skin in Angstrom for the sparse neighbour list (reused until
        an atom moved more than skin / 2; results do not depend on it),
        None for the library's default.
    max_chunk_atoms: at most that many atoms per pass (None: as many as the
        device's memory allows; results do not depend on it).
    Further keywords (label, directory, ...) go to ase's Calculator.

    Energy and forces (and, for periodic systems, the stress) are always
    computed together: ASE asks for them together at each step of MD or an
    optimisation, and one pass serves them all.
    """

    implemented_properties = ["energy", "free_energy", "forces", "stress"]
    default_parameters = {
        "model": None,
        "device": "auto",
        "precision": "float32",
        "neighbors": "auto",
        "n_threads": 0,
        "skin": None,
        "max_chunk_atoms": None,
    }

    def __init__(self, model=None, device="auto", precision="float32", neighbors="auto",
                 n_threads=0, skin=None, max_chunk_atoms=None, **kwargs):
        self._engine = None
        if model is not None:
            model = os.fspath(model)
        super().__init__(model=model, device=device, precision=precision,
                         neighbors=neighbors, n_threads=n_threads, skin=skin,
                         max_chunk_atoms=max_chunk_atoms, **kwargs)
        self._engine = self._open()

    def _open(self):
        p = self.parameters
        return Model(p["model"], device=p["device"], precision=p["precision"],
                     neighbors=p["neighbors"], n_threads=p["n_threads"], skin=p["skin"],
                     max_chunk_atoms=p["max_chunk_atoms"])

    def set(self, **kwargs):
        """Change parameters; a new engine is opened if one defining it changed."""
        if kwargs.get("model") is not None:
            kwargs["model"] = os.fspath(kwargs["model"])
        changed = super().set(**kwargs)
        if self._engine is not None and any(k in changed for k in _ENGINE_PARAMETERS):
            self._engine.close()
            self._engine = None
            self.reset()
            self._engine = self._open()
        return changed

    @property
    def engine(self):
        """The mlff.Model behind this calculator (name, elements, stats())."""
        return self._engine

    def stats(self):
        """libmlff counters of this calculator's context (see mlff.Model.stats)."""
        return self._engine.stats()

    def close(self):
        """Release the libmlff context now instead of when garbage collected."""
        if self._engine is not None:
            self._engine.close()

    def calculate(self, atoms=None, properties=("energy",), system_changes=all_changes):
        super().calculate(atoms, properties, system_changes)
        if "stress" in properties and not _is_periodic(self.atoms):
            raise PropertyNotImplementedError(
                "stress needs a periodic system (pbc); this one has none")
        self.results = self._evaluate([self.atoms], want_forces=True)[0]

    def calculate_batch(self, images, properties=("energy", "forces"), attach=False):
        """Evaluate many Atoms in one libmlff call (screening).

        Returns one results dict per image ('energy', 'free_energy', and if
        asked 'forces' and, for periodic images, 'stress'), in order.
        attach=True also gives each image a SinglePointCalculator holding
        its results, so that image.get_potential_energy() works afterwards
        without this calculator. The calculator's own state (self.atoms,
        self.results) is left alone.
        """
        images = list(images)
        unknown = set(properties) - set(self.implemented_properties)
        if unknown:
            raise ValueError("cannot compute %s; implemented: %s"
                             % (", ".join(sorted(unknown)), ", ".join(self.implemented_properties)))
        results = self._evaluate(images, want_forces="forces" in properties,
                                 want_stress="stress" in properties)
        if attach:
            for atoms, result in zip(images, results):
                atoms.calc = SinglePointCalculator(atoms, **result)
        return results

    def calculate_iter(self, images, properties=("energy", "forces"), attach=False,
                       batch_atoms=None):
        """Stream Atoms through batches sized to the device (a dataset of
        any size, e.g. ase.io.iread("big.extxyz")): a generator of one
        results dict per image, in order, as calculate_batch() gives them.

        Images are gathered until they hold batch_atoms atoms (default: the
        engine's batch_atoms, 65536 on GPUs and 1024 elsewhere), evaluated
        in one library call, and their results handed out before more images
        are read: memory stays flat whatever the number of images.
        attach=True yields the images themselves, each with a
        SinglePointCalculator holding its results, instead of the dicts.
        """
        unknown = set(properties) - set(self.implemented_properties)
        if unknown:
            raise ValueError("cannot compute %s; implemented: %s"
                             % (", ".join(sorted(unknown)), ", ".join(self.implemented_properties)))
        if self._engine is None or self._engine.closed:
            raise RuntimeError("this MLFFCalculator has been closed")
        target = self._engine.batch_atoms if batch_atoms is None else int(batch_atoms)
        if target < 1:
            raise ValueError("batch_atoms must be positive, not %r" % (batch_atoms,))
        pending, atoms = [], 0
        for image in images:
            pending.append(image)
            atoms += len(image)
            if atoms >= target:
                yield from self._stream_out(pending, properties, attach)
                pending, atoms = [], 0
        if pending:
            yield from self._stream_out(pending, properties, attach)

    def _stream_out(self, images, properties, attach):
        results = self._evaluate(images, want_forces="forces" in properties,
                                 want_stress="stress" in properties)
        for image, result in zip(images, results):
            if attach:
                image.calc = SinglePointCalculator(image, **result)
                yield image
            else:
                yield result

    def _evaluate(self, images, want_forces, want_stress=True):
        """One library call for all images; a results dict per image."""
        if self._engine is None or self._engine.closed:
            raise RuntimeError("this MLFFCalculator has been closed")
        periodic = [_is_periodic(atoms) for atoms in images]
        want_virials = want_stress and any(periodic)
        out = self._engine.evaluate_batch(
            [atoms.numbers for atoms in images],
            [atoms.positions for atoms in images],
            cells=[atoms.cell.array for atoms in images] if any(periodic) else None,
            pbc=[atoms.pbc for atoms in images] if any(periodic) else None,
            forces=want_forces, virials=want_virials)
        energies, forces = out[0], out[1]
        results = []
        for i, atoms in enumerate(images):
            result = {"energy": float(energies[i]), "free_energy": float(energies[i])}
            if forces is not None:
                result["forces"] = forces[i].copy()
            if want_virials and periodic[i]:
                stress = self._stress(atoms, out[2][i])
                if stress is not None:
                    result["stress"] = stress
            results.append(result)
        return results

    def get_hessian(self, atoms=None):
        """The Hessian of atoms (default: the calculator's last), d2E/dx dx in
        eV/Angstrom^2, shape (3N, 3N), row and column 3 * atom + axis, as
        ase.vibrations.VibrationsData.from_2d takes it. Exact (the library's
        tangent pass); a periodic system's with its cell fixed. float32
        Hessians carry errors of about 1e-4 eV/Angstrom^2: use
        precision='float64' for vibrations. Only the CPU device computes
        Hessians today (others raise mlff.UnsupportedError)."""
        if self._engine is None or self._engine.closed:
            raise RuntimeError("this MLFFCalculator has been closed")
        atoms = self.atoms if atoms is None else atoms
        if atoms is None:
            raise ValueError("get_hessian needs an Atoms object (none was given or computed before)")
        periodic = _is_periodic(atoms)
        _, _, hessian = self._engine.hessian(
            atoms.numbers, atoms.positions, cell=atoms.cell.array if periodic else None,
            pbc=atoms.pbc if periodic else None)
        return hessian

    def get_vibrations(self, atoms=None):
        """ase.vibrations.VibrationsData of atoms (default: the calculator's
        last) from the analytic Hessian, with the atoms' masses
        (atoms.get_masses()): get_frequencies(), get_energies(),
        get_zero_point_energy(), get_modes(), ... as ASE computes them,
        without the 6N displaced calculations of ase.vibrations.Vibrations.
        Nothing is projected: the 6 (5) rigid motions are among the modes,
        near zero at a minimum."""
        from ase.vibrations import VibrationsData
        atoms = self.atoms if atoms is None else atoms
        hessian = self.get_hessian(atoms)
        return VibrationsData.from_2d(atoms, hessian)

    @staticmethod
    def _stress(atoms, virial):
        """ASE's stress (Voigt, eV/Angstrom^3) from the virial W = -dE/d(strain):
        sigma = -W / V; None where the cell has no volume."""
        volume = abs(np.linalg.det(atoms.cell.array))
        if volume < 1e-9:
            return None
        return full_3x3_to_voigt_6_stress(-virial / volume)
