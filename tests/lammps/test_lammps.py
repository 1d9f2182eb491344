#!/usr/bin/python3
"""pair_style mlff in LAMMPS (Debian's lmp), run as users run it:
`mpirun -np N lmp -in examples/lammps/in.mlff -var data FILE -var elements ...`.

    test_lammps.py CASE [--device cpu|opencl] [--ranks 1,2,4] [--lmp lmp]
                        [--mpirun mpirun] [--mlff build/tools/mlff] [--lib libmlff_lammps.so]

Cases (each a meson test of the lammps suite):
  reference STRUCTURE  on 1, 2 and 4 ranks: potential energy within 1e-6 eV of
                       `mlff energy --forces --stress --precision float64 --device cpu`
                       on the same structure, every force within 1e-8 eV/A (dump,
                       by atom ID; rotated into LAMMPS's frame for triclinic cells),
                       the pressure tensor within 1e-3 bar of -stress * nktv2p
                       (LAMMPS's 1.6021765e6; run 0, no velocities), or for a
                       non-periodic box of sum x (x) F / V * nktv2p.
  peratom              (the small triclinic box, 10 NVE steps, per-atom values every
                       5) eatom (compute pe/atom) sums to pe; cvatom (compute
                       centroid/stress/atom) and vatom (compute stress/atom) sum
                       to the virial pressure; per-atom energies and centroid
                       virials the same on 1, 2 and 4 ranks.
  nve                  100 NVE steps of 0.5 fs of the small triclinic water box: the
                       thermo lines of 1, 2 and 4 ranks agree within 1e-6 eV (pe, ke,
                       etotal); then methane, relaxed (minimize), 2000 steps on 1
                       rank: drift of the total energy (least-squares slope times
                       the run) below 1e-4 eV/atom. Small systems: float64 on the
                       CPU costs about 1 ms per atom and element here.
  skin                 NVE with the style's skin 0 and with the default (LAMMPS's
                       neighbor skin): the same thermo lines, and fewer mlff
                       neighbor searches with the default.
  errors               NULL in pair_coeff, an element that is none, an element the
                       model lacks, units lj, newton off, atoms too close, a device
                       that is not there, a bad keyword, a missing model file: each
                       stops LAMMPS (2 ranks) with a non-zero status and mlff's message.
  real                 units real: energies in kcal/mol (LAMMPS's qe2f, 23.060549
                       kcal/mol per eV), forces and pressure (atm) likewise.
  layers               a SchNet of 2 interaction layers (random weights, cutoff 3 A,
                       exported in float64 by python/mlff/export.py) in the small
                       triclinic water box (7 A cell, split on 2 and 4 ranks into
                       subdomains thinner than the 6 A its energies reach; skin 0.1
                       A, so that the one-layer ghost cutoff, 3.1 A, would be off by
                       about 1e-6 relative and 0.01 bar): on 1, 2
                       and 4 ranks the energy within 1e-8 relative of `mlff energy
                       --model` on the whole box, forces within 1e-8 eV/A, pressure
                       within 1e-3 bar, eatom summing to pe and cvatom to the virial,
                       per-atom values and 10 NVE steps (re-neighbouring) the same on
                       1, 2 and 4 ranks; and mlff refusing a
                       subdomain of that model whose ghosts are one cutoff deep, with
                       the depth it needs (the C API through ctypes).
  threads              CPU threads per rank: all the cores for one unbound rank, half
                       each for two, one each for ranks bound to a core, and
                       OMP_NUM_THREADS where set.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lammps_common as lc  # noqa: E402
import structures  # noqa: E402

ENERGY_TOL = 1e-6      # eV
FORCE_TOL = 1e-8       # eV/A
PRESSURE_TOL = 1e-3    # bar
DRIFT_LIMIT = 1e-4     # eV/atom over 2000 steps


def registration_block():
    """The registration lines of in.mlff, for the tests' own inputs."""
    with open(lc.IN_MLFF) as f:
        text = f.read()
    m = re.search(r"# ---- mlff registration: begin.*?# ---- mlff registration: end[^\n]*\n",
                  text, re.S)
    return m.group(0)


def write_input(env, name, body):
    path = env.path(name)
    with open(path, "w") as f:
        f.write(registration_block() + "\n" + body)
    return path


def box_volume(data_path):
    with open(data_path) as f:
        text = f.read()
    lo_hi = [re.search(r"(\S+) (\S+) %slo %shi" % (d, d), text) for d in "xyz"]
    v = 1.0
    for m in lo_hi:
        v *= float(m.group(2)) - float(m.group(1))
    return v


def nlocal_min(run):
    """The fewest atoms a rank owned (LAMMPS's Nlocal line after a run)."""
    m = re.search(r"Nlocal:\s+\S+ ave\s+\S+ max\s+(\S+) min", run.out)
    return float(m.group(1)) if m else None


def case_reference(env, f, name):
    xyz, data = structures.make(env, name)
    elements = structures.ELEMENTS[name]
    e_ref, f_ref, stress = lc.mlff_reference(env, xyz)
    symbols, positions, cell, _, _ = lc.read_extxyz(xyz)
    periodic = structures.PERIODIC[name]
    rot = lc.lammps_rotation(cell) if periodic else [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    if periodic:
        # stress in LAMMPS's frame: R^T sigma R; pressure = -stress * nktv2p
        s = lc.matmul(lc.matmul(lc.transpose(rot), stress), rot)
        p_ref = [-s[0][0], -s[1][1], -s[2][2], -s[0][1], -s[0][2], -s[1][2]]
    else:
        # no cell: the virial sum x (x) F of the reference forces over the box volume
        w = [[sum(positions[i][a] * f_ref[i][b] for i in range(len(positions)))
              for b in range(3)] for a in range(3)]
        vol = box_volume(data)
        p_ref = [w[0][0] / vol, w[1][1] / vol, w[2][2] / vol, w[0][1] / vol, w[0][2] / vol,
                 w[1][2] / vol]
    p_ref = [x * lc.NKTV2P_METAL for x in p_ref]
    f_ref_lammps = [[sum(fr[k] * rot[k][j] for k in range(3)) for j in range(3)] for fr in f_ref]

    for ranks in env.ranks:
        dump = "forces_%d.dump" % ranks
        run = lc.lmp(env, ranks, lc.IN_MLFF, [
            ("data", data), ("elements", " ".join(elements)), ("precision", "float64"),
            ("device", env.device), ("boundary", "p p p" if periodic else "f f f"),
            ("dump_every", 1), ("dump", dump), ("thermo_format", "%20.15g")])
        tag = "%s, %d rank(s), %s" % (name, ranks, env.device)
        if not f.check(run.rc == 0, "%s: lmp ran: %r" % (tag, run)):
            continue
        m = re.search(r"pair mlff: .* on (.*) \(rank 0 of", run.out)
        device = m.group(1) if m else "?"
        f.check(device.startswith(env.device), "%s: runs on %s" % (tag, device))
        rows = lc.thermo(run)
        if not f.check(len(rows) == 1, "%s: one thermo line: %r" % (tag, run)):
            continue
        row = rows[0]
        de = abs(row["PotEng"] - e_ref)
        f.check(de <= ENERGY_TOL, "%s: pe %.12f vs mlff %.12f (|d| %.2e eV)" % (
            tag, row["PotEng"], e_ref, de))
        p = [row[k] for k in ("Pxx", "Pyy", "Pzz", "Pxy", "Pxz", "Pyz")]
        dp = max(abs(a - b) for a, b in zip(p, p_ref))
        f.check(dp <= PRESSURE_TOL, "%s: pressure tensor %s vs %s (max |d| %.2e bar)" % (
            tag, p, p_ref, dp))
        atoms = lc.read_dump(env.path(dump))
        f.check(len(atoms) == len(symbols), "%s: %d atoms in the dump" % (tag, len(atoms)))
        df = 0.0
        for i, fr in enumerate(f_ref_lammps):
            t, _, fl = atoms[i + 1]
            f.check(elements[t - 1] == symbols[i], "%s: atom %d type" % (tag, i + 1))
            df = max(df, max(abs(a - b) for a, b in zip(fl, fr)))
        f.check(df <= FORCE_TOL, "%s: forces, max |d| %.2e eV/A" % (tag, df))
        empty = nlocal_min(run)
        print("%s: |dE| %.1e eV, max |dF| %.1e eV/A, max |dP| %.1e bar, fewest owned atoms %s, "
              "%.1f s (%s)" % (tag, de, df, dp, empty, run.seconds, device))
        if name == "water_cluster_100" and ranks == 4:
            f.check(empty == 0, "%s: some rank owns no atoms (Nlocal min %s)" % (tag, empty))


PERATOM_INPUT = """
units metal
atom_style atomic
read_data ${data}
neighbor 1.0 bin
pair_style mlff device ${device} precision float64
pair_coeff * * ${elements}
compute pea all pe/atom
compute cs all centroid/stress/atom NULL virial
compute vs all stress/atom NULL virial
compute sums all reduce sum c_pea c_cs[*] c_vs[*]
compute pv all pressure NULL virial
thermo_style custom step pe vol c_pv[*] c_sums[*]
thermo_modify format float %20.15g
thermo 5
dump peratom all custom 5 ${dump} id c_pea c_cs[*]
dump_modify peratom sort id format float %20.15g
velocity all create 300 4928459 mom yes rot no dist gaussian loop geom
fix nve all nve
timestep 0.0005
run 10
"""


def read_peratom_dump(path):
    frames, cur = [], None
    with open(path) as fh:
        lines = fh.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("ITEM: ATOMS"):
            cur = {}
            i += 1
            while i < len(lines) and lines[i] and not lines[i].startswith("ITEM"):
                w = lines[i].split()
                cur[int(w[0])] = [float(x) for x in w[1:]]
                i += 1
            frames.append(cur)
            continue
        i += 1
    return frames


def case_peratom(env, f):
    name = "water_triclinic_8"
    xyz, data = structures.make(env, name)
    inp = write_input(env, "in.peratom", PERATOM_INPUT)
    first = None
    for ranks in env.ranks:
        dump = "peratom_%d.dump" % ranks
        run = lc.lmp(env, ranks, inp, [("data", data), ("elements", "H O"),
                                       ("device", env.device), ("dump", dump)])
        tag = "peratom, %d rank(s)" % ranks
        if not f.check(run.rc == 0, "%s: lmp ran: %r" % (tag, run)):
            continue
        rows = lc.thermo(run)
        f.check(len(rows) == 3, "%s: 3 thermo lines" % tag)
        worst = [0.0, 0.0, 0.0]
        for row in rows:
            pe, vol = row["PotEng"], row["Volume"]
            pv = [row["c_pv[%d]" % k] for k in range(1, 7)]
            s = [row["c_sums[%d]" % k] for k in range(1, 17)]
            worst[0] = max(worst[0], abs(s[0] - pe))
            # per-atom stress is -(virial) in pressure*volume units
            cs = [-x / vol for x in s[1:10]]
            vs = [-x / vol for x in s[10:16]]
            d_cs = max(abs(cs[k] - pv[k]) for k in range(6))
            # yx zx zy against xy xz yz: the summed centroid virial is symmetric
            d_cs = max(d_cs, max(abs(cs[6 + k] - pv[3 + k]) for k in range(3)))
            d_vs = max(abs(vs[k] - pv[k]) for k in range(6))
            worst[1] = max(worst[1], d_cs)
            worst[2] = max(worst[2], d_vs)
        f.check(worst[0] <= ENERGY_TOL, "%s: sum of eatom vs pe, |d| %.2e eV" % (tag, worst[0]))
        f.check(worst[1] <= PRESSURE_TOL, "%s: sum of cvatom vs virial pressure, |d| %.2e bar" % (
            tag, worst[1]))
        f.check(worst[2] <= PRESSURE_TOL, "%s: sum of vatom vs virial pressure, |d| %.2e bar" % (
            tag, worst[2]))
        frames = read_peratom_dump(env.path(dump))
        if first is None:
            first = frames
            d = 0.0
        else:
            # relative: the centroid virials are in bar A^3 (about 1e6 here)
            d = max(abs(a - b) / max(1.0, abs(a)) for fa, fb in zip(first, frames) for i in fa
                    for a, b in zip(fa[i], fb[i]))
            f.check(len(frames) == 3 and d <= 1e-9, "%s: per-atom energies and virials as on %d "
                    "rank(s), max relative |d| %.2e" % (tag, env.ranks[0], d))
        print("%s: sum eatom - pe %.1e eV, cvatom %.1e bar, vatom %.1e bar, per-atom vs %d rank(s)"
              " %.1e, %.1f s" % (tag, worst[0], worst[1], worst[2], env.ranks[0], d, run.seconds))


DRIFT_INPUT = """
units metal
atom_style atomic
boundary f f f
read_data ${data}
neighbor 1.0 bin
pair_style mlff device ${device} precision float64
pair_coeff * * ${elements}
thermo_style custom step pe ke etotal
thermo_modify format float %20.15g
min_style cg
minimize 0 1e-3 1000 10000
reset_timestep 0
velocity all create 300 4928459 mom yes rot yes dist gaussian loop geom
fix nve all nve
timestep 0.0005
thermo 10
run 2000
"""


def case_nve(env, f):
    name = "water_triclinic_8"
    xyz, data = structures.make(env, name)
    runs = {}
    for ranks in env.ranks:
        run = lc.lmp(env, ranks, lc.IN_MLFF, [
            ("data", data), ("elements", "H O"), ("precision", "float64"), ("device", env.device),
            ("steps", 100), ("thermo", 10), ("thermo_format", "%20.15g")])
        tag = "nve, %d rank(s)" % ranks
        if f.check(run.rc == 0, "%s: lmp ran: %r" % (tag, run)):
            rows = lc.thermo(run)
            f.check(len(rows) == 11, "%s: 11 thermo lines, got %d" % (tag, len(rows)))
            runs[ranks] = rows
            print("%s: %.1f s, etotal %.9f -> %.9f eV" % (tag, run.seconds, rows[0]["TotEng"],
                                                           rows[-1]["TotEng"]))
    base = env.ranks[0]
    for ranks, rows in runs.items():
        if ranks == base or base not in runs:
            continue
        de = max(abs(a[k] - b[k]) for a, b in zip(runs[base], rows)
                 for k in ("PotEng", "KinEng", "TotEng"))
        dp = max(abs(a[k] - b[k]) for a, b in zip(runs[base], rows) for k in ("Press", "Pxx"))
        f.check(de <= ENERGY_TOL, "nve: %d vs %d rank(s): thermo energies differ by %.2e eV" % (
            ranks, base, de))
        print("nve: %d vs %d rank(s) over 100 steps: max |d| energies %.1e eV, pressure %.1e bar" % (
            ranks, base, de, dp))

    # Energy conservation: relaxed methane, 2000 steps of 0.5 fs on one rank
    # (the same numbers on more, as above; float64 on the CPU costs about a
    # millisecond per atom and element here, and CI has 2 cores).
    xyz, data = structures.make(env, "methane")
    inp = write_input(env, "in.drift", DRIFT_INPUT)
    ranks = env.ranks[0]
    run = lc.lmp(env, ranks, inp, [("data", data), ("elements", "H C"), ("device", env.device)])
    if not f.check(run.rc == 0, "drift: lmp ran: %r" % run):
        return
    rows = [r for r in lc.thermo(run) if "KinEng" in r]
    md = rows[-201:]
    f.check(len(md) == 201 and md[0]["Step"] == 0 and md[-1]["Step"] == 2000,
            "drift: thermo of steps 0..2000")
    n_atoms = 5
    t = [r["Step"] for r in md]
    e = [r["TotEng"] for r in md]
    tm, em = sum(t) / len(t), sum(e) / len(e)
    slope = sum((a - tm) * (b - em) for a, b in zip(t, e)) / sum((a - tm) ** 2 for a in t)
    drift = abs(slope * (t[-1] - t[0])) / n_atoms
    fluct = max(abs(x - e[0]) for x in e) / n_atoms
    temp_ke = sum(r["KinEng"] for r in md) / len(md)
    f.check(drift < DRIFT_LIMIT, "drift: %.2e eV/atom over 2000 steps (limit %.0e)" % (
        drift, DRIFT_LIMIT))
    f.check(temp_ke > 0.05, "drift: the molecule moves (mean ke %.3f eV)" % temp_ke)
    print("drift: methane, %d ranks, 2000 steps of 0.5 fs: %.2e eV/atom (fit), max |E - E0| "
          "%.2e eV/atom, mean ke %.3f eV, %.1f s" % (ranks, drift, fluct, temp_ke, run.seconds))


def case_skin(env, f):
    name = "water_triclinic_8"
    xyz, data = structures.make(env, name)
    results = {}
    for label, options in (("skin 0", "skin 0 verbose yes"), ("default skin", "verbose yes")):
        run = lc.lmp(env, 2, lc.IN_MLFF, [
            ("data", data), ("elements", "H O"), ("precision", "float64"), ("device", env.device),
            ("steps", 100), ("thermo", 10), ("temperature", 600), ("pair_options", options),
            ("thermo_format", "%20.15g")])
        if not f.check(run.rc == 0, "skin: %s: lmp ran: %r" % (label, run)):
            return
        m = re.search(r"pair mlff \(rank 0\): (\d+) evaluations, (\d+) neighbor list builds", run.out)
        lmp_builds = re.search(r"Neighbor list builds = (\d+)", run.out)
        if not f.check(m is not None, "skin: %s: the style's counts: %r" % (label, run)):
            return
        results[label] = (lc.thermo(run), int(m.group(1)), int(m.group(2)),
                          int(lmp_builds.group(1)) if lmp_builds else -1)
        print("skin: %s: %s evaluations, %s mlff neighbor searches (rank 0), LAMMPS re-neighboured"
              " %s times" % (label, m.group(1), m.group(2), results[label][3]))
    rows0, ev0, nb0, _ = results["skin 0"]
    rows1, ev1, nb1, lmp_nb = results["default skin"]
    d = max(abs(a[k] - b[k]) for a, b in zip(rows0, rows1) for k in ("PotEng", "TotEng"))
    dp = max(abs(a[k] - b[k]) for a, b in zip(rows0, rows1)
             for k in ("Pxx", "Pyy", "Pzz", "Pxy", "Pxz", "Pyz"))
    f.check(len(rows0) == len(rows1) == 11, "skin: 11 thermo lines each")
    f.check(d <= 1e-8, "skin: energies with skin 0 and the default differ by %.2e eV" % d)
    f.check(dp <= 1e-4, "skin: pressures with skin 0 and the default differ by %.2e bar" % dp)
    f.check(ev0 == ev1 == 101, "skin: 101 evaluations each (%d, %d)" % (ev0, ev1))
    f.check(nb0 == ev0, "skin: skin 0 searches at every evaluation (%d, %d)" % (nb0, ev0))
    f.check(nb1 < nb0 / 4, "skin: the default searches less (%d vs %d)" % (nb1, nb0))
    f.check(lmp_nb > 0, "skin: LAMMPS re-neighboured during the run (%d)" % lmp_nb)
    print("skin: energies |d| %.1e eV, pressures %.1e bar" % (d, dp))


ERROR_BASE = """
units ${units}
newton ${newton}
atom_style atomic
boundary f f f
read_data ${data}
pair_style mlff device cpu ${pair_options}
pair_coeff * * ${elements}
run 0
"""


def case_errors(env, f):
    xyz, data = structures.make(env, "ethanol")
    close_xyz = env.path("close.extxyz")
    lc.write_extxyz(close_xyz, ["O", "H", "H", "H"],
                    [[0, 0, 0], [0.96, 0, 0], [-0.3, 0.9, 0], [0.96, 0.05, 0.0]])
    close_data = env.path("close.data")
    lc.write_data(env, close_xyz, close_data, ["H", "O"], "10")
    inp = write_input(env, "in.errors", ERROR_BASE)
    defaults = {"units": "metal", "newton": "on", "data": data, "elements": "H C O",
                "pair_options": ""}
    cases = [
        ("NULL type", {"elements": "H NULL O"}, r"type 2 is NULL"),
        ("not an element", {"elements": "H Xx O"}, r"type 2: Xx is not a chemical element"),
        ("element not in the model", {"elements": "H C Fe"},
         r"element Fe is not in model ANI-2x \(H C N O S F Cl\)"),
        ("units lj", {"units": "lj"}, r"units lj are not supported"),
        ("newton off", {"newton": "off"}, r"needs newton pair on"),
        ("atoms too close", {"data": close_data, "elements": "H O"},
         r"pair mlff: step 0, atom ID [24] \((a ghost; )?mlff's atom \d+ of this rank's \d+ owned and \d+ ghost atoms\): atom is 0\.05 Angstrom from atom"),
        ("no such device", {"pair_options": "device vulkan device_index 99"},
         r"pair mlff: cannot open device 'vulkan' index 99"),
        ("bad keyword", {"pair_options": "colour red"}, r"unknown keyword colour"),
        ("missing model file", {"pair_options": "model /nonexistent/model.mlff"},
         r"pair mlff: cannot open .*model '/nonexistent/model.mlff'"),
    ]
    for label, changes, pattern in cases:
        variables = dict(defaults)
        variables.update(changes)
        # On 2 ranks: the errors found on every rank and those found on one.
        # ("device vulkan" overrides the input's "device cpu": the later keyword wins.)
        run = lc.lmp(env, 2, inp, list(variables.items()))
        ok = run.rc != 0 and re.search(pattern, run.out) is not None
        crashed = re.search(r"Segmentation|signal 11|core dumped|Aborted \(", run.out)
        f.check(ok and not crashed, "errors: %s: want a non-zero status and /%s/: %r" % (
            label, pattern, run))
        if ok:
            line = next(l for l in run.out.split("\n") if re.search(pattern, l))
            print("errors: %s: %s" % (label, line.strip()))


REAL_INPUT = """
units real
atom_style atomic
read_data ${data}
neighbor 1.0 bin
pair_style mlff device ${device} precision float64
pair_coeff * * ${elements}
thermo_style custom step pe pxx pyy pzz pxy pxz pyz
thermo_modify format float %20.15g
dump forces all custom 1 ${dump} id type x y z fx fy fz
dump_modify forces sort id format float %20.15g
run 0
"""
QE2F_REAL = 23.060549        # LAMMPS force->qe2f in real units: kcal/mol per eV
NKTV2P_REAL = 68568.415      # LAMMPS force->nktv2p in real units (atm per kcal/mol/A^3)


def case_real(env, f):
    name = "water_triclinic_8"
    xyz, data = structures.make(env, name)
    e_ref, f_ref, stress = lc.mlff_reference(env, xyz)
    _, _, cell, _, _ = lc.read_extxyz(xyz)
    rot = lc.lammps_rotation(cell)
    s = lc.matmul(lc.matmul(lc.transpose(rot), stress), rot)
    p_ref = [-s[0][0], -s[1][1], -s[2][2], -s[0][1], -s[0][2], -s[1][2]]
    p_ref = [x * QE2F_REAL * NKTV2P_REAL for x in p_ref]
    inp = write_input(env, "in.real", REAL_INPUT)
    for ranks in env.ranks[:2]:
        run = lc.lmp(env, ranks, inp, [("data", data), ("elements", "H O"),
                                       ("device", env.device), ("dump", "real.dump")])
        tag = "real, %d rank(s)" % ranks
        if not f.check(run.rc == 0, "%s: lmp ran: %r" % (tag, run)):
            continue
        row = lc.thermo(run)[0]
        de = abs(row["PotEng"] - e_ref * QE2F_REAL)
        f.check(de <= ENERGY_TOL * QE2F_REAL, "%s: pe %.10f kcal/mol vs %.10f" % (
            tag, row["PotEng"], e_ref * QE2F_REAL))
        p = [row[k] for k in ("Pxx", "Pyy", "Pzz", "Pxy", "Pxz", "Pyz")]
        dp = max(abs(a - b) for a, b in zip(p, p_ref))
        f.check(dp <= PRESSURE_TOL, "%s: pressure (atm) %s vs %s" % (tag, p, p_ref))
        atoms = lc.read_dump(env.path("real.dump"))
        df = 0.0
        for i, fr in enumerate(f_ref):
            frl = [sum(fr[k] * rot[k][j] for k in range(3)) * QE2F_REAL for j in range(3)]
            df = max(df, max(abs(a - b) for a, b in zip(atoms[i + 1][2], frl)))
        f.check(df <= FORCE_TOL * QE2F_REAL, "%s: forces max |d| %.2e kcal/mol/A" % (tag, df))
        print("%s: |dE| %.1e kcal/mol, max |dF| %.1e kcal/mol/A, max |dP| %.1e atm" % (
            tag, de, df, dp))


LAYERS_INPUT = """
units metal
atom_style atomic
read_data ${data}
neighbor 0.1 bin
pair_style mlff device ${device} precision float64 model ${model}
pair_coeff * * ${elements}
compute pea all pe/atom
compute cs all centroid/stress/atom NULL virial
compute sums all reduce sum c_pea c_cs[1] c_cs[2] c_cs[3]
compute pv all pressure NULL virial
thermo_style custom step pe pxx pyy pzz pxy pxz pyz vol c_pv[1] c_pv[2] c_pv[3] c_sums[*]
thermo_modify format float %20.15g
dump forces all custom 1 ${dump} id type x y z fx fy fz
dump_modify forces sort id format float %20.15g
dump peratom all custom 1 ${peratom} id c_pea c_cs[*]
dump_modify peratom sort id format float %20.15g
run 0
undump forces
undump peratom
velocity all create 300 4928459 mom yes rot no dist gaussian loop geom
fix nve all nve
timestep 0.0005
thermo_style custom step pe ke etotal
run 10
"""


def export_schnet(path, cutoff, layers):
    """A SchNet of `layers` interaction layers, random weights, float64."""
    sys.path.insert(0, os.path.join(lc.SOURCE_ROOT, "python"))
    sys.path.insert(0, os.path.join(lc.SOURCE_ROOT, "examples"))
    try:
        import torch
        from mlff.export import export_model
        from schnet import SchNet
    except ImportError as e:
        lc.skip_or_fail("PyTorch or the exporter: %s" % e)
    torch.manual_seed(58)
    module = SchNet(features=16, n_rbf=8, cutoff=cutoff, n_interactions=layers).double()
    export_model(module, path, cutoff=cutoff, elements=["H", "O"])


def shallow_refusal(env, f, model_path, positions, symbols, cutoff):
    """mlff_compute_subdomain with ghosts one cutoff deep (ghost_depth 0) and
    with a depth short of 2 cutoffs: refused, naming the depth it needs."""
    import ctypes
    lib_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(env.mlff))), "api",
                            "libmlff.so")
    lib = ctypes.CDLL(lib_path)

    class Settings(ctypes.Structure):  # mlff_settings
        _fields_ = [("device", ctypes.c_int), ("device_index", ctypes.c_int),
                    ("precision", ctypes.c_int), ("n_threads", ctypes.c_int),
                    ("neighbors", ctypes.c_int), ("skin", ctypes.c_double),
                    ("max_chunk_atoms", ctypes.c_int64), ("reserved", ctypes.c_uint8 * 48)]

    class Subdomain(ctypes.Structure):
        _fields_ = [("n_owned", ctypes.c_int64), ("n_atoms", ctypes.c_int64),
                    ("atomic_numbers", ctypes.c_void_p), ("positions", ctypes.c_void_p),
                    ("renumbered", ctypes.c_int), ("reserved_pad", ctypes.c_int),
                    ("ghost_depth", ctypes.c_double), ("reserved", ctypes.c_uint8 * 16)]

    class Results(ctypes.Structure):
        _fields_ = [("energy", ctypes.c_void_p), ("forces", ctypes.c_void_p),
                    ("virial", ctypes.c_void_p), ("atom_energies", ctypes.c_void_p),
                    ("atom_virials", ctypes.c_void_p), ("reserved", ctypes.c_void_p * 4)]

    settings = Settings()
    lib.mlff_default_settings(ctypes.byref(settings))
    settings.device = 1  # MLFF_DEVICE_CPU
    settings.precision = 1  # MLFF_PRECISION_FLOAT64
    ctx, model = ctypes.c_void_p(), ctypes.c_void_p()
    lib.mlff_last_error.restype = ctypes.c_char_p
    st = lib.mlff_open(ctypes.byref(settings), model_path.encode(), ctypes.byref(ctx),
                       ctypes.byref(model))
    if not f.check(st == 0, "layers: mlff_open %d" % st):
        return
    layers = ctypes.c_int()
    f.check(lib.mlff_model_get_interaction_layers(model, ctypes.byref(layers)) == 0
            and layers.value == 2, "layers: the model reports %d interaction layers" % layers.value)
    n = len(symbols)
    z = (ctypes.c_int32 * n)(*[{"H": 1, "O": 8}[s] for s in symbols])
    r = (ctypes.c_double * (3 * n))(*[x for p in positions for x in p])
    energy = ctypes.c_double()
    forces = (ctypes.c_double * (3 * n))()
    res = Results(energy=ctypes.cast(ctypes.byref(energy), ctypes.c_void_p),
                  forces=ctypes.cast(forces, ctypes.c_void_p))
    for depth in (0.0, 2 * cutoff - 0.5):
        sub = Subdomain(n_owned=n // 2, n_atoms=n, atomic_numbers=ctypes.cast(z, ctypes.c_void_p),
                        positions=ctypes.cast(r, ctypes.c_void_p), renumbered=1, ghost_depth=depth)
        st = lib.mlff_compute_subdomain(model, ctypes.byref(sub), ctypes.byref(res))
        msg = lib.mlff_last_error(ctx).decode()
        f.check(st != 0 and "must reach %g Angstrom" % (2 * cutoff) in msg,
                "layers: ghost_depth %g refused (%d): %s" % (depth, st, msg))
        print("layers: ghost_depth %g: %s" % (depth, msg))
    sub = Subdomain(n_owned=n // 2, n_atoms=n, atomic_numbers=ctypes.cast(z, ctypes.c_void_p),
                    positions=ctypes.cast(r, ctypes.c_void_p), renumbered=1, ghost_depth=2 * cutoff)
    st = lib.mlff_compute_subdomain(model, ctypes.byref(sub), ctypes.byref(res))
    f.check(st == 0, "layers: ghost_depth %g accepted: %s" % (2 * cutoff, lib.mlff_last_error(ctx)))
    lib.mlff_context_destroy(ctx)


def case_layers(env, f):
    cutoff = 3.0
    model = env.path("schnet2.mlff")
    export_schnet(model, cutoff, 2)
    name = "water_triclinic_8"
    xyz, data = structures.make(env, name)
    symbols, positions, cell, _, _ = lc.read_extxyz(xyz)
    shallow_refusal(env, f, model, positions, symbols, cutoff)
    e_ref, f_ref, stress = lc.mlff_reference(env, xyz, model)
    rot = lc.lammps_rotation(cell)
    s = lc.matmul(lc.matmul(lc.transpose(rot), stress), rot)
    p_ref = [-x * lc.NKTV2P_METAL for x in (s[0][0], s[1][1], s[2][2], s[0][1], s[0][2], s[1][2])]
    f_ref_lammps = [[sum(fr[k] * rot[k][j] for k in range(3)) for j in range(3)] for fr in f_ref]
    inp = write_input(env, "in.layers", LAYERS_INPUT)
    first = None
    for ranks in env.ranks:
        dump, peratom = "layers_%d.dump" % ranks, "layers_peratom_%d.dump" % ranks
        run = lc.lmp(env, ranks, inp, [("data", data), ("elements", "H O"), ("model", model),
                                       ("device", env.device), ("dump", dump),
                                       ("peratom", peratom)])
        tag = "layers, %d rank(s)" % ranks
        if not f.check(run.rc == 0, "%s: lmp ran: %r" % (tag, run)):
            continue
        f.check("2 interaction layers: ghost atoms out to 6.1 A" in run.out,
                "%s: the ghost cutoff raised to 2 x 3 + 0.1 A: %r" % (tag, run))
        rows = lc.thermo(run)
        if not f.check(len(rows) == 3, "%s: three thermo lines: %r" % (tag, run)):
            continue
        row = rows[0]
        de = abs(row["PotEng"] - e_ref)
        f.check(de <= 1e-8 * abs(e_ref), "%s: pe %.12f vs mlff %.12f (|d| %.2e eV)" % (
            tag, row["PotEng"], e_ref, de))
        f.check(abs(row["c_sums[1]"] - row["PotEng"]) <= 1e-8 * abs(e_ref),
                "%s: eatom sums to %.12f, pe %.12f" % (tag, row["c_sums[1]"], row["PotEng"]))
        p = [row[k] for k in ("Pxx", "Pyy", "Pzz", "Pxy", "Pxz", "Pyz")]
        dp = max(abs(a - b) for a, b in zip(p, p_ref))
        f.check(dp <= PRESSURE_TOL, "%s: pressure %s vs %s (max |d| %.2e bar)" % (tag, p, p_ref, dp))
        # per-atom stress is -(virial) in pressure*volume units
        d_cs = max(abs(-row["c_sums[%d]" % (k + 2)] / row["Volume"] - row["c_pv[%d]" % (k + 1)])
                   for k in range(3))
        f.check(d_cs <= PRESSURE_TOL, "%s: cvatom sums vs virial pressure, |d| %.2e bar" % (
            tag, d_cs))
        atoms = lc.read_dump(env.path(dump))
        df = max(max(abs(a - b) for a, b in zip(atoms[i + 1][2], fr))
                 for i, fr in enumerate(f_ref_lammps))
        f.check(df <= FORCE_TOL, "%s: forces, max |d| %.2e eV/A" % (tag, df))
        # per-atom values and 10 NVE steps (re-neighbouring at skin 0.1) as on the first rank count
        frames = read_peratom_dump(env.path(peratom))
        nve = [(r["PotEng"], r["KinEng"], r["TotEng"]) for r in rows[1:]]
        if first is None:
            first = (frames, nve)
            d_atom = d_nve = 0.0
        else:
            d_atom = max(abs(a - b) / max(1.0, abs(a)) for fa, fb in zip(first[0], frames)
                         for i in fa for a, b in zip(fa[i], fb[i]))
            d_nve = max(abs(a - b) for ra, rb in zip(first[1], nve) for a, b in zip(ra, rb))
            f.check(d_atom <= 1e-9, "%s: per-atom energies and centroid virials as on %d rank(s), "
                    "max relative |d| %.2e" % (tag, env.ranks[0], d_atom))
            f.check(d_nve <= 1e-8 * abs(e_ref), "%s: NVE thermo as on %d rank(s), |d| %.2e eV" % (
                tag, env.ranks[0], d_nve))
        print("%s: E %.10f eV, |dE| %.1e eV, max |dF| %.1e eV/A, max |dP| %.1e bar, cvatom %.1e "
              "bar, per-atom vs %d rank(s) %.1e, NVE %.1e eV, %.1f s" % (
                  tag, e_ref, de, df, dp, d_cs, env.ranks[0], d_atom, d_nve, run.seconds))


def case_threads(env, f):
    """CPU threads per rank: OMP_NUM_THREADS where set, else the cores a rank
    may use divided among the node's ranks that may use them too."""
    xyz, data = structures.make(env, "ethanol")
    cores = len(os.sched_getaffinity(0))
    saved = env.env.pop("OMP_NUM_THREADS", None)
    cases = [(["--bind-to", "none"], 1, {}, cores),
             (["--bind-to", "none"], 2, {}, max(1, cores // 2)),
             (["--bind-to", "none"], 2, {"OMP_NUM_THREADS": "3"}, 3)]
    if cores >= 2:
        cases.append((["--bind-to", "core"], 2, {}, 1))
    for binding, ranks, extra, want in cases:
        env.env.update(extra)
        run = lc.lmp(env, ranks, lc.IN_MLFF, [("data", data), ("elements", "H C O"),
                                              ("boundary", "f f f"), ("device", "cpu")],
                     mpirun_options=binding + ["-x", "OMP_NUM_THREADS"] * bool(extra))
        for k in extra:
            del env.env[k]
        m = re.search(r"on cpu: (\d+) thread", run.out)
        got = int(m.group(1)) if m else None
        tag = "threads: %d rank(s), %s%s" % (ranks, " ".join(binding),
                                             "".join(" %s=%s" % kv for kv in extra.items()))
        f.check(run.rc == 0 and got == want, "%s: %s threads per rank, want %d: %r" % (
            tag, got, want, run))
        print("%s: %s thread(s) per rank (%d cores here)" % (tag, got, cores))
    if saved is not None:
        env.env["OMP_NUM_THREADS"] = saved


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=["reference", "peratom", "nve", "skin", "errors", "real",
                                    "threads", "layers"])
    p.add_argument("structures", nargs="*")
    lc.add_common_args(p)
    args = p.parse_args()
    env = lc.Env(args)
    f = lc.Failures()
    if args.case == "reference":
        for name in args.structures or ["water_box_384", "water_triclinic_8", "water_cluster_100"]:
            case_reference(env, f, name)
    else:
        globals()["case_" + args.case](env, f)
    f.close("test_lammps %s %s" % (args.case, " ".join(args.structures)))


if __name__ == "__main__":
    main()
