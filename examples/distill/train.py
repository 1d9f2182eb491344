"""Distil ANI-2x into a small PaiNN, trained in PyTorch on the CPU in minutes.

    PYTHONPATH=python MLFF_LIBRARY=build/api/libmlff.so python3 examples/distill/make_data.py 1200 data.npz
    PYTHONPATH=python python3 examples/distill/train.py data.npz student.mlff [MINUTES]

The student: examples/painn.py's layers (16 features, 12 radial functions,
2 interactions, cutoff 4 A) plus a fixed energy per element, fitted to the
training energies by least squares, so the network learns only what is left.
Loss: energy per atom and forces (autograd of the energy, so the training
differentiates twice). The last 10 % of the structures are held out; the
script prints the student's error on them (through mlff, as deployed) and
exports student.mlff with mlff.export.
"""
import math
import os
import sys
import time

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from painn import Message, Update  # noqa: E402

import data  # noqa: E402

CUTOFF = 4.0
MAX_Z = 18


class Student(nn.Module):
    def __init__(self, features=16, n_rbf=12, cutoff=CUTOFF, n_interactions=2):
        super().__init__()
        self.features, self.cutoff = features, cutoff
        self.embedding = nn.Embedding(MAX_Z, features)
        self.atom_energy = nn.Embedding(MAX_Z, 1)
        self.atom_energy.weight.requires_grad_(False)
        self.register_buffer("frequencies", torch.arange(1, n_rbf + 1, dtype=torch.float64) * math.pi / cutoff)
        self.messages = nn.ModuleList(Message(features, n_rbf) for _ in range(n_interactions))
        self.updates = nn.ModuleList(Update(features) for _ in range(n_interactions))
        self.readout = nn.Sequential(nn.Linear(features, features), nn.SiLU(), nn.Linear(features, 1))

    def forward(self, species, positions, pairs, shifts, system, n_systems):
        i, j = pairs[0], pairs[1]
        vec = positions[j] - positions[i] + shifts
        d = torch.linalg.norm(vec, dim=-1)
        unit = vec / d[:, None]
        rbf = torch.sin(self.frequencies * d[:, None]) / d[:, None]
        fcut = torch.where(d < self.cutoff, 0.5 * (torch.cos(d * (math.pi / self.cutoff)) + 1.0),
                           torch.zeros_like(d))
        s = self.embedding(species)
        v = torch.zeros(s.shape[0], 3, self.features, dtype=positions.dtype, device=positions.device)
        for message, update in zip(self.messages, self.updates):
            s, v = message(s, v, rbf, fcut, unit, i, j)
            s, v = update(s, v)
        atomic = self.readout(s).squeeze(-1) + self.atom_energy(species).squeeze(-1)
        energies = torch.zeros(n_systems, dtype=positions.dtype, device=positions.device)
        energies.index_add_(0, system, atomic)
        return energies


def batch(d, idx):
    """Torch inputs of structures idx (molecules: every pair within the cutoff)."""
    species, positions, pairs, system, forces, counts = [], [], [], [], [], []
    offset = 0
    for s, k in enumerate(idx):
        a, b = d["starts"][k], d["starts"][k + 1]
        r = d["positions"][a:b]
        dist = np.linalg.norm(r[None] - r[:, None], axis=-1)
        ii, jj = np.nonzero((dist <= CUTOFF) & ~np.eye(b - a, dtype=bool))
        pairs.append(np.stack([ii, jj]) + offset)
        species.append(d["numbers"][a:b])
        positions.append(r)
        system.append(np.full(b - a, s))
        forces.append(d["forces"][a:b])
        counts.append(b - a)
        offset += b - a
    t = lambda x, dt=torch.float64: torch.tensor(np.concatenate(x), dtype=dt)
    p = torch.tensor(np.concatenate(pairs, axis=1), dtype=torch.int64)
    return (t(species, torch.int64), t(positions), p, torch.zeros(p.shape[1], 3, dtype=torch.float64),
            t(system, torch.int64), len(idx)), torch.tensor(d["energies"][idx]), t(forces), \
        torch.tensor(counts, dtype=torch.float64)


def main():
    src, out = sys.argv[1], sys.argv[2]
    minutes = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
    raw = np.load(src)
    d = {k: raw[k] for k in raw.files}
    d["starts"] = np.concatenate([[0], np.cumsum(d["counts"])])
    n = len(d["counts"])
    n_train = int(0.9 * n)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Student().double()
    # The energy per element: least squares on the training compositions.
    comp = np.zeros((n_train, MAX_Z))
    for k in range(n_train):
        np.add.at(comp[k], d["numbers"][d["starts"][k]:d["starts"][k + 1]], 1)
    present = comp.sum(0) > 0
    e0 = np.zeros(MAX_Z)
    e0[present] = np.linalg.lstsq(comp[:, present], d["energies"][:n_train], rcond=None)[0]
    with torch.no_grad():
        model.atom_energy.weight.copy_(torch.tensor(e0)[:, None])
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    t0, epoch = time.time(), 0
    while time.time() - t0 < 60 * minutes:
        order = rng.permutation(n_train)
        for k in range(0, n_train, 32):
            inputs, e_ref, f_ref, counts = batch(d, order[k:k + 32])
            pos = inputs[1].requires_grad_(True)
            e = model(inputs[0], pos, *inputs[2:])
            f = -torch.autograd.grad(e.sum(), pos, create_graph=True)[0]
            loss = (((e - e_ref) / counts) ** 2).mean() + 0.1 * ((f - f_ref) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        epoch += 1
        for g in opt.param_groups:  # from 3e-3 down to 3e-5 over the time given
            g["lr"] = 3e-3 * 0.01 ** min(1.0, (time.time() - t0) / (60 * minutes))
        print("epoch %d  %.0f s  loss %.4g" % (epoch, time.time() - t0, loss.item()), flush=True)
    from mlff.export import export_model
    export_model(model, out, cutoff=CUTOFF, elements=data.ELEMENTS)
    import mlff
    held = [(d["numbers"][d["starts"][k]:d["starts"][k + 1]], d["positions"][d["starts"][k]:d["starts"][k + 1]])
            for k in range(n_train, n)]
    with mlff.Model(out, device="cpu", precision="float64") as student:
        e, f = data.label(student, held)
    counts = np.array([len(z) for z, _ in held])
    de = np.abs(e - d["energies"][n_train:]) / counts
    df = np.abs(np.concatenate(f) - d["forces"][d["starts"][n_train]:])
    print("held out (%d structures): energy MAE %.4f eV/atom, forces MAE %.4f eV/A" % (len(held), de.mean(),
                                                                                      df.mean()))


if __name__ == "__main__":
    main()
