#!/usr/bin/python3
"""What a call through the Python binding costs on top of the C library.

    PYTHONPATH=python MLFF_LIBRARY=build/api/libmlff.so /usr/bin/python3 bench/bench_python.py \
        [--device cpu|opencl|vulkan] [--model PATH] [--sizes 1,64,1024,8192,65536] [--no-compute]

For batches of n small molecules (the reference set's molecules of up to 12
atoms, in turn; about 7 atoms each):

  overhead   Model.evaluate_packed with the library's mlff_compute replaced
             by a Python function that returns at once: everything the call
             does besides computing (checks, conversions, output arrays, the
             lock), the best of many repeats, in CPU time (a busy machine's
             other processes do not count). The goal: 30 us + 0.5 us a system.
  batch      the same for Model.evaluate_batch (lists of per-system arrays:
             their concatenation is part of it).
  ctypes     the bare crossing into C: mlff_compute(NULL, ...) through ctypes,
             which returns at once (part of any Python call, not counted above).
  C call / packed
             with the real library: the raw ctypes call on prepared structures
             against evaluate_packed, interleaved, medians (skipped with
             --no-compute). Their difference is the overhead again, but
             within the device's run-to-run noise.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time
import timeit

import numpy as np

import mlff
from mlff import _lib

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "tests", "data", "reference")


def molecules():
    with open(os.path.join(REFERENCE, "index.json")) as f:
        index = json.load(f)
    out = []
    for s in index["structures"]:
        if s["periodic"]:
            continue
        with open(os.path.join(REFERENCE, s["name"] + ".json")) as f:
            d = json.load(f)
        if len(d["species"]) <= 12:
            out.append((np.array(d["species"], np.int32), np.array(d["coordinates"], float)))
    return out


def packed(pool, n):
    systems = [pool[i % len(pool)] for i in range(n)]
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum([len(z) for z, _ in systems], out=offsets[1:])
    numbers = np.concatenate([z for z, _ in systems])
    positions = np.ascontiguousarray(np.concatenate([r for _, r in systems]))
    return offsets, numbers, positions, systems


class NoCompute:
    """The library, but mlff_compute returns at once."""

    def __init__(self, real):
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    @staticmethod
    def mlff_compute(model, batch, results):
        return 0


def best(fn, seconds=0.3, repeats=7):
    """The fastest of repeats, each as many calls as fit in seconds / repeats,
    in this process's CPU time: work done without a device, which the other
    processes of a busy machine would otherwise inflate by preempting it."""
    fn()
    t = time.process_time()
    fn()
    once = max(time.process_time() - t, 1e-6)
    number = max(1, int(seconds / repeats / once))
    return min(timeit.repeat(fn, number=number, repeat=repeats, timer=time.process_time)) / number


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default=None)
    parser.add_argument("--sizes", default="1,64,1024,8192,65536")
    parser.add_argument("--no-compute", action="store_true")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    model = mlff.Model(args.model, device=args.device)
    real = model._lib
    pool = molecules()
    print("device: %s; model: %s; numpy %s; Python %s" % (model.device, model.name, np.__version__,
                                                         sys.version.split()[0]))

    batch, results = _lib.Batch(), _lib.Results()
    crossing = best(lambda: real.mlff_compute(None, ctypes.byref(batch), ctypes.byref(results)))
    print("ctypes crossing (mlff_compute returning at once): %.2f us" % (crossing * 1e6))
    print()
    print("| systems | atoms | overhead us | goal us | batch() us | C call ms | packed ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        offsets, numbers, positions, systems = packed(pool, n)
        zs = [z for z, _ in systems]
        rs = [r for _, r in systems]
        model._lib = NoCompute(real)
        try:
            overhead = best(lambda: model.evaluate_packed(offsets, numbers, positions))
            as_lists = best(lambda: model.evaluate_batch(zs, rs), seconds=0.5, repeats=5)
        finally:
            model._lib = real
        c_ms = packed_ms = float("nan")
        if not args.no_compute:
            b = _lib.Batch()
            b.n_systems = n
            b.system_offsets, b.atomic_numbers, b.positions = offsets.ctypes.data, numbers.ctypes.data, positions.ctypes.data
            energies, forces = np.empty(n), np.empty((len(numbers), 3))
            r = _lib.Results()
            r.energies, r.forces = energies.ctypes.data, forces.ctypes.data
            raw, full = [], []
            model.evaluate_packed(offsets, numbers, positions)  # warm
            end = time.perf_counter() + 3.0
            while len(raw) < 5 or (time.perf_counter() < end and len(raw) < 200):
                t = time.perf_counter()
                status = real.mlff_compute(model._model, ctypes.byref(b), ctypes.byref(r))
                raw.append(time.perf_counter() - t)
                assert status == 0, real.mlff_last_error(model._ctx)
                t = time.perf_counter()
                model.evaluate_packed(offsets, numbers, positions)
                full.append(time.perf_counter() - t)
            c_ms, packed_ms = statistics.median(raw) * 1e3, statistics.median(full) * 1e3
        print("| %d | %d | %.1f | %.1f | %.1f | %.3f | %.3f |" % (
            n, len(numbers), overhead * 1e6, 30 + 0.5 * n, as_lists * 1e6, c_ms, packed_ms))


if __name__ == "__main__":
    main()
