"""Shared by the LAMMPS tests: running lmp under mpirun, reading its thermo
output and dumps, the reference `mlff energy` on the same structures, and
the structures themselves.

Every run is `mpirun -np N lmp -in ...` in a fresh temporary directory, with
the style's library given as -var mlff_lib. A missing lmp or mpirun skips
(exit 77), except under CI (CI=true), where it fails.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
IN_MLFF = os.path.join(SOURCE_ROOT, "examples", "lammps", "in.mlff")
XYZ2DATA = os.path.join(SOURCE_ROOT, "examples", "lammps", "xyz2data.py")
REFERENCE_DIR = os.path.join(SOURCE_ROOT, "tests", "data", "reference")

# LAMMPS's own conversion of eV/A^3 to bar in metal units (force->nktv2p),
# not CODATA's 1.602176634e6.
NKTV2P_METAL = 1.6021765e6


class Failures:
    def __init__(self):
        self.items = []

    def check(self, condition, what):
        if not condition:
            self.items.append(what)
            print("FAIL:", what, file=sys.stderr, flush=True)
        return condition

    def close(self, name):
        if self.items:
            print("%s: %d failure(s)" % (name, len(self.items)), file=sys.stderr)
            sys.exit(1)
        print("%s: all checks passed" % name)
        sys.exit(0)


def skip_or_fail(message):
    if os.environ.get("CI") == "true":
        print("FAIL: %s (required under CI)" % message, file=sys.stderr)
        sys.exit(1)
    print("SKIP: " + message, file=sys.stderr)
    sys.exit(SKIP)


class Env:
    """Where lmp, mpirun, mlff and the style's library are (from meson's args)."""

    def __init__(self, args):
        self.lmp = args.lmp
        self.mpirun = args.mpirun
        self.mlff = args.mlff
        self.lib = os.path.abspath(args.lib)
        self.ranks = [int(r) for r in args.ranks.split(",")]
        self.device = args.device
        for tool in (self.lmp, self.mpirun):
            if not shutil.which(tool):
                skip_or_fail("%s not found" % tool)
        if not os.path.exists(self.lib):
            skip_or_fail("%s not built" % self.lib)
        self.env = dict(os.environ)
        if os.geteuid() == 0:
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # One CPU thread per rank: up to 4 ranks share 2 cores here.
        self.env.setdefault("OMP_NUM_THREADS", "1")
        # Containers often forbid the cross-process memory reads of Open MPI's
        # shared-memory single copy; the plain copy works everywhere.
        self.env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        self.tmp = tempfile.mkdtemp(prefix="mlff-lammps-")

    def path(self, name):
        return os.path.join(self.tmp, name)


def add_common_args(parser):
    parser.add_argument("--lmp", default="lmp")
    parser.add_argument("--mpirun", default="mpirun")
    parser.add_argument("--mlff", default=os.path.join(SOURCE_ROOT, "build", "tools", "mlff"))
    parser.add_argument("--lib", default=os.path.join(SOURCE_ROOT, "build", "lammps",
                                                       "libmlff_lammps.so"))
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--device", default="cpu")


class Run:
    def __init__(self, args, proc, seconds):
        self.args = args
        self.rc = proc.returncode
        self.out = proc.stdout.decode("utf-8", "replace")
        self.seconds = seconds

    def tail(self, n=25):
        return "\n".join(self.out.rstrip().split("\n")[-n:])

    def __repr__(self):
        return "%s -> rc=%d\n%s" % (" ".join(self.args), self.rc, self.tail())


def lmp(env, ranks, input_file, variables=(), timeout=900, mpirun_options=()):
    """mpirun -np RANKS lmp -in INPUT -var k v ...; stdout and stderr together."""
    import time
    args = [env.mpirun, "--oversubscribe"] + list(mpirun_options) + [
            "-np", str(ranks), env.lmp, "-in", input_file,
            "-log", "none", "-var", "mlff_lib", env.lib]
    for k, v in variables:
        args += ["-var", k, str(v)]
    start = time.time()
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          cwd=env.tmp, env=env.env, timeout=timeout)
    return Run(args, proc, time.time() - start)


def thermo(run):
    """The thermo table of every run in the output: a list of dicts per line."""
    rows = []
    header = None
    for line in run.out.split("\n"):
        words = line.split()
        if words and words[0] == "Step":
            header = words
            continue
        if header and len(words) == len(header) and re.match(r"^\d+$", words[0]):
            try:
                rows.append({k: float(v) for k, v in zip(header, words)})
            except ValueError:
                header = None
            continue
        if words[:2] == ["Loop", "time"]:
            header = None
    return rows


def read_dump(path):
    """{atom id: (type, position, force)} of the last frame of a custom dump
    with columns id type x y z fx fy fz."""
    with open(path) as f:
        lines = f.read().split("\n")
    frames = [i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS")]
    i = frames[-1]
    cols = lines[i].split()[2:]
    atoms = {}
    for line in lines[i + 1:]:
        words = line.split()
        if len(words) != len(cols):
            break
        d = dict(zip(cols, words))
        atoms[int(d["id"])] = (int(d["type"]),
                               [float(d["x"]), float(d["y"]), float(d["z"])],
                               [float(d["fx"]), float(d["fy"]), float(d["fz"])])
    return atoms


# ---------------------------------------------------------------------------
# Extended XYZ: written and read here independently of xyz2data.py.

def write_extxyz(path, symbols, positions, cell=None, pbc=(False, False, False)):
    with open(path, "w") as f:
        f.write("%d\n" % len(symbols))
        info = 'Properties=species:S:1:pos:R:3 pbc="%s"' % " ".join("T" if p else "F" for p in pbc)
        if cell is not None:
            info = 'Lattice="%s" ' % " ".join("%.17g" % x for row in cell for x in row) + info
        f.write(info + "\n")
        for s, r in zip(symbols, positions):
            f.write("%s %.17g %.17g %.17g\n" % (s, r[0], r[1], r[2]))


def read_extxyz(path):
    """(symbols, positions, cell or None, info dict, per-atom columns dict)."""
    with open(path) as f:
        lines = f.read().split("\n")
    n = int(lines[0])
    info = {m.group(1): (m.group(3) if m.group(3) is not None else m.group(2))
            for m in re.finditer(r'(\w+)=("([^"]*)"|\S+)', lines[1])}
    fields = info["Properties"].split(":")
    columns = {}
    col = 0
    for name, _kind, count in zip(fields[0::3], fields[1::3], fields[2::3]):
        columns[name] = (col, int(count))
        col += int(count)
    symbols, data = [], {name: [] for name in columns}
    for line in lines[2:2 + n]:
        words = line.split()
        for name, (c, k) in columns.items():
            if name == "species":
                symbols.append(words[c])
            else:
                data[name].append([float(w) for w in words[c:c + k]])
    cell = None
    if "Lattice" in info:
        v = [float(x) for x in info["Lattice"].split()]
        cell = [v[0:3], v[3:6], v[6:9]]
    return symbols, data["pos"], cell, info, data


def mlff_reference(env, xyz_path, model=None):
    """mlff energy --forces --stress --precision float64 --device cpu on the
    structure (with --model MODEL where given): (energy eV, forces eV/A,
    stress eV/A^3 3x3 or None)."""
    out = env.path(os.path.basename(xyz_path) + ".mlff.extxyz")
    proc = subprocess.run([env.mlff, "energy", "--forces", "--stress", "--precision", "float64",
                           "--device", "cpu", "-o", out, xyz_path]
                          + (["--model", model] if model else []),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("mlff energy failed: %s" % proc.stdout.decode())
    _, _, _, info, data = read_extxyz(out)
    stress = None
    if "stress" in info:
        s = [float(x) for x in info["stress"].split()]
        stress = [s[0:3], s[3:6], s[6:9]]
    return float(info["energy"]), data["forces"], stress


def write_data(env, xyz_path, data_path, elements, pad=None):
    args = [sys.executable, XYZ2DATA, xyz_path, data_path, "--elements", " ".join(elements)]
    if pad:
        args += ["--pad", pad]
    subprocess.run(args, check=True)


# ---------------------------------------------------------------------------
# Small 3x3 helpers (numpy-free, so that the checks stand on their own).

def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def transpose(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def inverse(m):
    (a, b, c), (d, e, f), (g, h, i) = m
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
            [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
            [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]


def lammps_rotation(cell):
    """R with r_lammps = r R for LAMMPS's restricted triclinic form of cell
    (rows a, b, c): a along x, b in the xy plane (right-handed cells)."""
    a, b, c = cell
    dot = lambda u, v: sum(x * y for x, y in zip(u, v))  # noqa: E731
    lx = math.sqrt(dot(a, a))
    xy = dot(b, a) / lx
    ly = math.sqrt(dot(b, b) - xy * xy)
    xz = dot(c, a) / lx
    yz = (dot(b, c) - xy * xz) / ly
    lz = math.sqrt(dot(c, c) - xz * xz - yz * yz)
    return matmul(inverse(cell), [[lx, 0, 0], [xy, ly, 0], [xz, yz, lz]])
