#!/usr/bin/python3
"""Tests of `mlff hessian`, against independent references.

Usage: test_hessian.py MLFF_EXE DATA_DIR

- The Hessians of the 12 reference molecules against TorchANI's float64 ones
  (DATA_DIR/hessians/*.json, README.md there), and the unprojected
  wavenumbers against TorchANI's, with TorchANI's masses (a masses column)
  and its constants (CODATA 2014, as ASE's: the JSON's wavenumbers come from
  sqrt(eigenvalue) of the Hartree / (amu Angstrom^2) mass-weighted Hessian).
- The projected analysis on its own terms: at minima found by BFGS on
  mlff's float64 forces (ASE through the Python binding: PYTHONPATH and
  MLFF_LIBRARY, as meson sets them), 6 rigid motions of a bent molecule and
  5 of a linear one, the rest clearly not zero, and the zero-point energy.
- Errors: masses, elements, empty input; --device opencl and vulkan give the
  CPU's Hessian, or where there is no such device the library's message.

Needs numpy (and ASE for the minima); exits 77 (skipped) without them,
except under CI=true, where that fails.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
failures = []
report = []

try:
    import numpy as np
except ImportError as e:
    print("%s: numpy missing (%s)" % ("FAIL" if os.environ.get("CI") == "true" else "SKIP", e), file=sys.stderr)
    sys.exit(1 if os.environ.get("CI") == "true" else SKIP)

# The bounds (the C test, tests/core/test_hessian.c, holds float64
# to 1e-8: CELU's derivative follows PyTorch's, core/ops.h).
FLOAT64_HESSIAN = 1e-6
FLOAT32_HESSIAN = 1e-2
WAVENUMBER = 0.1           # cm^-1, modes above 100 cm^-1
SYMBOLS = {1: "H", 6: "C", 7: "N", 8: "O", 9: "F", 16: "S", 17: "Cl"}


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return condition


def run(args, stdin=None, env=None):
    proc = subprocess.run([MLFF] + args, input=None if stdin is None else stdin.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=600, env=dict(os.environ, **env) if env else None)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def extxyz(numbers, positions, masses=None, comment=""):
    """One frame, positions with repr (exact round trip)."""
    columns = "species:S:1:pos:R:3" + (":masses:R:1" if masses is not None else "")
    lines = ["%d" % len(numbers), ("Properties=%s %s" % (columns, comment)).strip()]
    for k, z in enumerate(numbers):
        p = positions[k]
        line = "%s %r %r %r" % (SYMBOLS.get(z, str(z)), float(p[0]), float(p[1]), float(p[2]))
        if masses is not None:
            line += " %r" % float(masses[k])
        lines.append(line)
    return "\n".join(lines) + "\n"


def hessian_lines(args, text):
    rc, out, err = run(["hessian"] + args + ["-"], stdin=text)
    check(rc == 0 and err == "", "mlff hessian %s: rc=%d, stderr %r" % (" ".join(args), rc, err[:500]))
    return [json.loads(line) for line in out.splitlines()]


def test_references(data_dir):
    refs = [json.load(open(path)) for path in sorted(glob.glob(os.path.join(data_dir, "hessians", "*.json")))]
    check(len(refs) == 12, "12 reference Hessians, found %d" % len(refs))
    text = "".join(extxyz(d["species"], d["coordinates"], d["masses_amu"]) for d in refs)
    for precision, bound in (("float64", FLOAT64_HESSIAN), ("float32", FLOAT32_HESSIAN)):
        lines = hessian_lines(["--project", "none", "--precision", precision], text)
        check(len(lines) == len(refs), "%s: one line per frame (%d)" % (precision, len(lines)))
        worst_h = worst_w = 0.0
        for k, (d, o) in enumerate(zip(refs, lines)):
            n = 3 * len(d["species"])
            h = np.array(o["hessian"])
            check(o["input_frame"] == k + 1, "%s: lines in input order" % precision)
            check(h.shape == (n, n), "%s %s: Hessian shape %s" % (precision, d["name"], h.shape))
            dev = np.abs(h - np.array(d["hessian_eV_per_A2"])).max()
            worst_h = max(worst_h, dev)
            check(dev <= bound, "%s %s: Hessian within %g of TorchANI's: %.3g" % (precision, d["name"], bound, dev))
            check(np.abs(np.array(o["forces"]) - np.array(d["forces_eV_per_A"])).max() < 1e-4 * (
                1 if precision == "float64" else 100), "%s %s: forces" % (precision, d["name"]))
            if precision == "float32":
                continue
            check(np.abs(h - h.T).max() <= 1e-9, "%s: symmetric to 1e-9" % d["name"])
            # Translational invariance: each row sums to 0 over the atoms, per axis.
            rows = np.abs(h.reshape(n, n // 3, 3).sum(axis=1)).max()
            check(rows <= 1e-8, "%s: rows sum to 0 per axis: %.3g" % (d["name"], rows))
            w, wr = np.array(o["wavenumbers"]), np.array(d["wavenumbers_cm1"])
            check(o["rigid_modes"] == 0 and o["projection"] == "none", "%s: nothing projected" % d["name"])
            above = np.abs(wr) > 100
            dev_w = np.abs(w[above] - wr[above]).max()
            worst_w = max(worst_w, dev_w)
            check(dev_w <= WAVENUMBER, "%s: wavenumbers within %g cm^-1: %.3g" % (d["name"], WAVENUMBER, dev_w))
            check(o["masses"] == d["masses_amu"], "%s: the masses column is used" % d["name"])
            # ZPE = sum of h c nu / 2 over the real modes (ase.units.invcm = h c in eV cm).
            zpe = 0.5 * 0.0001239841973964072 * w[w > 0].sum()
            check(abs(o["zero_point_energy"] - zpe) <= 1e-12 * max(1, zpe), "%s: zero-point energy" % d["name"])
            # Modes: M^1/2 mode_k are orthonormal eigenvectors of M^-1/2 H M^-1/2.
            m = np.repeat(np.array(d["masses_amu"]), 3)
            v = np.array(o["modes"]) * np.sqrt(m)
            check(np.abs(v @ v.T - np.eye(n)).max() < 1e-9, "%s: modes orthonormal (mass weighted)" % d["name"])
        report.append("%s: max |H - H_TorchANI| %.3g eV/A^2" % (precision, worst_h))
        if precision == "float64":
            report.append("float64: max |nu - nu_TorchANI| above 100 cm^-1: %.3g cm^-1" % worst_w)
            # The energy is that of `mlff energy` (same library, same precision).
            rc, out, _ = run(["energy", "--precision", "float64", "-"], stdin=text)
            energies = [float(x) for x in re.findall(r"energy=(\S+)", out)]
            check(rc == 0 and len(energies) == 12 and all(
                abs(e - o["energy"]) <= 1e-9 * abs(e) for e, o in zip(energies, lines)),
                "energies equal mlff energy's")


def minimum(numbers, positions):
    """A BFGS minimum on mlff's float64 forces (fmax 1e-4 eV/Angstrom)."""
    from ase import Atoms
    from ase.optimize import BFGS
    from mlff.ase import MLFFCalculator
    atoms = Atoms(numbers=numbers, positions=positions)
    atoms.calc = MLFFCalculator(device="cpu", precision="float64")
    BFGS(atoms, logfile=None).run(fmax=1e-4, steps=500)
    fmax = np.abs(atoms.get_forces()).max()
    check(fmax < 1e-4, "BFGS converged: fmax %.3g" % fmax)
    return atoms


def test_minima():
    if os.environ.get("MLFF_TEST_SANITIZED"):
        print("SKIP: the minima (a plain Python cannot load a sanitized libmlff)", file=sys.stderr)
        return
    try:
        import ase  # noqa: F401
        import mlff.ase  # noqa: F401
    except ImportError as e:
        print("%s: ASE or the mlff package missing (%s)" % ("FAIL" if os.environ.get("CI") == "true" else "SKIP", e),
              file=sys.stderr)
        check(os.environ.get("CI") != "true", "ASE and mlff importable under CI")
        return
    molecules = {
        # name: (numbers, start, rigid motions)
        "H2O": ([8, 1, 1], [[0, 0, 0.12], [0, 0.76, -0.47], [0, -0.76, -0.47]], 6),
        "NH3": ([7, 1, 1, 1], [[0, 0, 0.12], [0, 0.94, -0.27], [0.81, -0.47, -0.27], [-0.81, -0.47, -0.27]], 6),
        "CO2": ([6, 8, 8], [[0, 0, 0], [0, 0, 1.18], [0, 0, -1.18]], 5),
        "HCN": ([1, 6, 7], [[0, 0, -1.08], [0, 0, 0], [0, 0, 1.16]], 5),
    }
    for name, (numbers, start, rigid) in molecules.items():
        atoms = minimum(numbers, start)
        masses = atoms.get_masses()
        frame = extxyz(numbers, atoms.positions)
        projected = hessian_lines([], frame)[0]
        plain = hessian_lines(["--project", "none"], frame)[0]
        n = 3 * len(numbers)
        w, w0 = np.array(projected["wavenumbers"]), np.array(plain["wavenumbers"])
        check(projected["projection"] == "rigid" and projected["rigid_modes"] == rigid,
              "%s: %d rigid motions projected, found %d" % (name, rigid, projected["rigid_modes"]))
        zeros = np.sort(np.abs(w))[:rigid]
        check(np.all(zeros == 0) and np.sum(w == 0) == rigid, "%s: %d zero modes exactly" % (name, rigid))
        vib = np.sort(w[w != 0])
        check(len(vib) == n - rigid and vib[0] > 300, "%s: the %d vibrations clearly above 0: %s" % (
            name, n - rigid, vib[:3]))
        # Unprojected, the same number of modes are near zero (translations
        # exact, rotations as small as the residual forces leave them) and
        # the vibrations are those of the projected analysis.
        order = np.argsort(np.abs(w0))
        near = np.abs(w0[order[:rigid]])
        check(near.max() < 10 and np.abs(w0[order[rigid:]]).min() > 300,
              "%s: %d near-zero modes unprojected: %s" % (name, rigid, np.sort(np.abs(w0))[:rigid + 1]))
        check(np.abs(np.sort(w0[order[rigid:]]) - vib).max() < 1.0,
              "%s: vibrations projected and not within 1 cm^-1: %s / %s" % (name, vib, np.sort(w0[order[rigid:]])))
        report.append("%s at its minimum: %d rigid modes; unprojected near-zero modes up to %.3g cm^-1; "
                      "lowest vibration %.1f cm^-1" % (name, rigid, near.max(), vib[0]))
        zpe = 0.5 * 0.0001239841973964072 * vib[vib > 0].sum()
        check(abs(projected["zero_point_energy"] - zpe) <= 1e-12 * zpe, "%s: ZPE = sum(h c nu) / 2" % name)
        check(projected["masses"] == [float(m) for m in masses], "%s: standard masses as ASE's" % name)
        # Modes: the rigid ones are pure translations and rotations; each
        # vibration's mass-weighted vector is orthogonal to them.
        modes = np.array(projected["modes"]) * np.sqrt(np.repeat(masses, 3))
        check(np.abs(modes @ modes.T - np.eye(n)).max() < 1e-9, "%s: modes orthonormal" % name)
        # Periodic frames project the translations alone (auto).
        if name == "H2O":
            box = extxyz(numbers, atoms.positions + 5, comment='Lattice="10 0 0 0 10 0 0 0 10" pbc="T T T"')
            periodic = hessian_lines([], box)[0]
            check(periodic["projection"] == "translations" and periodic["rigid_modes"] == 3,
                  "H2O in a box: translations projected: %s" % periodic["projection"])


def expect_error(args, text, pattern, lines_before=0):
    rc, out, err = run(["hessian"] + args + ["-"], stdin=text)
    check(rc == 1, "exit 1: %r -> %d %r" % (args, rc, err))
    check(re.match(pattern, err) is not None and err.count("\n") == 1,
          "one error line matching %r: %r" % (pattern, err))
    written = out.splitlines()
    check(len(written) == lines_before and all(json.loads(line)["input_frame"] for line in written),
          "%d whole lines before the error, found %d" % (lines_before, len(written)))
    check(out == "" or out.endswith("\n"), "whole lines only")
    return err


def test_errors(tmp):
    water = extxyz([8, 1, 1], [[0, 0, 0.12], [0, 0.76, -0.47], [0, -0.76, -0.47]])
    with_masses = lambda m: extxyz([8, 1, 1], [[0, 0, 0.12], [0, 0.76, -0.47], [0, -0.76, -0.47]], m)
    expect_error([], water + with_masses([16, 0, 1]), r"<stdin>:9: frame 2, atom 2: mass 0 is not positive", 1)
    expect_error([], with_masses([16, 1, -1]), r"<stdin>:5: frame 1, atom 3: mass -1 is not positive")
    bad_text = water + water.replace("O 0", "O 0").replace("species:S:1:pos:R:3", "species:S:1:pos:R:3:masses:R:1")
    expect_error([], bad_text, r"<stdin>:8: frame 2, atom 1: expected 5 columns, found 4", 1)
    expect_error([], with_masses([16, 1, 1]).replace(" 1.0\n", " abc\n", 1),
                 r"<stdin>:4: frame 1, atom 2: mass \"abc\" is not a number")
    expect_error([], water.replace("pos:R:3", "pos:R:3:masses:S:1"),
                 r"<stdin>:2: frame 1: malformed Properties .*the masses column must be R:1")
    # An element the model does not know (ANI-2x: H C N O F S Cl): after the frames before it.
    iron = extxyz([26, 8], [[0, 0, 0], [0, 0, 1.6]])
    expect_error([], water + water + iron, r"<stdin>:13: frame 3, atom 1: element Fe .*not in model", 2)
    expect_error([], "", r"<stdin>: .*empty")
    open(os.path.join(tmp, "empty.xyz"), "w").close()
    rc, out, err = run(["hessian", os.path.join(tmp, "empty.xyz")])
    check(rc == 1 and out == "" and "empty.xyz" in err, "an empty file: %d %r" % (rc, err))
    rc, _, err = run(["hessian", "--project", "some", "-"], stdin=water)
    check(rc == 2 and "--project" in err, "a bad --project is a usage error: %r" % err)
    # A GPU backend (PoCL and lavapipe on CI): the CPU's numbers, or where
    # there is no such device the library's own message passes through.
    cpu = hessian_lines(["--project", "none"], water)[0]
    for device in ("opencl", "vulkan"):
        rc, out, err = run(["hessian", "--device", device, "--project", "none", "-"], stdin=water)
        if rc == 0:
            h = np.array(json.loads(out)["hessian"])
            worst = np.abs(h - np.array(cpu["hessian"])).max()
            check(worst < 1e-6, "%s: the CPU's Hessian, off by %.3g" % (device, worst))
            report.append("--device %s: water's Hessian within %.2e eV/A^2 of the CPU's" % (device, worst))
            continue
        check(rc == 1 and out == "" and err.startswith("mlff: ") and err.count("\n") == 1,
              "%s: one line, exit 1: %d %r" % (device, rc, err))
        check("cannot open the device" in err,
              "%s: the library's message passes through: %r" % (device, err))
        report.append("--device %s: %s" % (device, err.strip()))


def main():
    global MLFF
    if len(sys.argv) != 3:
        raise SystemExit("usage: test_hessian.py MLFF_EXE DATA_DIR")
    MLFF = os.path.abspath(sys.argv[1])
    data_dir = sys.argv[2]
    if not os.path.isdir(os.path.join(data_dir, "hessians")):
        data_dir = os.path.join(data_dir, "reference")
    with tempfile.TemporaryDirectory(prefix="mlff-hessian-") as tmp:
        test_references(data_dir)
        test_minima()
        test_errors(tmp)
    for line in report:
        print(line)
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("all hessian tests passed")
    return 0


MLFF = None

if __name__ == "__main__":
    sys.exit(main())
