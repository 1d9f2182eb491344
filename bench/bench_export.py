#!/usr/bin/env python3
"""Issue 58's speed comparison: an exported PaiNN on mlff against the same
module in PyTorch (eager and torch.compile), energy + forces, float32.

    PYTHONPATH=python MLFF_LIBRARY=BUILD/api/libmlff.so python3 bench/bench_export.py \
        [--model painn128.mlff] [--save-model painn128.mlff] [--devices cpu,opencl,vulkan] \
        [--torch-device cuda] [--no-compile] [--repeats 20] [--box-copies 4,2] [--quick]

The model: examples/painn.py with 128 features, 20 radial functions, 3
interactions, cutoff 5 A. Its weights come from a seeded numpy RNG (not
torch's), so every torch version and this machine build the same model.
The file mlff runs is exported with the local torch unless --model names
one exported elsewhere (--save-model FILE writes it and exits). mlff.export
is tested with Debian's torch 1.13 only; for a torch 2.x machine, export
with 1.13 and carry the file (6 MB; the export is deterministic). Either way both sides' energies are
printed and compared (relative difference < 1e-5 is required; the run
fails otherwise), so a file from elsewhere is proved to be the same model.

The systems:
  cluster   tests/data/reference/water_cluster_100 (300 atoms)
  batch     64 small molecules in one batch (the reference set's g2_*
            molecules in turn), one call
  boxN      water_box_64 replicated N^3 times (--box-copies, default 4,2:
            box4 12288 atoms, 49.7 A cubic, periodic; box2 1536 atoms).
            A box too large for one pass on the device runs in atom
            chunks, their ghosts 3 cutoffs deep (the model's layers).

PyTorch gets its pair lists (i, j, shift) built once on its device before
timing (they are not part of its time); mlff builds its own neighbour lists
inside every call (they are part of its time: the whole Model.evaluate
call from Python, numpy in, numpy out). Each measured call computes
energies and forces (autograd of the energy for torch, the graph's reverse
pass for mlff). Warm-up calls first, torch.cuda.synchronize() around every
torch call, then the median of --repeats calls (fewer when one call is slow:
at most about 20 s a measurement).

Start-up: mlff's time to the first result, in a fresh Python process (warm
caches: median of 3, after one run that warms them), from before the model
opens (the device's context, the model file, the kernels from the cache)
to the cluster's first energies and forces, as torch's is counted: the
first call in its process, tracing and compiling forward and backward for
torch.compile, eager's first call for comparison (torch's import and CUDA's
context before it are not counted). The child's whole life, from the
parent's clock before the spawn (Python, numpy and mlff's imports
included), is printed on a line of its own.

Output: one table (milliseconds; speedups are the best mlff GPU backend
against eager and against compiled).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
REFERENCE = os.path.join(ROOT, "tests", "data", "reference")
ELEMENTS = ["H", "C", "N", "O", "F", "S", "Cl"]
CUTOFF = 5.0
FEATURES, N_RBF, INTERACTIONS = 128, 20, 3
SEED = 58


def load(name):
    with open(os.path.join(REFERENCE, name + ".json")) as f:
        d = json.load(f)
    cell = np.array(d["cell"], float) if d.get("cell") else None
    return np.array(d["species"], np.int64), np.array(d["coordinates"], float), cell


def systems(box_copies, n_molecules):
    """[(name, [(numbers, positions, cell or None), ...])]"""
    cluster = load("water_cluster_100")
    with open(os.path.join(REFERENCE, "index.json")) as f:
        names = [s["name"] for s in json.load(f)["structures"] if s["name"].startswith("g2_")]
    pool = [load(n) for n in names]
    batch = [pool[k % len(pool)] for k in range(n_molecules)]
    z, r, cell = load("water_box_64")
    if not np.allclose(cell, np.diag(np.diag(cell))):
        raise SystemExit("water_box_64 is expected to be orthorhombic")
    out = [("cluster", [cluster]), ("batch", batch)]
    for n in box_copies:
        shifts = np.array([[a, b, c] for a in range(n) for b in range(n) for c in range(n)], float) @ cell
        box = (np.tile(z, len(shifts)), (r[None, :, :] + shifts[:, None, :]).reshape(-1, 3), cell * n)
        out.append(("box%d" % n, [box]))
    return out


# ---------------------------------------------------------------- the model


def make_module(torch):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from painn import PaiNN
    module = PaiNN(features=FEATURES, n_rbf=N_RBF, cutoff=CUTOFF, n_interactions=INTERACTIONS)
    rng = np.random.default_rng(SEED)
    with torch.no_grad():
        for name, p in sorted(module.named_parameters()):
            if name == "embedding.weight":
                value = rng.normal(0.0, 1.0, p.shape)
            else:
                bound = 1.0 / np.sqrt(p.shape[-1] if p.dim() == 2 else FEATURES)
                value = rng.uniform(-bound, bound, p.shape)
            p.copy_(torch.from_numpy(value))
    return module.eval()


# ---------------------------------------------------------------- torch


def torch_pairs(torch, pos, box, cutoff, chunk=512):
    """Pairs within cutoff on pos's device, both directions, minimum image
    in an orthorhombic box (box lengths or None)."""
    n = pos.shape[0]
    rows, cols, shifts = [], [], []
    for start in range(0, n, chunk):
        d = pos[None, :, :] - pos[start:start + chunk, None, :]
        shift = -box * torch.round(d / box) if box is not None else torch.zeros_like(d)
        r2 = ((d + shift) ** 2).sum(-1)
        k = torch.arange(start, min(start + chunk, n), device=pos.device)
        mask = (r2 <= cutoff * cutoff)
        mask[k - start, k] = False
        idx = mask.nonzero()
        rows.append(idx[:, 0] + start)
        cols.append(idx[:, 1])
        shifts.append(shift[idx[:, 0], idx[:, 1]])
    return torch.stack([torch.cat(rows), torch.cat(cols)]), torch.cat(shifts)


def torch_inputs(torch, mols, device):
    species, positions, pairs, shifts, system = [], [], [], [], []
    offset = 0
    for s, (z, r, cell) in enumerate(mols):
        pos = torch.tensor(r, dtype=torch.float32, device=device)
        box = None if cell is None else torch.tensor(np.diag(cell), dtype=torch.float32, device=device)
        p, sh = torch_pairs(torch, pos, box, CUTOFF)
        species.append(torch.tensor(z, device=device))
        positions.append(pos)
        pairs.append(p + offset)
        shifts.append(sh)
        system.append(torch.full((len(z),), s, dtype=torch.int64, device=device))
        offset += len(z)
    return (torch.cat(species), torch.cat(positions), torch.cat(pairs, dim=1), torch.cat(shifts),
            torch.cat(system), len(mols))


def torch_step(torch, fn, inputs):
    species, positions, pairs, shifts, system, n = inputs
    pos = positions.detach().requires_grad_(True)
    energies = fn(species, pos, pairs, shifts, system, n)
    grad, = torch.autograd.grad(energies.sum(), pos)
    return energies.detach(), -grad


def timed(sync, call, repeats, budget=20.0):
    """Median seconds of call() (after 3 warm-up calls), the first result."""
    first = call()
    t_warm = time.perf_counter()
    for _ in range(2):
        call()
    sync()
    once = (time.perf_counter() - t_warm) / 2
    n = max(3, min(repeats, int(budget / max(once, 1e-6))))
    times = []
    for _ in range(n):
        sync()
        t = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times), first


# ---------------------------------------------------------------- mlff


def mlff_call(model, mols):
    if len(mols) == 1:
        z, r, cell = mols[0]
        e, f = model.evaluate(z.astype(np.int32), r, cell=cell, pbc=None if cell is None else [True] * 3)
        return np.atleast_1d(e), np.asarray(f)
    offsets = np.zeros(len(mols) + 1, np.int64)
    np.cumsum([len(z) for z, _, _ in mols], out=offsets[1:])
    numbers = np.concatenate([z for z, _, _ in mols]).astype(np.int32)
    positions = np.ascontiguousarray(np.concatenate([r for _, r, _ in mols]))
    e, f = model.evaluate_packed(offsets, numbers, positions)
    return np.asarray(e), np.asarray(f.array if hasattr(f, "array") else f)


def startup_child(args):
    import mlff
    z, r, _ = load("water_cluster_100")
    opened = time.time()
    with mlff.Model(args.model, device=args.startup_child, precision="float32") as model:
        model.evaluate(z.astype(np.int32), r)
        done = time.time()
        print(done - opened, done - args.t0)


def mlff_startup(model_path, device):
    """(in the process, from the spawn): medians in seconds, or None."""
    times = []
    for k in range(4):
        t0 = time.time()
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--model", model_path, "--startup-child",
                              device, "--t0", repr(t0)], capture_output=True, text=True)
        if out.returncode != 0:
            return None
        if k:
            times.append([float(x) for x in out.stdout.split()[-2:]])
    return tuple(statistics.median(t[j] for t in times) for j in range(2))


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="an exported file of this script's model (default: export here)")
    ap.add_argument("--save-model", help="export the model to this file and exit")
    ap.add_argument("--devices", default="cpu,opencl,vulkan")
    ap.add_argument("--torch-device", default=None, help="default: cuda when available, else cpu")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--compile-mode", default=None, help="torch.compile's mode (default: its default)")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--box-copies", default="4,2", help="boxes of water_box_64 replicated n^3 times (n,n,...)")
    ap.add_argument("--molecules", type=int, default=64)
    ap.add_argument("--quick", action="store_true", help="a small box (2^3 copies) and 8 molecules, to try it")
    ap.add_argument("--no-startup", action="store_true", help="skip mlff's start-up measurement")
    ap.add_argument("--startup-child", help=argparse.SUPPRESS)
    ap.add_argument("--t0", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.startup_child:
        return startup_child(args)
    if args.quick:
        args.box_copies, args.molecules = "2", 8

    import torch
    module = make_module(torch)
    tmp = tempfile.TemporaryDirectory()
    if args.save_model or not args.model:
        from mlff.export import export_model
        path = args.save_model or os.path.join(tmp.name, "painn128.mlff")
        export_model(module, path, cutoff=CUTOFF, elements=ELEMENTS)
        if args.save_model:
            print("wrote", path)
            return 0
        args.model = path
    import mlff

    tdev = args.torch_device or ("cuda" if torch.cuda.is_available() else "cpu")
    sync = torch.cuda.synchronize if tdev.startswith("cuda") else (lambda: None)
    module = module.float().to(tdev)
    compiled = None
    if not args.no_compile and hasattr(torch, "compile"):
        kw = {"dynamic": False}
        if args.compile_mode:
            kw["mode"] = args.compile_mode
        compiled = torch.compile(module, **kw)
    cases = systems([int(n) for n in args.box_copies.split(",") if n], args.molecules)
    devices = [d for d in args.devices.split(",") if d]
    models = []
    for d in devices:
        try:
            mlff.Model(args.model, device=d, precision="float32").close()
            models.append(d)
        except Exception as e:  # a backend this machine lacks: its column says n/a
            print("mlff on %s: not available (%s)" % (d, e), file=sys.stderr)

    print("torch %s on %s (%s); mlff model %s; python %s" % (
        torch.__version__, tdev, torch.cuda.get_device_name() if tdev.startswith("cuda") else "cpu",
        os.path.basename(args.model), sys.version.split()[0]))
    rows, failed = [], False
    startup = {}
    for name, mols in cases:
        inputs = torch_inputs(torch, mols, tdev)
        sync()
        row = {"name": name, "atoms": int(inputs[0].shape[0]), "pairs": int(inputs[2].shape[1])}
        t = time.perf_counter()
        ref = torch_step(torch, module, inputs)
        sync()
        if name == "cluster":
            startup["eager"] = time.perf_counter() - t
        row["eager"], ref = timed(sync, lambda: torch_step(torch, module, inputs), args.repeats)
        e_ref = ref[0].double().cpu().numpy()
        f_ref = ref[1].double().cpu().numpy()
        if compiled is not None:
            t = time.perf_counter()
            torch_step(torch, compiled, inputs)
            sync()
            if name == "cluster":
                startup["compile"] = time.perf_counter() - t
            row["compile"], _ = timed(sync, lambda: torch_step(torch, compiled, inputs), args.repeats)
        inputs = ref = None  # free the device memory before mlff runs
        if tdev.startswith("cuda"):
            torch.cuda.empty_cache()
        for d in models:
            # One backend's model at a time: each takes up to half of the
            # GPU's memory, and OpenCL's allocations are not in what
            # Vulkan's driver says this process could still hold.
            try:
                with mlff.Model(args.model, device=d, precision="float32") as model:
                    row[d], (e, f) = timed(lambda: None, lambda: mlff_call(model, mols), args.repeats)
            except mlff.MLFFError as ex:  # e.g. a box too large for the device
                print("%-8s %-7s failed: %s" % (name, d, ex))
                row[d] = None
                failed = True
                continue
            de = np.max(np.abs(e - e_ref)) / max(np.max(np.abs(e_ref)), 1e-30)
            df = np.max(np.abs(f - f_ref)) / max(np.max(np.abs(f_ref)), 1e-30)
            print("%-8s %-7s energies mlff %s torch %s: rel. diff %.2e; forces max rel. diff %.2e%s" % (
                name, d, np.array2string(e[:3], precision=6), np.array2string(e_ref[:3], precision=6), de, df,
                "" if de < 1e-5 else "  MISMATCH"))
            failed |= not de < 1e-5
        rows.append(row)
    for d in models:
        startup[d] = None if args.no_startup else mlff_startup(args.model, d)

    cols = ["eager"] + (["compile"] if compiled is not None else []) + list(models)
    gpu = [d for d in models if d != "cpu"]
    print()
    print("%-8s %7s %9s" % ("system", "atoms", "pairs") + "".join("%11s" % c for c in cols) +
          ("%10s%10s" % ("x eager", "x compile") if gpu else ""))
    for row in rows:
        line = "%-8s %7d %9d" % (row["name"], row["atoms"], row["pairs"])
        line += "".join("%11.3f" % (1e3 * row[c]) if row.get(c) is not None else "%11s" % "failed" for c in cols)
        done = [row[d] for d in gpu if row.get(d) is not None]
        if done:
            line += "%10.1f" % (row["eager"] / min(done))
            line += "%10.1f" % (row["compile"] / min(done)) if "compile" in row else "%10s" % "-"
        print(line)
    def startup_line(label, pick):
        values = [pick(startup.get(c)) for c in cols]
        print("%-8s %17s" % ("start-up", label) + "".join("%11s" % ("n/a" if v is None else "%.3f" % v) for v in values))
    startup_line("first result, s", lambda v: v[0] if isinstance(v, tuple) else v)
    startup_line("from spawn, s", lambda v: v[1] if isinstance(v, tuple) else None)
    print("(ms per energy+forces call, medians; torch's pair lists prebuilt on %s, mlff's built in every call;"
          " start-up: the first call in its process, warm caches for mlff; from spawn: mlff's whole process,"
          " Python's and numpy's start included)" % tdev)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
