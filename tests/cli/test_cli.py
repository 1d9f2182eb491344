#!/usr/bin/python3
"""Tests of the `mlff` command line, run on the real executable.

Usage: test_cli.py MLFF_EXE DATA_DIR

DATA_DIR holds the TorchANI reference files (g2_CH4.extxyz, g2_CH4.json, ...),
directly or under DATA_DIR/reference. Uses only the standard library; when
ASE is importable, the output is also read back with ase.io.
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HARTREE_TO_EV = 27.211386024367243

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return condition


def find_data(data_dir, name):
    for path in (os.path.join(data_dir, name), os.path.join(data_dir, "reference", name)):
        if os.path.exists(path):
            return path
    raise SystemExit("test_cli.py: %s not found under %s" % (name, data_dir))


class Result:
    def __init__(self, args, proc):
        self.args = args
        self.rc = proc.returncode
        self.out = proc.stdout.decode("utf-8", "replace")
        self.err = proc.stderr.decode("utf-8", "replace")

    def __repr__(self):
        return "mlff %s -> rc=%d\nstdout: %r\nstderr: %r" % (
            " ".join(self.args), self.rc, self.out[:300], self.err[:600])


def run(args, stdin=None, cwd=None, env=None):
    proc = subprocess.run([MLFF] + args, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=600, cwd=cwd,
                          env=dict(os.environ, **env) if env else None)
    return Result(args, proc)


def expect_usage_error(args):
    r = run(args)
    check(r.rc == 2, "usage error exits 2: %r" % r)
    check(r.out == "", "usage error writes nothing on stdout: %r" % r)
    check(r.err.count("\n") == 1 and r.err.endswith("\n") and r.err.strip(),
          "usage error writes one line on stderr: %r" % r)


def expect_error(args, pattern, cwd=None):
    """Exit 1, nothing on stdout, exactly one stderr line matching pattern."""
    r = run(args, cwd=cwd)
    check(r.rc == 1, "exit status 1: %r" % r)
    check(r.out == "", "nothing on stdout on error: %r" % r)
    lines = r.err.split("\n")
    ok = len(lines) == 2 and lines[1] == "" and re.match(pattern, lines[0]) is not None
    check(ok, "one stderr line matching %r: %r" % (pattern, r))
    return r


def expect_error_after(args, pattern, n_frames, cwd=None):
    """As expect_error, but the frames before the bad one were written: stdout
    holds exactly n_frames whole frames (the output is streamed)."""
    r = run(args, cwd=cwd)
    check(r.rc == 1, "exit status 1: %r" % r)
    lines = r.err.split("\n")
    check(len(lines) == 2 and lines[1] == "" and re.match(pattern, lines[0]) is not None,
          "one stderr line matching %r: %r" % (pattern, r))
    frames = parse_extxyz(r.out)
    check(len(frames) == n_frames and all("energy" in info_dict(f) for f in frames),
          "the %d frames before the bad one are written: %r" % (n_frames, r))
    return r


# ---------------------------------------------------------------------------
# A small extended XYZ parser, independent of the one under test.

def parse_extxyz(text):
    lines = text.split("\n")
    frames = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        n = int(lines[i])
        comment = lines[i + 1]
        atoms = [lines[i + 2 + k].split() for k in range(n)]
        frames.append({"n": n, "comment": comment, "atoms": atoms,
                       "info": parse_comment(comment)})
        i += 2 + n
    return frames


def parse_comment(comment):
    """key=value pairs in order (values unquoted); enough for our output."""
    pairs = []
    for m in re.finditer(r'(\S+?)=("(?:[^"\\]|\\.)*"|\S+)|(\S+)', comment):
        if m.group(3):
            pairs.append((m.group(3), None))
        else:
            value = m.group(2)
            if value.startswith('"'):
                value = value[1:-1]
            pairs.append((m.group(1), value))
    return pairs


def info_dict(frame):
    return dict(frame["info"])


def energy_of(frame):
    return float(info_dict(frame)["energy"])


# ---------------------------------------------------------------------------

def test_usage(data_dir):
    ch4 = find_data(data_dir, "g2_CH4.extxyz")
    expect_usage_error([])
    expect_usage_error(["frobnicate"])
    expect_usage_error(["--frobnicate"])
    expect_usage_error(["energy"])
    expect_usage_error(["energy", "--forces"])
    expect_usage_error(["energy", "--bogus", ch4])
    expect_usage_error(["energy", "--device", "gpu", ch4])
    expect_usage_error(["energy", "--device=tpu", ch4])
    expect_usage_error(["energy", "--precision", "float16", ch4])
    expect_usage_error(["energy", ch4, "--model"])
    expect_usage_error(["energy", ch4, "-o"])
    expect_usage_error(["energy", ch4, "--device"])
    expect_usage_error(["devices", "extra"])
    expect_usage_error(["devices", "--bogus"])

    for args in (["--help"], ["-h"], ["energy", "--help"], ["energy", "-h"]):
        r = run(args)
        check(r.rc == 0 and "Usage" in r.out and r.err == "", "help on stdout: %r" % r)
        check("energy" in r.out and "devices" in r.out and "tune" in r.out and "bench" in r.out and
              "--forces" in r.out,
              "help lists the commands and options: %r" % r)
    r = run(["--version"])
    check(r.rc == 0 and re.match(r"^mlff \d+\.\d+\.\d+", r.out) and r.err == "",
          "--version: %r" % r)


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


WATER = ("3\nname=water\n"
         "O 0.0 0.0 0.11779\n"
         "H 0.0 0.75545 -0.47116\n"
         "H 0.0 -0.75545 -0.47116\n")


def test_bad_input(tmp, data_dir):
    missing = os.path.join(tmp, "missing.xyz")
    expect_error(["energy", missing], re.escape(missing) + r": cannot open: No such file")
    empty = write(tmp, "empty.xyz", "")
    expect_error(["energy", empty], re.escape(empty) + r": file is empty$")
    expect_error(["energy", tmp], re.escape(tmp) + r": cannot read: ")

    path = write(tmp, "count.xyz", "three\n\nH 0 0 0\n")
    expect_error(["energy", path], re.escape(path) + r":1: frame 1: expected the number of atoms")
    path = write(tmp, "zero.xyz", "0\n\n")
    expect_error(["energy", path], re.escape(path) + r":1: frame 1: the number of atoms must be positive")
    path = write(tmp, "truncated.xyz", "3\ncomment\nO 0 0 0\nH 0 0 1\n")
    expect_error(["energy", path], re.escape(path) + r":1: frame 1: truncated: 3 atoms declared")
    path = write(tmp, "columns.xyz", "2\n\nO 0 0 0\nH 0 1\n")
    expect_error(["energy", path],
                 re.escape(path) + r":4: frame 1, atom 2: expected 4 columns, found 3$")
    path = write(tmp, "notnum.xyz", "2\n\nO 0 0 0\nH 0 abc 1\n")
    expect_error(["energy", path],
                 re.escape(path) + r':4: frame 1, atom 2: coordinate "abc" is not a number$')
    path = write(tmp, "nan.xyz", "2\n\nO nan 0 0\nH 0 0 1\n")
    expect_error(["energy", path],
                 re.escape(path) + r':3: frame 1, atom 1: coordinate "nan" is not a finite number$')
    path = write(tmp, "inf.xyz", "2\n\nO 0 0 0\nH 0 0 -inf\n")
    expect_error(["energy", path],
                 re.escape(path) + r':4: frame 1, atom 2: coordinate "-inf" is not a finite number$')
    path = write(tmp, "xx.xyz", "2\n\nO 0 0 0\nXx 0 0 1\n")
    expect_error(["energy", path], re.escape(path) + r':4: frame 1, atom 2: unknown element "Xx"$')
    path = write(tmp, "lattice.xyz", '1\nLattice="1 0 0 0 1 0"\nH 0 0 0\n')
    expect_error(["energy", path], re.escape(path) + r":2: frame 1: malformed Lattice")
    path = write(tmp, "props.xyz", "1\nProperties=species:S:1:pos:Q:3\nH 0 0 0\n")
    expect_error(["energy", path], re.escape(path) + r":2: frame 1: malformed Properties")
    path = write(tmp, "pbc.xyz", '1\npbc="T T"\nH 0 0 0\n')
    expect_error(["energy", path], re.escape(path) + r":2: frame 1: malformed pbc")

    # Found by the library, mapped back to file, line, frame and atom.
    path = write(tmp, "na.xyz", "2\n\nCl 0 0 0\nNa 0 0 2.4\n")
    r = expect_error(["energy", path], re.escape(path) + r":4: frame 1, atom 2: \S")
    check(re.search(r"\bNa\b|\b11\b", r.err), "the Na message names the element: %r" % r)

    close = "3\nclose\nO 0 0 0\nH 0 0 0.96\nH 0 0 1.01\n"
    path = write(tmp, "close.xyz", close)
    expect_error(["energy", path], re.escape(path) + r":(4|5): frame 1, atom (2|3): \S")
    # The second frame of the second file: frame numbers count within the file.
    path = write(tmp, "close2.xyz", WATER + close)
    ch4 = find_data(data_dir, "g2_CH4.extxyz")
    expect_error_after(["energy", ch4, path], re.escape(path) + r":(9|10): frame 2, atom (2|3): \S", 2)

    # A periodic frame without a usable cell.
    path = write(tmp, "periodic.xyz",
                 '3\npbc="T T T"\n' + WATER.split("\n", 2)[2])
    expect_error(["energy", path], re.escape(path) + r":2: frame 1: .*(cell|singular)")
    # Dense neighbour search cannot do periodic frames.
    box = find_data(data_dir, "water_box_64.extxyz")
    expect_error(["energy", "--neighbors", "dense", box], re.escape(box) + r":2: frame 1: .*periodic")
    expect_usage_error(["energy", "--neighbors", "fast", box])

    # The model.
    good = write(tmp, "good.xyz", WATER)
    expect_error(["energy", "--model", os.path.join(tmp, "no-such-model.mlff"), good], r"\S")
    expect_error(["energy", "--model", good, good], r"\S")

    # Devices that may be missing: either it works, or one clean error line.
    for device in ("opencl", "vulkan"):
        r = run(["energy", "--device", device, good])
        if r.rc != 0:
            expect_error(["energy", "--device", device, good], r"\S")

    # Streamed: the frames before the bad one are written (whole frames), and
    # nothing after it; with -o too (--resume can go on once the input is fixed).
    bad = write(tmp, "bad.xyz", "2\n\nO 0 0 0\nH 0 0 nan\n")
    expect_error_after(["energy", good, bad], re.escape(bad) + r":4: frame 1, atom 2:", 1)
    expect_error_after(["energy", good, bad, good], re.escape(bad) + r":4: frame 1, atom 2:", 1)
    out = os.path.join(tmp, "partial.xyz")
    expect_error(["energy", "-o", out, good, bad], re.escape(bad) + r":4: frame 1, atom 2:")
    with open(out) as f:
        check(len(parse_extxyz(f.read())) == 1, "-o keeps the frames before the bad one")
    check(not os.path.exists(out + ".tmp"), "no temporary file")
    # Also when the library finds the problem.
    na = os.path.join(tmp, "na.xyz")
    expect_error(["energy", "-o", out, good, na, good], re.escape(na) + r":4: frame 1, atom 2:")
    with open(out) as f:
        check(len(parse_extxyz(f.read())) == 1, "-o keeps the frames before a library error")
    # A bad first frame: nothing at all.
    expect_error(["energy", bad, good], re.escape(bad) + r":4: frame 1, atom 2:")


def test_energy(tmp, data_dir):
    ch4 = find_data(data_dir, "g2_CH4.extxyz")
    with open(find_data(data_dir, "g2_CH4.json")) as f:
        ref = json.load(f)
    ref_energy = ref["energy"] * HARTREE_TO_EV
    ref_forces = [[x * HARTREE_TO_EV for x in row] for row in ref["forces"]]
    with open(ch4) as f:
        input_frame = parse_extxyz(f.read())[0]

    # float64 on the CPU: within 1e-5 eV of TorchANI
    r = run(["energy", "--device", "cpu", "--precision", "float64", ch4])
    if not check(r.rc == 0 and r.err == "", "CH4 float64 runs cleanly: %r" % r):
        return
    frames = parse_extxyz(r.out)
    check(len(frames) == 1 and frames[0]["n"] == 5, "one frame of 5 atoms")
    frame = frames[0]
    e = energy_of(frame)
    check(abs(e - ref_energy) < 1e-5,
          "CH4 energy %.10f eV within 1e-5 of TorchANI %.10f" % (e, ref_energy))
    token = info_dict(frame)["energy"]
    check(token == "%.17g" % float(token), "energy printed with %%.17g: %s" % token)

    # comment line: Properties first, kept keys, energy, pbc last
    keys = [k for k, _ in frame["info"]]
    check(keys == ["Properties", "name", "model", "dtype", "units", "energy", "pbc"],
          "comment line keys in order: %r" % keys)
    info = info_dict(frame)
    check(info["Properties"] == "species:S:1:pos:R:3", "Properties without forces")
    check(info["pbc"] == "F F F", "pbc printed")
    check(info["name"] == "g2_CH4", "other keys kept")
    check("energy_hartree" not in info, "input energies dropped")
    check('model="ANI-2x, 8-model ensemble average (TorchANI BuiltinEnsemble)"'
          in frame["comment"], "quoted values kept verbatim")
    for k, (atom, ref_atom) in enumerate(zip(frame["atoms"], input_frame["atoms"])):
        check(len(atom) == 4, "4 columns without --forces")
        check(atom[0] == ref_atom[0], "species kept")
        check([float(x) for x in atom[1:4]] == [float(x) for x in ref_atom[1:4]],
              "positions exact, atom %d" % (k + 1))
        check(all(re.match(r"^-?\d\.\d{16}e[+-]\d\d$", x) for x in atom[1:4]),
              "positions printed with %%.16e: %r" % atom)

    # default device and precision, with forces
    r = run(["energy", "--forces", ch4])
    if not check(r.rc == 0 and r.err == "", "CH4 --forces runs cleanly: %r" % r):
        return
    frame = parse_extxyz(r.out)[0]
    tolerance = max(5e-6 * 5, 1e-5)
    check(abs(energy_of(frame) - ref_energy) < tolerance,
          "CH4 default-precision energy within %g eV" % tolerance)
    check(info_dict(frame)["Properties"] == "species:S:1:pos:R:3:forces:R:3",
          "Properties with forces")
    for k, atom in enumerate(frame["atoms"]):
        check(len(atom) == 7, "7 columns with --forces")
        check(all(re.match(r"^-?\d\.\d{10}e[+-]\d\d$", x) for x in atom[4:7]),
              "forces printed with %%.10e: %r" % atom)
        force = [float(x) for x in atom[4:7]]
        check(all(abs(a - b) < 1e-4 for a, b in zip(force, ref_forces[k])),
              "CH4 force of atom %d %r within 1e-4 eV/A of %r" % (k + 1, force, ref_forces[k]))
    stdout_with_forces = r.out

    # -o writes the same bytes to the file, nothing to stdout
    out = os.path.join(tmp, "out.extxyz")
    r = run(["energy", "--forces", "-o", out, ch4])
    check(r.rc == 0 and r.out == "" and r.err == "", "-o runs cleanly: %r" % r)
    check(os.path.exists(out) and not os.path.exists(out + ".tmp"), "-o writes OUT")
    if os.path.exists(out):
        with open(out) as f:
            check(f.read() == stdout_with_forces, "-o writes what stdout would get")

    # standard input
    with open(ch4, "rb") as f:
        r = run(["energy", "--forces", "-"], stdin=f.read())
    check(r.rc == 0 and r.out == stdout_with_forces, "'-' reads standard input: %r" % r)

    # --verbose: a note on stderr, stdout unchanged
    r = run(["energy", "--forces", "--verbose", ch4])
    check(r.rc == 0 and r.out == stdout_with_forces and "device" in r.err,
          "--verbose notes the device on stderr only: %r" % r)

    # several files, multi-frame files: one stream, in order
    names = ["g2_H2O", "g2_CH4", "g2_CH3Cl", "g2_NH3"]
    paths = [find_data(data_dir, n + ".extxyz") for n in names]
    with open(paths[0]) as f:
        h2o = f.read()
    shifted = re.sub(r"^(O|H)(\s+)(\S+)", lambda m: "%s%s%.8f" % (m.group(1), m.group(2),
                                                                    float(m.group(3)) + 10.0),
                     h2o, flags=re.M).replace("name=g2_H2O", "name=g2_H2O_shifted")
    multi = write(tmp, "multi.extxyz", h2o + shifted + "\n\n")
    args = ["energy", "--device", "cpu", "--precision", "float64", "--forces"]
    r = run(args + [multi] + paths[1:])
    if check(r.rc == 0, "several files: %r" % r):
        frames = parse_extxyz(r.out)
        got = [info_dict(f).get("name") for f in frames]
        check(got == ["g2_H2O", "g2_H2O_shifted", "g2_CH4", "g2_CH3Cl", "g2_NH3"],
              "frames in order: %r" % got)
        if len(frames) == 5:
            check(abs(energy_of(frames[0]) - energy_of(frames[1])) < 1e-6,
                  "a translated copy has the same energy")
            check(abs(energy_of(frames[2]) - ref_energy) < 1e-5, "CH4 inside a batch")
            for name, frame in zip(names[1:], frames[2:]):
                with open(find_data(data_dir, name + ".json")) as f:
                    e_ref = json.load(f)["energy"] * HARTREE_TO_EV
                check(abs(energy_of(frame) - e_ref) < 1e-5,
                      "%s energy in a batch within 1e-5 eV" % name)
            one = run(args + [paths[2]])
            if check(one.rc == 0, "single file: %r" % one):
                single = parse_extxyz(one.out)[0]
                check(abs(energy_of(single) - energy_of(frames[3])) < 1e-8,
                      "batch energy equals the single-file energy")

    # ASE reads the output back (when ASE is there)
    try:
        import ase.io
    except ImportError:
        return
    atoms = ase.io.read(out)
    check(abs(atoms.get_potential_energy() - ref_energy) < tolerance, "ASE reads the energy")
    forces = atoms.get_forces()
    check(all(abs(forces[k][c] - ref_forces[k][c]) < 1e-4 for k in range(5) for c in range(3)),
          "ASE reads the forces")
    ref_atoms = ase.io.read(ch4)
    check((atoms.positions == ref_atoms.positions).all(), "ASE reads the exact positions")
    check(atoms.get_chemical_symbols() == ref_atoms.get_chemical_symbols(), "ASE symbols")
    check(atoms.info.get("name") == "g2_CH4", "ASE sees the kept keys")


def test_periodic(data_dir):
    """The periodic boxes against TorchANI; stress is written for them."""
    for name in ("water_box_64", "water_box_64_triclinic"):
        box = find_data(data_dir, name + ".extxyz")
        with open(find_data(data_dir, name + ".json")) as f:
            ref = json.load(f)
        r = run(["energy", "--device", "cpu", "--precision", "float64", "--stress", box])
        if not check(r.rc == 0, "%s runs: %r" % (name, r)):
            continue
        frame = parse_extxyz(r.out)[0]
        e = energy_of(frame)
        e_ref = ref["energy"] * HARTREE_TO_EV
        check(abs(e - e_ref) < 1e-8 * frame["n"],
              "%s energy %.10f eV against TorchANI %.10f" % (name, e, e_ref))
        info = info_dict(frame)
        check("Lattice" in info and info.get("pbc") == "T T T", "%s keeps Lattice and pbc" % name)
        stress = [float(x) for x in info.get("stress", "").split()]
        check(len(stress) == 9 and all(math.isfinite(x) for x in stress) and
              abs(stress[1] - stress[3]) < 1e-9, "%s has a symmetric stress: %s" % (name, stress))
        # In chunks of 40 atoms: the same numbers.
        r = run(["energy", "--device", "cpu", "--precision", "float64", "--stress", "--chunk-atoms", "40", box])
        if check(r.rc == 0, "%s runs in chunks: %r" % (name, r)):
            chunked = parse_extxyz(r.out)[0]
            chunked_stress = [float(x) for x in info_dict(chunked).get("stress", "").split()]
            check(abs(energy_of(chunked) - e) < 1e-9 and len(chunked_stress) == 9 and
                  max(abs(a - b) for a, b in zip(stress, chunked_stress)) < 1e-12,
                  "%s in chunks: energy %.10f, stress %s" % (name, energy_of(chunked), chunked_stress))
    expect_usage_error(["energy", "--chunk-atoms", "0", box])


def test_devices():
    r = run(["devices"])
    check(r.rc == 0 and r.out.strip() != "", "mlff devices lists something: %r" % r)
    check(r.out.endswith("\n"), "mlff devices ends its output with a newline")
    check("cpu 0:" in r.out and "memory:" in r.out and "fp64:" in r.out and "tuning:" in r.out,
          "mlff devices says what each device has: %r" % r)
    r = run(["devices", "--tuning"])
    check(r.rc == 0 and "sum_lanes=1" in r.out and "dense_most_atoms=" in r.out,
          "mlff devices --tuning lists each device's record: %r" % r)


def test_tune(tmp):
    """mlff tune on the CPU writes a record that a later process reads."""
    expect_usage_error(["tune", "--bogus"])
    expect_usage_error(["tune", "--device", "gpu"])
    env = {"MLFF_CACHE_DIR": os.path.join(tmp, "tune-cache")}
    r = run(["tune", "--keys", "--device", "cpu"], env=env)
    check(r.rc == 0 and "sum_lanes" in r.out and "MLFF_SUM_LANES" in r.out and "auto, 1, 2, 4, 8, 16" in r.out,
          "tune --keys lists the keys, their variables and values: %r" % r)
    r = run(["tune", "--keys", "--device", "cpu", "--tuning", "sum_lanes=5"], env=env)
    check(r.rc == 1 and "sum_lanes=5" in r.err, "a bad --tuning value is named: %r" % r)
    r = run(["tune", "--device", "cpu", "--quick"], env=env)
    check(r.rc == 0 and "\ndense_most_atoms=" in r.out and "mlff tune:" in r.err and "wrote" in r.err,
          "tune --quick writes a record, progress on stderr: %r" % r)
    records = [f for f in os.listdir(env["MLFF_CACHE_DIR"]) if f.startswith("tuning-")]
    check(len(records) == 1, "one record in the cache directory: %r" % records)
    r = run(["devices"], env=env)
    check(r.rc == 0 and "measured record: " + env["MLFF_CACHE_DIR"] + "/tuning-" in r.out,
          "mlff devices names the CPU's measured record: %r" % r)
    r = run(["tune", "--keys", "--device", "cpu"], env=env)
    check(r.rc == 0 and re.search(r"dense_most_atoms +- +\S+ +record", r.out),
          "tune --keys shows the measured keys as the record's: %r" % r)


def test_bench(data_dir):
    expect_usage_error(["bench", "--device", "gpu"])
    reference = os.path.dirname(find_data(data_dir, "g2_CH4.extxyz"))
    r = run(["bench", "--device", "cpu", "--quick", "--reference", reference])
    check(r.rc == 0 and "| methane | 5 |" in r.out and "| water cluster (300 atoms) | 300 |" in r.out and
          "atoms/s" in r.out and "made in code" not in r.out, "bench on the CPU: %r" % r)
    r = run(["bench", "--device", "cpu", "--quick", "--reference", "/nonexistent"])
    check(r.rc == 0 and "made in code" in r.out and "| methane | 5 |" in r.out,
          "bench makes its structures where there are no reference files: %r" % r)


def main():
    global MLFF
    if len(sys.argv) != 3:
        raise SystemExit("usage: test_cli.py MLFF_EXE DATA_DIR")
    MLFF = os.path.abspath(sys.argv[1])
    data_dir = sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="mlff-cli-") as tmp:
        test_usage(data_dir)
        test_bad_input(tmp, data_dir)
        test_energy(tmp, data_dir)
        test_tune(tmp)
    test_periodic(data_dir)
    test_devices()
    test_bench(data_dir)
    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        return 1
    print("all cli tests passed")
    return 0


MLFF = None

if __name__ == "__main__":
    sys.exit(main())
