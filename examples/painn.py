"""PaiNN (Schuett et al., 2021) in plain PyTorch, in mlff's calling convention

    forward(species, positions, pairs, shifts, system, n_systems) -> energies

(python/mlff/export.py and the README say what each is). Vector features
are [atoms, 3, F]; mlff stores them as [atoms, 3F].

    from painn import PaiNN
    from mlff.export import export_model
    model = PaiNN(cutoff=5.0)            # train it first
    export_model(model, "painn.mlff", cutoff=5.0, elements=["H", "C", "N", "O"])
"""
import math

import torch
from torch import nn


class Message(nn.Module):
    def __init__(self, features, n_rbf):
        super().__init__()
        self.features = features
        self.phi = nn.Sequential(nn.Linear(features, features), nn.SiLU(), nn.Linear(features, 3 * features))
        self.w = nn.Linear(n_rbf, 3 * features)

    def forward(self, s, v, rbf, fcut, unit, i, j):
        x = self.phi(s)[j] * (self.w(rbf) * fcut[:, None])
        xs, xvv, xvs = torch.split(x, self.features, dim=-1)
        dv = v[j] * xvv[:, None, :] + xvs[:, None, :] * unit[:, :, None]
        s = s + torch.zeros_like(s).index_add(0, i, xs)
        v = v + torch.zeros_like(v).index_add(0, i, dv)
        return s, v


class Update(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features
        self.u = nn.Linear(features, features, bias=False)
        self.v = nn.Linear(features, features, bias=False)
        self.a = nn.Sequential(nn.Linear(2 * features, features), nn.SiLU(), nn.Linear(features, 3 * features))

    def forward(self, s, v):
        uv, vv = self.u(v), self.v(v)
        norm = torch.sqrt(torch.sum(vv ** 2, dim=1) + 1e-8)
        a = self.a(torch.cat([s, norm], dim=-1))
        avv, asv, ass = torch.split(a, self.features, dim=-1)
        v = v + avv[:, None, :] * uv
        s = s + torch.sum(uv * vv, dim=1) * asv + ass
        return s, v


class PaiNN(nn.Module):
    def __init__(self, features=32, n_rbf=16, cutoff=5.0, n_interactions=3, max_z=100):
        super().__init__()
        self.features, self.cutoff = features, cutoff
        self.embedding = nn.Embedding(max_z, features)
        self.register_buffer("frequencies", torch.arange(1, n_rbf + 1, dtype=torch.float32) * math.pi / cutoff)
        self.messages = nn.ModuleList(Message(features, n_rbf) for _ in range(n_interactions))
        self.updates = nn.ModuleList(Update(features) for _ in range(n_interactions))
        self.readout = nn.Sequential(nn.Linear(features, features), nn.SiLU(), nn.Linear(features, 1))

    def forward(self, species, positions, pairs, shifts, system, n_systems):
        i, j = pairs[0], pairs[1]
        vec = positions[j] - positions[i] + shifts
        d = torch.linalg.norm(vec, dim=-1)
        unit = vec / d[:, None]
        rbf = torch.sin(self.frequencies * d[:, None]) / d[:, None]  # Bessel (sinc) basis
        fcut = torch.where(d < self.cutoff, 0.5 * (torch.cos(d * (math.pi / self.cutoff)) + 1.0),
                           torch.zeros_like(d))
        s = self.embedding(species)
        v = torch.zeros(s.shape[0], 3, self.features, dtype=positions.dtype, device=positions.device)
        for message, update in zip(self.messages, self.updates):
            s, v = message(s, v, rbf, fcut, unit, i, j)
            s, v = update(s, v)
        energies = torch.zeros(n_systems, dtype=positions.dtype, device=positions.device)
        energies.index_add_(0, system, self.readout(s).squeeze(-1))
        return energies
