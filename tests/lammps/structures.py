"""The structures of the LAMMPS tests, written as extended XYZ (the input of
both `mlff energy` and examples/lammps/xyz2data.py).

  water_box_384      water_box_64 (TorchANI reference box, 12.4 A) repeated
                     twice along a: 384 atoms, periodic, 24.8 x 12.4 x 12.4 A.
  water_triclinic_8  8 waters in a skewed triclinic cell of about 7 A (less
                     than twice the 5.1 A cutoff, so ghosts come from several
                     images), given in a rotated frame and with a tilt above
                     half a box length, so that xyz2data.py must rotate the
                     cell into LAMMPS's form and reduce the tilt.
  water_cluster_100  the 300-atom reference cluster, non-periodic, in a box
                     elongated along x (pad 30 A in x, 8 A in y and z): on 4
                     ranks LAMMPS cuts it 4 x 1 x 1 and the two outer ranks
                     own no atoms.
  ethanol            g2_CH3CH2OH, non-periodic (small: PoCL, the error cases).
  methane            g2_CH4, non-periodic (the long NVE run).
"""
import math
import os

import lammps_common as lc

ELEMENTS = {
    "water_box_384": ["H", "O"],
    "water_triclinic_8": ["H", "O"],
    "water_cluster_100": ["H", "O"],
    "ethanol": ["H", "C", "O"],
    "methane": ["H", "C"],
}
PAD = {"water_cluster_100": "30,8,8", "ethanol": "10", "methane": "10"}
PERIODIC = {"water_box_384": True, "water_triclinic_8": True,
            "water_cluster_100": False, "ethanol": False, "methane": False}


def rotation(axis, angle):
    x, y, z = axis
    n = math.sqrt(x * x + y * y + z * z)
    x, y, z = x / n, y / n, z / n
    c, s = math.cos(angle), math.sin(angle)
    return [[c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
            [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
            [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)]]


def apply(m, v):
    return [sum(m[i][k] * v[k] for k in range(3)) for i in range(3)]


def water_triclinic_8():
    # A water from the G2 reference (O first), centred on its oxygen.
    w_symbols, w_pos, _, _, _ = lc.read_extxyz(os.path.join(lc.REFERENCE_DIR, "g2_H2O.extxyz"))
    origin = w_pos[0]
    water = [[p[k] - origin[k] for k in range(3)] for p in w_pos]
    # The cell in LAMMPS-like form with xy above lx/2, then turned by Q.
    h = [[7.0, 0.0, 0.0], [4.4, 6.8, 0.0], [-1.1, 1.3, 7.1]]
    q = rotation((0.3, -0.5, 0.8), 0.7)
    cell = [apply(q, row) for row in h]
    symbols, positions = [], []
    k = 0
    for i in range(2):
        for j in range(2):
            for l in range(2):
                s = [(i + 0.25 + 0.08 * j) / 2, (j + 0.3) / 2, (l + 0.2 + 0.1 * i) / 2]
                centre = [sum(s[a] * cell[a][b] for a in range(3)) for b in range(3)]
                turn = rotation((1 + k, 2 - k % 3, 0.5 + k % 2), 0.9 * k + 0.3)
                for sym, p in zip(w_symbols, water):
                    r = apply(turn, p)
                    symbols.append(sym)
                    positions.append([centre[b] + r[b] for b in range(3)])
                k += 1
    return symbols, positions, cell, (True, True, True)


def make(env, name):
    """Writes NAME.extxyz and NAME.data into env.tmp; returns their paths."""
    xyz = env.path(name + ".extxyz")
    if name == "water_box_384":
        symbols, pos, cell, _, _ = lc.read_extxyz(
            os.path.join(lc.REFERENCE_DIR, "water_box_64.extxyz"))
        a = cell[0]
        symbols2 = symbols + symbols
        pos2 = pos + [[p[k] + a[k] for k in range(3)] for p in pos]
        cell2 = [[2 * x for x in a], cell[1], cell[2]]
        lc.write_extxyz(xyz, symbols2, pos2, cell2, (True, True, True))
    elif name == "water_triclinic_8":
        symbols, pos, cell, pbc = water_triclinic_8()
        lc.write_extxyz(xyz, symbols, pos, cell, pbc)
    elif name == "water_cluster_100":
        symbols, pos, _, _, _ = lc.read_extxyz(
            os.path.join(lc.REFERENCE_DIR, "water_cluster_100.extxyz"))
        lc.write_extxyz(xyz, symbols, pos)
    elif name in ("ethanol", "methane"):
        g2 = {"ethanol": "g2_CH3CH2OH", "methane": "g2_CH4"}[name]
        symbols, pos, _, _, _ = lc.read_extxyz(os.path.join(lc.REFERENCE_DIR, g2 + ".extxyz"))
        lc.write_extxyz(xyz, symbols, pos)
    else:
        raise SystemExit("unknown structure " + name)
    data = env.path(name + ".data")
    lc.write_data(env, xyz, data, ELEMENTS[name], PAD.get(name))
    return xyz, data


def min_distance(symbols, positions, cell):
    """Shortest distance between atoms of different waters (periodic images
    within one cell), for checking the generated box."""
    best = 1e9
    n = len(positions)
    for i in range(n):
        for j in range(n):
            if i // 3 == j // 3:
                continue
            for a in (-1, 0, 1):
                for b in (-1, 0, 1):
                    for c in (-1, 0, 1):
                        d = [positions[j][k] - positions[i][k] + a * cell[0][k] + b * cell[1][k]
                             + c * cell[2][k] for k in range(3)]
                        best = min(best, math.sqrt(sum(x * x for x in d)))
    return best
