#!/usr/bin/python3
"""Writes a LAMMPS data file (atom_style atomic, units metal) from an XYZ or
extended XYZ frame, as examples/lammps/in.mlff reads it.

    examples/lammps/xyz2data.py IN.xyz OUT.data [--elements "H O"] [--frame K]
                                [--pad A | --pad AX,AY,AZ]

Atom types follow --elements (the order that in.mlff's -var elements must
repeat); without it, the elements present by atomic number, printed on
standard error. Masses are the standard atomic weights.

Periodic frames (pbc="T T T", Lattice="ax ay az bx by bz cx cy cz") become
LAMMPS's restricted triclinic box: the cell is rotated so that a lies along
x and b in the xy plane (positions rotated with it), its tilt factors are
brought within half a box length by equivalent lattice vectors, and the
atoms are wrapped into it; an orthogonal cell stays as it is. Frames periodic
in no direction get an orthogonal box around the atoms with PAD Angstrom
(default 10) of vacuum on each side, one value or one per direction; run them
with boundary "f f f" (in.mlff: -var boundary "f f f"). Frames periodic in
some directions only are refused.

Only the Python standard library is used.
"""
import argparse
import math
import re
import sys

# Standard atomic weights (IUPAC, conventional values), by atomic number.
MASSES = [None, 1.008, 4.0026, 6.94, 9.0122, 10.81, 12.011, 14.007, 15.999, 18.998, 20.180,
          22.990, 24.305, 26.982, 28.085, 30.974, 32.06, 35.45, 39.948, 39.098, 40.078,
          44.956, 47.867, 50.942, 51.996, 54.938, 55.845, 58.933, 58.693, 63.546, 65.38,
          69.723, 72.630, 74.922, 78.971, 79.904, 83.798, 85.468, 87.62, 88.906, 91.224,
          92.906, 95.95, 97.0, 101.07, 102.91, 106.42, 107.87, 112.41, 114.82, 118.71,
          121.76, 127.60, 126.90, 131.29]
SYMBOLS = ("X H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn "
           "Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe").split()


def fail(message):
    sys.exit("xyz2data.py: " + message)


def parse_comment(line):
    """key=value pairs of an extended XYZ comment line (values may be quoted)."""
    pairs = {}
    for m in re.finditer(r'(\w+)=("([^"]*)"|\S+)', line):
        pairs[m.group(1)] = m.group(3) if m.group(3) is not None else m.group(2)
    return pairs


def read_frame(path, frame):
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    for k in range(frame + 1):
        if i >= len(lines) or not lines[i].strip():
            fail("%s has no frame %d" % (path, frame))
        n = int(lines[i].split()[0])
        if k < frame:
            i += n + 2
    comment = parse_comment(lines[i + 1])
    species_col, pos_col = 0, 1
    if "Properties" in comment:
        col = 0
        species_col = pos_col = None
        fields = comment["Properties"].split(":")
        for name, kind, count in zip(fields[0::3], fields[1::3], fields[2::3]):
            if name == "species":
                species_col = col
            elif name == "pos":
                pos_col = col
            col += int(count)
        if species_col is None or pos_col is None:
            fail("%s: Properties has no species or pos" % path)
    symbols, positions = [], []
    for line in lines[i + 2:i + 2 + n]:
        words = line.split()
        symbols.append(words[species_col])
        positions.append([float(w) for w in words[pos_col:pos_col + 3]])
    if len(symbols) != n:
        fail("%s: frame %d is truncated" % (path, frame))
    cell = None
    if "Lattice" in comment:
        v = [float(w) for w in comment["Lattice"].split()]
        cell = [v[0:3], v[3:6], v[6:9]]
    pbc = [False] * 3
    if "pbc" in comment:
        pbc = [w in ("T", "True", "true", "1") for w in comment["pbc"].split()]
    elif cell is not None:
        pbc = [True] * 3
    return symbols, positions, cell, pbc


def dot(u, v):
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def lammps_cell(cell):
    """(lx, ly, lz, xy, xz, yz) of the restricted triclinic form of a cell."""
    a, b, c = cell
    lx = math.sqrt(dot(a, a))
    xy = dot(b, a) / lx
    ly = math.sqrt(dot(b, b) - xy * xy)
    xz = dot(c, a) / lx
    yz = (dot(b, c) - xy * xz) / ly
    lz = math.sqrt(dot(c, c) - xz * xz - yz * yz)
    return lx, ly, lz, xy, xz, yz


def inverse(m):
    (a, b, c), (d, e, f), (g, h, i) = m
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    if abs(det) < 1e-12:
        fail("the cell is singular")
    return [[(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
            [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
            [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det]]


def row_times(r, m):
    return [r[0] * m[0][k] + r[1] * m[1][k] + r[2] * m[2][k] for k in range(3)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--elements", help='atom types in this order, e.g. "H O"')
    p.add_argument("--frame", type=int, default=0, help="frame to write, from 0")
    p.add_argument("--pad", default="10", help="vacuum around non-periodic frames, Angstrom")
    args = p.parse_args()

    symbols, positions, cell, pbc = read_frame(args.input, args.frame)
    for s in symbols:
        if s not in SYMBOLS[1:]:
            fail("unknown element %r" % s)
    if args.elements:
        elements = args.elements.split()
    else:
        elements = sorted(set(symbols), key=SYMBOLS.index)
        print("xyz2data.py: types %s (-var elements \"%s\")" % (
            ", ".join("%d %s" % (k + 1, e) for k, e in enumerate(elements)),
            " ".join(elements)), file=sys.stderr)
    for s in set(symbols):
        if s not in elements:
            fail("element %s is in the structure but not in --elements %r" % (s, " ".join(elements)))
    for e in elements:
        if e not in SYMBOLS[1:]:
            fail("--elements: unknown element %r" % e)
        if elements.count(e) > 1:
            fail("--elements: %s twice" % e)

    lines = []
    if all(pbc):
        if cell is None:
            fail("a periodic frame needs a Lattice")
        lx, ly, lz, xy, xz, yz = lammps_cell(cell)
        rotated_cell = [[lx, 0.0, 0.0], [xy, ly, 0.0], [xz, yz, lz]]
        # Equivalent lattice vectors with the tilts within half a box length
        # (c - n b, c - n a, b - n a describe the same lattice).
        n = round(yz / ly)
        yz -= n * ly
        xz -= n * xy
        n = round(xz / lx)
        xz -= n * lx
        n = round(xy / lx)
        xy -= n * lx
        new = [[lx, 0.0, 0.0], [xy, ly, 0.0], [xz, yz, lz]]
        # Rotated: r' = s H' with s the fractional coordinates in the
        # original cell and H' its rotated form; then wrapped into the
        # (reduced) LAMMPS cell.
        h_inv = inverse(cell)
        new_inv = inverse(new)
        rotated = []
        for r in positions:
            rr = row_times(row_times(r, h_inv), rotated_cell)
            s = row_times(rr, new_inv)
            s = [x - math.floor(x) for x in s]
            rotated.append(row_times(s, new))
        positions = rotated
        triclinic = any(abs(t) > 1e-12 for t in (xy, xz, yz))
        bounds = [(0.0, lx), (0.0, ly), (0.0, lz)]
    elif not any(pbc):
        pads = [float(x) for x in args.pad.split(",")]
        if len(pads) == 1:
            pads *= 3
        if len(pads) != 3 or min(pads) < 0:
            fail("--pad: one distance or three, >= 0")
        bounds = []
        for k in range(3):
            lo = min(r[k] for r in positions)
            hi = max(r[k] for r in positions)
            bounds.append((lo - pads[k], hi + pads[k]))
        triclinic = False
    else:
        fail("frames periodic in some directions only are not supported")

    lines.append("LAMMPS data file from %s (frame %d) by xyz2data.py: types %s; boundary %s" % (
        args.input, args.frame, " ".join(elements), "p p p" if all(pbc) else "f f f"))
    lines.append("")
    lines.append("%d atoms" % len(symbols))
    lines.append("%d atom types" % len(elements))
    lines.append("")
    for (lo, hi), name in zip(bounds, ("x", "y", "z")):
        lines.append("%.17g %.17g %slo %shi" % (lo, hi, name, name))
    if triclinic:
        lines.append("%.17g %.17g %.17g xy xz yz" % (xy, xz, yz))
    lines.append("")
    lines.append("Masses")
    lines.append("")
    for k, e in enumerate(elements):
        z = SYMBOLS.index(e)
        if z >= len(MASSES):
            fail("no mass for %s" % e)
        lines.append("%d %.5f  # %s" % (k + 1, MASSES[z], e))
    lines.append("")
    lines.append("Atoms  # atomic")
    lines.append("")
    for i, (s, r) in enumerate(zip(symbols, positions)):
        lines.append("%d %d %.17g %.17g %.17g" % (i + 1, elements.index(s) + 1, r[0], r[1], r[2]))
    with open(args.output, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
