"""SchNet (Schuett et al., 2018) in plain PyTorch, in mlff's calling convention

    forward(species, positions, pairs, shifts, system, n_systems) -> energies

(python/mlff/export.py and the README say what each is), so that
mlff.export.export_model() can write it as an mlff model file:

    from schnet import SchNet
    from mlff.export import export_model
    model = SchNet(cutoff=5.0)           # train it first
    export_model(model, "schnet.mlff", cutoff=5.0, elements=["H", "C", "N", "O"])
"""
import math

import torch
from torch import nn
from torch.nn import functional as F


class ShiftedSoftplus(nn.Module):
    def forward(self, x):
        return F.softplus(x) - math.log(2.0)


class Interaction(nn.Module):
    """A continuous-filter convolution and its atom-wise layers."""

    def __init__(self, features, n_rbf):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(n_rbf, features), ShiftedSoftplus(), nn.Linear(features, features))
        self.in2f = nn.Linear(features, features, bias=False)
        self.f2out = nn.Sequential(nn.Linear(features, features), ShiftedSoftplus(), nn.Linear(features, features))

    def forward(self, x, rbf, fcut, i, j):
        w = self.filter(rbf) * fcut[:, None]
        messages = self.in2f(x)[j] * w
        return self.f2out(torch.zeros_like(x).index_add(0, i, messages))


class SchNet(nn.Module):
    def __init__(self, features=64, n_rbf=20, cutoff=5.0, n_interactions=3, max_z=100):
        super().__init__()
        self.cutoff = cutoff
        self.embedding = nn.Embedding(max_z, features)
        self.register_buffer("centers", torch.linspace(0.0, cutoff, n_rbf))
        self.gamma = 0.5 / (cutoff / (n_rbf - 1)) ** 2
        self.interactions = nn.ModuleList(Interaction(features, n_rbf) for _ in range(n_interactions))
        self.readout = nn.Sequential(nn.Linear(features, features // 2), ShiftedSoftplus(),
                                     nn.Linear(features // 2, 1))

    def forward(self, species, positions, pairs, shifts, system, n_systems):
        i, j = pairs[0], pairs[1]
        vec = positions[j] - positions[i] + shifts
        d = torch.linalg.norm(vec, dim=-1)
        rbf = torch.exp(-self.gamma * (d[:, None] - self.centers) ** 2)
        fcut = 0.5 * (torch.cos(d * (math.pi / self.cutoff)) + 1.0) * (d < self.cutoff)
        x = self.embedding(species)
        for interaction in self.interactions:
            x = x + interaction(x, rbf, fcut, i, j)
        atomic = self.readout(x).squeeze(-1)
        return torch.zeros(n_systems, dtype=positions.dtype).index_add(0, system, atomic)
