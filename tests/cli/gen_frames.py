#!/usr/bin/python3
"""Generates extended XYZ frames for the streaming tests and benchmarks.

Usage: gen_frames.py N [SEED] [--bad K] [--close K] [--periodic]

Writes N frames to standard output: molecules of 3 to 30 atoms (elements H,
C, N, O, S, F, Cl in ANI-2x's proportions), each a random bonded chain (every
atom 1.0-1.5 Angstrom from one before it and at least 1.0 from all), so that
their pair counts and costs are those of small molecules. A pool of 512
shapes is made once and every frame is one of them, turned and moved a
little, so that N = 10^6 takes under a minute. The comment line says
name=mN (the pool shape) and i=K (the frame's number, from 1).

--bad K: every K-th frame is bad, alternately for the reader (a coordinate
that is not a number) and for the library (two atoms 0.01 Angstrom apart).
--close K: every K-th frame is bad for the library alone.
--periodic: every fifth frame is a periodic box (a Lattice line, pbc T T T).
Standard library only: the CLI tests run without numpy.
"""
import math
import random
import sys

ELEMENTS = ["H"] * 10 + ["C"] * 6 + ["N"] * 2 + ["O"] * 2 + ["S", "F", "Cl"]


def molecule(rng):
    n = rng.randint(3, 30)
    atoms = [(rng.choice(ELEMENTS), (0.0, 0.0, 0.0))]
    while len(atoms) < n:
        _, (x, y, z) = rng.choice(atoms)
        r = rng.uniform(1.0, 1.5)
        u, v = rng.uniform(-1, 1), rng.uniform(0, 2 * math.pi)
        s = math.sqrt(1 - u * u)
        p = (x + r * s * math.cos(v), y + r * s * math.sin(v), z + r * u)
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2 >= 1.0 for _, q in atoms):
            atoms.append((rng.choice(ELEMENTS), p))
    return atoms


def rotation(rng):
    a, b, c = (rng.uniform(0, 2 * math.pi) for _ in range(3))
    ca, sa, cb, sb, cc, sc = math.cos(a), math.sin(a), math.cos(b), math.sin(b), math.cos(c), math.sin(c)
    return ((ca * cb, ca * sb * sc - sa * cc, ca * sb * cc + sa * sc),
            (sa * cb, sa * sb * sc + ca * cc, sa * sb * cc - ca * sc),
            (-sb, cb * sc, cb * cc))


def main(argv):
    args, bad, close, periodic = [], 0, 0, False
    rest = iter(argv[1:])
    for a in rest:
        if a == "--bad":
            bad = int(next(rest))
        elif a == "--close":
            close = int(next(rest))
        elif a == "--periodic":
            periodic = True
        else:
            args.append(a)
    n = int(args[0])
    seed = int(args[1]) if len(args) > 1 else 1
    rng = random.Random(seed)
    pool = [molecule(rng) for _ in range(512)]
    out = sys.stdout
    lines = []
    for i in range(1, n + 1):
        k = rng.randrange(len(pool))
        atoms = pool[k]
        m = rotation(rng)
        shift = (rng.uniform(-5, 5), rng.uniform(-5, 5), rng.uniform(-5, 5))
        kind = 0
        if bad and i % bad == 0:
            kind = 1 if (i // bad) % 2 else 2
        if close and i % close == 0:
            kind = 2
        box = periodic and i % 5 == 0
        if box:
            lines.append('%d\nLattice="12 0 0 0 12 0 0 0 12" name=m%d i=%d pbc="T T T"\n' % (len(atoms), k, i))
        else:
            lines.append("%d\nname=m%d i=%d\n" % (len(atoms), k, i))
        for a, (symbol, (x, y, z)) in enumerate(atoms):
            px = m[0][0] * x + m[0][1] * y + m[0][2] * z + shift[0]
            py = m[1][0] * x + m[1][1] * y + m[1][2] * z + shift[1]
            pz = m[2][0] * x + m[2][1] * y + m[2][2] * z + shift[2]
            if kind == 1 and a == 1:
                lines.append("%s %.8f oops %.8f\n" % (symbol, px, pz))
            elif kind == 2 and a == 1:
                lines.append("%s %.8f %.8f %.8f\n" % (symbol, prev[0] + 0.01, prev[1], prev[2]))
            else:
                lines.append("%s %.8f %.8f %.8f\n" % (symbol, px, py, pz))
            prev = (px, py, pz)
        if len(lines) > 4096:
            out.write("".join(lines))
            lines = []
    out.write("".join(lines))
    out.flush()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BrokenPipeError:
        sys.exit(0)
