"""Export a PyTorch potential to an mlff model file (the "graph" family).

    from mlff.export import export_model
    export_model(module, "model.mlff", cutoff=5.0, elements=["H", "C", "N", "O"])

The module's forward must follow this calling convention:

    forward(species, positions, pairs, shifts, system, n_systems) -> energies

- species   [N] int64 atomic numbers
- positions [N, 3] Angstrom
- pairs     [2, P] int64, both (i, j) and (j, i) for every pair within the
            cutoff (i != j; periodic images included)
- shifts    [P, 3] the Cartesian periodic shift of each pair, so that
            r_ij = positions[j] - positions[i] + shifts
- system    [N] int64, the system of each atom (0 .. n_systems - 1)
- n_systems the number of systems (an int)
- energies  [n_systems] in eV

The module is traced with torch.fx (with the idioms plain symbolic_trace
cannot follow: torch.zeros(n_systems, dtype=x.dtype) and friends, in-place
index_add_), and each operation is mapped onto mlff's ops; weights are
copied exactly (float64). Anything else raises ExportError naming the
operation and the source line. mlff computes forces, virials and Hessians
from the exported graph's derivatives; the module's own autograd is not
used.

Tensors are stored as [rows, features]: the first dimension of every
tensor is atoms, pairs or systems; the others are flattened (so reshapes
that keep the first dimension cost nothing).
"""
import hashlib
import math
import operator
import struct
import traceback

import numpy as np

# The file's codes (models/graph_model.h); stable.
INPUT, PARAM, ADD, MUL, SCALE, UNARY, GATHER_COLS, SCATTER_ADD_COLS, AFFINE_COLS, CONCAT_COLS, SLICE_COLS, \
    SUM_COLS, LINEAR, GATHER_ROWS, SCATTER_ADD_ROWS, NORM3, COSINE_CUTOFF, ENERGY, FILL, CELU = range(20)
IN_POSITIONS, IN_SPECIES, IN_PAIR_I, IN_PAIR_J, IN_SHIFTS, IN_SYSTEM = range(6)
# UNARY's functions (core/ops.h, mlff_unary_kind).
U_EXP, U_SIN, U_COS, U_POW, U_SIGMOID = 0, 1, 2, 3, 4
U_SOFTPLUS, U_SSP, U_TANH, U_SILU, U_LOG, U_LESS, U_LESS_EQUAL = 7, 8, 9, 12, 15, 16, 17

ATOMS, PAIRS, SYSTEMS = "atoms", "pairs", "systems"

_SYMBOLS = ("X H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr "
            "Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb "
            "Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf "
            "Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og").split()
ROWS_CODE = {ATOMS: 0, PAIRS: 1, SYSTEMS: 2}


class ExportError(Exception):
    """A module mlff cannot run: the message names the operation and where."""


# ---------------------------------------------------------------- values


class Shaped:
    """What a value and a pending zeros share: rows, then the inner shape."""

    @property
    def cols(self):
        return int(np.prod(self.inner, dtype=np.int64))

    @property
    def shape(self):
        return (Size(self.rows),) + self.inner


class Tensor(Shaped):
    """A value of the exported graph: file row `row`, first dimension `rows`
    (ATOMS, PAIRS, SYSTEMS), the others `inner` (flattened in the file)."""

    def __init__(self, row, rows, inner):
        self.row, self.rows, self.inner = row, rows, tuple(inner)


class Zeros(Shaped):
    """torch.zeros(...) not yet materialised: most are the target of an
    index_add or vector features that start at zero."""

    def __init__(self, rows, inner):
        self.rows, self.inner = rows, tuple(inner)


class Index:
    """Row indices: the species (atomic numbers), a side of the pair list,
    the system index; `inner` where they were unsqueezed or expanded."""

    def __init__(self, role, rows, inner=()):
        self.role, self.rows, self.inner = role, rows, tuple(inner)

    @property
    def shape(self):
        return (Size(self.rows),) + self.inner


class Pairs:
    """The [2, P] pair list."""
    shape = None


class Size:
    """A symbolic first dimension (a tensor's rows, n_systems)."""

    def __init__(self, rows):
        self.rows = rows

    def __eq__(self, other):
        return isinstance(other, Size) and other.rows == self.rows

    def __hash__(self):
        return hash(self.rows)


class Const:
    """A constant tensor (weights, buffers) with no row dimension."""

    def __init__(self, array):
        self.array = np.asarray(array, dtype=np.float64)

    @property
    def shape(self):
        return self.array.shape


class DType:
    """A dtype (of x.dtype, torch.float64, ...): mlff computes in its precision."""


# ---------------------------------------------------------------- the file


class _Graph:
    """The rows of the file's graph. A row that would repeat an earlier one
    (the same code, inputs and attributes; a parameter of the same values
    and use) is that row: every layer's `unit[:, :, None]`, the same map or
    constant made again, are computed once (and kept once for the reverse
    pass). Not the sums by system: the loader makes the energy's in float64,
    which no other operation may read."""
    def __init__(self):
        self.nodes, self.attrs, self.params = [], [], []
        self._rows = {}

    def add(self, code, inputs=(), i=(), f=(), shared=True):
        ins = list(inputs) + [-1] * (3 - len(inputs))
        ii = list(i) + [0] * (3 - len(i))
        ff = [float(x) for x in f] + [0.0] * (2 - len(f))
        key = (code, tuple(ins), tuple(ii), struct.pack("<2d", *ff))  # bytes: -0.0 is not 0.0
        if not shared:
            key = len(self.nodes)
        if key not in self._rows:
            self.nodes.append([code] + ins + ii + [0])
            self.attrs.append(ff)
            self._rows[key] = len(self.nodes) - 1
        return self._rows[key]

    def input(self, role):
        return self.add(INPUT, i=(role,))

    def param(self, array, dtype=np.float64, use="values"):
        """use: "table" for a table gathered by species (the loader reads it so)."""
        array = np.ascontiguousarray(array, dtype=dtype)
        if array.ndim == 1:
            array = array.reshape(-1, 1) if dtype == np.int32 else array.reshape(1, -1)
        key = ("param", use, array.dtype.str, array.shape, array.tobytes())
        if key not in self._rows:
            self.params.append(array)
            self._rows[key] = self.add(PARAM, i=(len(self.params) - 1,))
        return self._rows[key]

    def row_param(self, values):
        """A [1, cols] constant (AFFINE_COLS's s and t)."""
        return self.param(np.asarray(values, dtype=np.float64).reshape(1, -1))

    def map_param(self, values):
        return self.param(np.asarray(values, dtype=np.int32).reshape(-1, 1), np.int32)


def _write_model_file(path, meta, tensors):
    """The mlff model file (models/model_file.h): header, metadata, tensor
    directory, 64-byte aligned data, SHA-256 trailer."""
    def string(s):
        b = s.encode()
        return struct.pack("<I", len(b)) + b
    head = b"MLFFMODL" + struct.pack("<IIQQ", 1, 0, len(meta), len(tensors))
    for key, value in meta:
        head += string(key) + string(value)
    dir_size = sum(32 + len(name.encode()) for name, _ in tensors)
    align = lambda x: (x + 63) // 64 * 64
    offset = align(len(head) + dir_size)
    datas = []
    for name, array in tensors:
        code = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3}[array.dtype]
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
        head += string(name) + struct.pack("<IQQQ", code, array.shape[0], array.shape[1], offset)
        datas.append(data)
        offset += align(len(data))
    body = bytearray(head)
    for data in datas:
        body += b"\0" * (align(len(body)) - len(body))
        body += data
    body += b"\0" * (align(len(body)) - len(body))
    body += hashlib.sha256(bytes(body)).digest()
    with open(path, "wb") as f:
        f.write(bytes(body))


# ---------------------------------------------------------------- tracing


def _trace(module):
    """torch.fx graph of module, with the tensor factories that take a
    traced size (n_systems, x.shape[0]) recorded as calls."""
    import torch
    import torch.fx

    class Tracer(torch.fx.Tracer):
        def __init__(self):
            super().__init__()
            self.record_stack_traces = True


    def proxy_iter(proxy):
        # a, b, c = proxy: torch.fx 1.13 looks up the instruction by f_lasti // 2,
        # which Python 3.11's hidden caches break; look for UNPACK_SEQUENCE
        # at the offset itself.
        import dis
        import inspect
        frame = inspect.currentframe().f_back
        for ins in dis.get_instructions(frame.f_code):
            if ins.offset == frame.f_lasti:
                if ins.opname == "UNPACK_SEQUENCE":
                    return (proxy[k] for k in range(ins.argval))
                break
        return proxy.tracer.iter(proxy)

    tracer = Tracer()
    factories = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange",
                 "tensor", "as_tensor"]
    saved = {name: getattr(torch, name) for name in factories}

    def wrap(name, original):
        def factory(*args, **kwargs):
            proxies = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.fx.Proxy)]
            for a in args:
                if isinstance(a, (tuple, list)):
                    proxies += [b for b in a if isinstance(b, torch.fx.Proxy)]
            if not proxies:
                return original(*args, **kwargs)
            return proxies[0].tracer.create_proxy("call_function", original, args, kwargs)
        factory.__name__ = name
        return factory

    saved_iter = torch.fx.Proxy.__iter__
    try:
        torch.fx.Proxy.__iter__ = proxy_iter
        for name, original in saved.items():
            setattr(torch, name, wrap(name, original))
        try:
            graph = tracer.trace(module)
        except ExportError:
            raise
        except Exception as e:  # a construct torch.fx cannot trace: say where in the module's code
            where = _user_frame(traceback.extract_tb(e.__traceback__))
            raise ExportError("cannot trace the module: %s: %s%s" % (type(e).__name__, e, where)) from e
    finally:
        torch.fx.Proxy.__iter__ = saved_iter
        for name, original in saved.items():
            setattr(torch, name, original)
    return torch.fx.GraphModule(tracer.root, graph), graph


def _user_frame(frames):
    """' at FILE:LINE (code)' of the deepest frame outside torch and this file."""
    for fr in reversed(frames):
        if "/torch/" not in fr.filename and not fr.filename.endswith("/mlff/export.py"):
            return " at %s:%d (%s)" % (fr.filename, fr.lineno, (fr.line or "").strip())
    return ""


def _where(node):
    trace = getattr(node, "stack_trace", None) or ""
    lines = [ln.strip() for ln in trace.strip().splitlines()]
    files = [k for k, ln in enumerate(lines) if ln.startswith("File ")]
    for k in files:  # innermost first
        if "/torch/" in lines[k] or "/mlff/export.py" in lines[k]:
            continue
        code = lines[k + 1] if k + 1 < len(lines) and not lines[k + 1].startswith("File ") else ""
        return " at %s%s" % (lines[k][5:], (" (%s)" % code) if code else "")
    return ""


# ---------------------------------------------------------------- the mapping


def _target_name(node, gm):
    import torch
    if node.op == "call_module":
        return type(gm.get_submodule(node.target)).__name__
    if node.op == "call_method":
        return "Tensor.%s" % node.target
    t = node.target
    for mod, prefix in ((torch, "torch."), (torch.nn.functional, "torch.nn.functional."), (operator, "operator."),
                        (math, "math.")):
        for name in dir(mod):
            if getattr(mod, name, None) is t:
                return prefix + name
    return getattr(t, "__name__", str(t))


class _Exporter:
    def __init__(self, gm, graph, cutoff, numbers):
        self.gm, self.fx, self.cutoff, self.numbers = gm, graph, cutoff, numbers
        self.g = _Graph()
        self.env = {}
        self.node = None

    def fail(self, what):
        raise ExportError("%s%s" % (what, _where(self.node) if self.node is not None else ""))

    def unsupported(self):
        self.fail("unsupported operation %s" % _target_name(self.node, self.gm))

    # ---- materialising values

    def real(self, v):
        """v as a Tensor (zeros made a FILL)."""
        if isinstance(v, Tensor):
            return v
        if isinstance(v, Zeros):
            return Tensor(self.g.add(FILL, i=(ROWS_CODE[v.rows], v.cols), f=(0.0,)), v.rows, v.inner)
        self.fail("a tensor of atoms, pairs or systems was expected, not %s" % type(v).__name__)

    def expand(self, t, inner):
        """t broadcast to inner dims `inner` (numpy's rules)."""
        if t.inner == tuple(inner):
            return t
        src = np.arange(t.cols).reshape(t.inner) if t.inner else np.arange(1).reshape(())
        try:
            m = np.broadcast_to(src, inner).ravel()
        except ValueError:
            self.fail("shapes %s and %s do not broadcast" % (t.inner, tuple(inner)))
        return Tensor(self.g.add(GATHER_COLS, (t.row, self.g.map_param(m))), t.rows, inner)

    def cols_map(self, t, m, inner):
        m = np.asarray(m).ravel()
        if len(m) == t.cols and np.array_equal(m, np.arange(t.cols)):
            return Tensor(t.row, t.rows, inner)
        if len(m) and np.array_equal(m, np.arange(m[0], m[0] + len(m))):
            return Tensor(self.g.add(SLICE_COLS, (t.row,), i=(int(m[0]), len(m))), t.rows, inner)
        return Tensor(self.g.add(GATHER_COLS, (t.row, self.g.map_param(m))), t.rows, inner)

    def affine(self, t, s, b):
        """t * s + b with s, b constants broadcast over t's columns (None: 1, 0)."""
        inner = t.inner
        cols = t.cols

        def row(c, default):
            a = np.broadcast_to(np.asarray(c if c is not None else default, dtype=np.float64), inner)
            return a.ravel() if cols else a.reshape(-1)
        if s is not None and np.ndim(s) == 0 and b is None:
            return Tensor(self.g.add(SCALE, (t.row,), f=(float(s),)), t.rows, inner)
        ins = [t.row, self.g.row_param(row(s, 1.0))]
        if b is not None:
            ins.append(self.g.row_param(row(b, 0.0)))
        return Tensor(self.g.add(AFFINE_COLS, ins), t.rows, inner)

    def unary(self, v, kind, factor=1.0, p=0.0):
        t = self.real(v)
        return Tensor(self.g.add(UNARY, (t.row,), i=(kind,), f=(factor, p)), t.rows, t.inner)

    @staticmethod
    def inner_of(a, b):
        try:
            return np.broadcast_shapes(a, b)
        except ValueError:
            return None

    # ---- arithmetic

    def const_of(self, v):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return np.float64(v)
        if isinstance(v, Const):
            return v.array
        return None

    def binary(self, op, a, b):
        ca, cb = self.const_of(a), self.const_of(b)
        if ca is not None and cb is not None:
            return Const({"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op](ca, cb))
        if cb is not None or ca is not None:
            if ca is not None and op in ("add", "mul"):
                a, b, ca, cb = b, a, cb, ca
            x, c = (a, cb) if cb is not None else (b, ca)
            if isinstance(x, Zeros) and (op == "mul" or (op == "div" and cb is not None)):
                return Zeros(x.rows, self.bshape(x.inner, np.shape(c)))
            x = self.real(x)
            c = np.asarray(c, dtype=np.float64)
            if c.ndim > len(x.inner):
                self.fail("a constant of more dimensions than the tensor's features")
            inner = self.bshape(x.inner, c.shape)
            x = self.expand(x, inner)
            if cb is not None:  # x op c
                if op == "add":
                    return self.affine(x, None, c)
                if op == "sub":
                    return self.affine(x, None, -c)
                if op == "mul":
                    return self.affine(x, c, None)
                return self.affine(x, 1.0 / c, None)
            if op == "sub":  # c - x
                return self.affine(x, np.full(inner, -1.0) if inner else -1.0, c)
            # c / x
            r = self.unary(x, U_POW, 1.0, -1.0)
            return self.affine(r, c, None) if c.ndim else self.unary(x, U_POW, float(c), -1.0)
        if isinstance(a, Index) or isinstance(b, Index):
            self.fail("arithmetic on indices (species, pairs, system)")
        if a.rows != b.rows:
            self.fail("operands of different first dimensions (%s and %s)" % (a.rows, b.rows))
        inner = self.bshape(a.inner, b.inner)
        za, zb = isinstance(a, Zeros), isinstance(b, Zeros)
        if op == "mul" and (za or zb) or (op == "div" and za):
            return Zeros(a.rows, inner)
        if op in ("add", "sub") and zb:
            return self.expand(self.real(a), inner) if not za else Zeros(a.rows, inner)
        if op == "add" and za:
            return self.expand(self.real(b), inner)
        ta, tb = self.real(a), self.real(b)
        # A factor that broadcasts by repeating its columns (a column, or
        # x[:, None, :] against [n, 3, k]) goes to MUL as it is: MUL applies
        # it to each block, and nothing of the other's size is made for it.
        # The other factor is expanded, preferably one of the full shape.
        orders = ((ta, tb), (tb, ta)) if op == "mul" else ((ta, tb),) if op == "div" else ()
        for x, y in sorted(orders, key=lambda xy: xy[0].inner != inner):
            if self.tiles(y, inner):
                if op == "div":
                    y = self.unary(y, U_POW, 1.0, -1.0)
                return Tensor(self.g.add(MUL, (self.expand(x, inner).row, y.row)), a.rows, inner)
        ta, tb = self.expand(ta, inner), self.expand(tb, inner)
        if op == "sub":
            tb = Tensor(self.g.add(SCALE, (tb.row,), f=(-1.0,)), tb.rows, inner)
        if op == "div":
            tb = self.unary(tb, U_POW, 1.0, -1.0)
        code = ADD if op in ("add", "sub") else MUL
        return Tensor(self.g.add(code, (ta.row, tb.row)), a.rows, inner)

    @staticmethod
    def tiles(t, inner):
        """Whether t broadcast to `inner` is its columns repeated as they are:
        t's dimensions, leading ones aside, are inner's last."""
        dims = tuple(t.inner)
        while dims and dims[0] == 1:
            dims = dims[1:]
        return tuple(inner[len(inner) - len(dims):]) == dims if len(dims) <= len(inner) else False

    def bshape(self, a, b):
        s = self.inner_of(tuple(a), tuple(b))
        if s is None:
            self.fail("shapes %s and %s do not broadcast" % (tuple(a), tuple(b)))
        return tuple(int(x) for x in s)

    def power(self, x, p):
        p = self.const_of(p)
        if p is None or np.ndim(p) != 0:
            self.fail("a power by something other than a constant number")
        if isinstance(x, Zeros) and p > 0:
            return x
        return self.unary(x, U_POW, 1.0, float(p))

    # ---- reductions and shapes

    def axis(self, t, dim):
        nd = 1 + len(t.inner)
        d = dim + nd if dim < 0 else dim
        if not 0 <= d < nd:
            self.fail("dimension %d out of range" % dim)
        if d == 0:
            self.fail("a reduction or concatenation over the first dimension (atoms, pairs, systems): use index_add "
                      "by system")
        return d - 1

    def reduce_sum(self, v, dims, keepdim=False):
        if isinstance(dims, int):
            dims = (dims,)
        axes = sorted({self.axis(v, d) for d in dims})
        inner = list(v.inner)
        out_inner = [1 if k in axes else n for k, n in enumerate(inner)] if keepdim else \
            [n for k, n in enumerate(inner) if k not in axes]
        if isinstance(v, Zeros):
            return Zeros(v.rows, out_inner)
        t = self.real(v)
        idx = np.arange(t.cols).reshape(inner) if inner else np.zeros(())
        grid = np.indices(inner).reshape(len(inner), -1)
        kept = [k for k in range(len(inner)) if k not in axes]
        kept_shape = [inner[k] for k in kept]
        target = np.ravel_multi_index(tuple(grid[k] for k in kept), kept_shape) if kept else np.zeros(t.cols, int)
        del idx
        n_out = int(np.prod(kept_shape, dtype=np.int64)) if kept else 1
        if n_out == 1 and not kept:
            return Tensor(self.g.add(SUM_COLS, (t.row,), f=(1.0,)), t.rows, out_inner)
        return Tensor(self.g.add(SCATTER_ADD_COLS, (t.row, self.g.map_param(target)), i=(n_out,)), t.rows,
                      out_inner)

    def getitem(self, v, index):
        if isinstance(v, Pairs):
            if index in (0, 1):
                return Index(IN_PAIR_I if index == 0 else IN_PAIR_J, PAIRS)
            self.fail("pairs indexed other than pairs[0], pairs[1]")
        if isinstance(v, tuple):
            return v[index]
        if isinstance(index, (Index, Tensor)):
            return self.gather_rows(v, index)
        if not isinstance(index, tuple):
            index = (index,)
        if not index or not (index[0] == slice(None) or index[0] is Ellipsis):
            self.fail("indexing of the first dimension (atoms, pairs, systems) other than by an index tensor")
        rest = index[1:] if index[0] == slice(None) else (Ellipsis,) + index[1:]
        if isinstance(v, Index):
            if all(r is None for r in rest):
                return Index(v.role, v.rows, v.inner + (1,) * len(rest))
            self.fail("indexing of an index other than unsqueezing it")
        inner = v.inner
        grid = np.arange(int(np.prod(inner, dtype=np.int64))).reshape(inner)
        try:
            picked = grid[rest]
        except (IndexError, TypeError) as e:
            self.fail("indexing of features (%s)" % e)
        if isinstance(v, Zeros):
            return Zeros(v.rows, picked.shape)
        return self.cols_map(self.real(v), picked, picked.shape)

    def reshape(self, v, shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not shape or not (isinstance(shape[0], Size) or shape[0] == -1):
            self.fail("a reshape that does not keep the first dimension (atoms, pairs, systems)")
        inner = [int(s) for s in shape[1:]]
        cols = int(np.prod(v.inner, dtype=np.int64))
        if -1 in inner:
            known = int(np.prod([s for s in inner if s != -1], dtype=np.int64))
            inner[inner.index(-1)] = cols // known
        if int(np.prod(inner, dtype=np.int64)) != cols:
            self.fail("a reshape that mixes the first dimension with the others")
        if isinstance(v, Index):
            return Index(v.role, v.rows, inner)
        if isinstance(v, Zeros):
            return Zeros(v.rows, inner)
        return Tensor(v.row, v.rows, inner)

    def unsqueeze(self, v, dim):
        nd = 2 + len(v.inner)
        d = dim + nd if dim < 0 else dim
        if d == 0:
            self.fail("unsqueeze before the first dimension (atoms, pairs, systems)")
        inner = list(v.inner)
        inner.insert(d - 1, 1)
        return self.reshape(v, (Size(v.rows),) + tuple(inner))

    def squeeze(self, v, dim=None):
        inner = list(v.inner)
        if dim is None:
            inner = [n for n in inner if n != 1]
        else:
            k = self.axis(v, dim)
            if inner[k] == 1:
                del inner[k]
        return self.reshape(v, (Size(v.rows),) + tuple(inner))

    def expand_to(self, v, sizes):
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        inner = tuple(int(s) if s != -1 else v.inner[k - (len(sizes) - 1 - len(v.inner)) - 1]
                      for k, s in enumerate(sizes) if k > 0)
        if isinstance(v, Index):
            return Index(v.role, v.rows, inner)
        if isinstance(v, Zeros):
            return Zeros(v.rows, inner)
        return self.expand(self.real(v), inner)

    def cat(self, values, dim):
        values = list(values)
        vs = [self.real(v) for v in values]
        rows = {v.rows for v in vs}
        if len(rows) != 1:
            self.fail("a concatenation of tensors of different first dimensions")
        ax = self.axis(vs[0], dim)
        t = vs[0]
        grids, offset = [], 0
        for v in vs:
            grids.append(np.arange(v.cols).reshape(v.inner) + offset)
            offset += v.cols
        for v in vs[1:]:
            t = Tensor(self.g.add(CONCAT_COLS, (t.row, v.row)), t.rows, (t.cols + v.cols,))
        grid = np.concatenate(grids, axis=ax)
        return self.cols_map(t, grid, grid.shape)

    def split(self, v, size, dim):
        t = self.real(v)
        ax = self.axis(t, dim)
        n = t.inner[ax]
        sizes = [size] * (n // size) + ([n % size] if n % size else []) if isinstance(size, int) else list(size)
        grid = np.arange(t.cols).reshape(t.inner)
        out, start = [], 0
        for s in sizes:
            piece = np.take(grid, range(start, start + s), axis=ax)
            out.append(self.cols_map(t, piece, piece.shape))
            start += s
        return tuple(out)

    def gather_rows(self, v, index):
        if not isinstance(index, Index) or index.inner:
            self.fail("rows gathered by something other than species, pairs[0], pairs[1] or system")
        if index.role == IN_SPECIES:
            if not isinstance(v, Const) or v.array.ndim < 1:
                self.fail("gathering by species from something other than a table (an embedding's weights)")
            if v.array.shape[0] <= max(self.numbers):
                self.fail("a table of %d rows gathered by atomic numbers up to %d" % (v.array.shape[0],
                                                                                   max(self.numbers)))
            table = v.array[self.numbers]
            p = self.g.param(table.reshape(len(self.numbers), -1), use="table")
            t = Tensor(self.g.add(GATHER_ROWS, (p, self.g.input(IN_SPECIES))), ATOMS, table.shape[1:])
            return t
        want = SYSTEMS if index.role == IN_SYSTEM else ATOMS
        if isinstance(v, Zeros):
            if v.rows != want:
                self.fail("rows gathered by an index of other rows")
            return Zeros(index.rows, v.inner)
        t = self.real(v)
        if t.rows != want:
            self.fail("rows of %s gathered by an index of %s" % (t.rows, want))
        return Tensor(self.g.add(GATHER_ROWS, (t.row, self.g.input(index.role))), index.rows, t.inner)

    def index_add(self, target, dim, index, source, alpha=1):
        if dim != 0:
            self.fail("index_add over a dimension other than the first")
        if not isinstance(index, Index) or index.role == IN_SPECIES:
            self.fail("index_add by something other than pairs[0], pairs[1] or system")
        want = SYSTEMS if index.role == IN_SYSTEM else ATOMS
        if target.rows != want:
            self.fail("index_add into %s by an index of %s" % (target.rows, want))
        if alpha != 1:
            source = self.binary("mul", source, alpha)
        if isinstance(source, Zeros):
            return target
        s = self.real(source)
        if s.rows != index.rows:
            self.fail("index_add of rows of %s by an index of %s" % (s.rows, index.rows))
        inner = self.bshape(target.inner, s.inner)
        s = self.expand(s, inner)
        summed = Tensor(self.g.add(SCATTER_ADD_ROWS, (s.row, self.g.input(index.role)), shared=index.role != IN_SYSTEM),
                        want, inner)
        if isinstance(target, Zeros):
            return summed
        return self.binary("add", target, summed)

    # ---- the nodes

    def run(self):
        placeholders = [n for n in self.fx.nodes if n.op == "placeholder"]
        if len(placeholders) != 6:
            raise ExportError("forward must take (species, positions, pairs, shifts, system, n_systems), not %d "
                              "arguments" % len(placeholders))
        species, positions, pairs, shifts, system, n_systems = placeholders
        g = self.g
        self.env[species] = Index(IN_SPECIES, ATOMS)
        self.env[positions] = Tensor(g.input(IN_POSITIONS), ATOMS, (3,))
        self.env[pairs] = Pairs()
        self.env[shifts] = Tensor(g.input(IN_SHIFTS), PAIRS, (3,))
        self.env[system] = Index(IN_SYSTEM, ATOMS)
        self.env[n_systems] = Size(SYSTEMS)
        result = None
        for node in self.fx.nodes:
            self.node = node
            if node.op == "placeholder":
                continue
            if node.op == "output":
                result = self.load(node.args[0])
                break
            self.env[node] = self.visit(node)
        return self.finish(result)

    def finish(self, result):
        if isinstance(result, (tuple, list)) and len(result) == 1:
            result = result[0]
        if not isinstance(result, Tensor) or result.rows != SYSTEMS or result.cols != 1:
            self.fail("forward must return the energies [n_systems]")
        producer = self.g.nodes[result.row]
        if producer[0] != SCATTER_ADD_ROWS:
            self.fail("the energies must be a sum over each system's atoms (index_add by system) as their last step")
        self.g.add(ENERGY, (result.row,))

    def load(self, a):
        import torch.fx
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (tuple, list)):
            return type(a)(self.load(x) for x in a)
        if isinstance(a, dict):
            return {k: self.load(x) for k, x in a.items()}
        if isinstance(a, slice):
            return slice(self.load(a.start), self.load(a.stop), self.load(a.step))
        return a

    def visit(self, node):
        import torch
        import torch.fx
        args, kwargs = self.load(node.args), self.load(node.kwargs)
        if node.op == "get_attr":
            value = self.gm
            for part in node.target.split("."):
                value = getattr(value, part)
            if isinstance(value, torch.Tensor):
                return Const(value.detach().cpu().double().numpy())
            return value
        if node.op == "call_module":
            return self.module(self.gm.get_submodule(node.target), args, kwargs)
        if node.op == "call_method":
            result = self.method(node.target, args, kwargs)
            # In place (energy.index_add_(0, system, e)): later readers of the target see the result.
            if node.target.endswith("_") and isinstance(node.args[0], torch.fx.Node):
                self.env[node.args[0]] = result
            return result
        if node.op == "call_function":
            return self.function(node.target, args, kwargs)
        self.unsupported()

    def module(self, m, args, kwargs):
        import torch.nn as nn
        x = args[0] if args else None
        if isinstance(m, nn.Linear):
            return self.linear(x, m.weight, m.bias)
        if isinstance(m, nn.Embedding):
            if m.padding_idx is not None or m.max_norm is not None:
                self.fail("nn.Embedding with padding_idx or max_norm")
            return self.gather_rows(Const(m.weight.detach().cpu().double().numpy()), x)
        if isinstance(m, nn.Identity) or isinstance(m, nn.Dropout):
            return x
        if isinstance(m, nn.Softplus):
            if m.beta != 1:
                self.fail("nn.Softplus with beta != 1")
            return self.unary(x, U_SOFTPLUS)
        if isinstance(m, nn.CELU):
            return self.celu(x, m.alpha)
        kinds = {nn.SiLU: U_SILU, nn.Tanh: U_TANH, nn.Sigmoid: U_SIGMOID}
        for cls, kind in kinds.items():
            if isinstance(m, cls):
                return self.unary(x, kind)
        if isinstance(m, nn.Sequential):
            for sub in m:
                x = self.module(sub, (x,), {})
            return x
        self.unsupported()

    def celu(self, x, alpha):
        t = self.real(x)
        if not alpha > 0:
            self.fail("CELU with alpha <= 0")
        return Tensor(self.g.add(CELU, (t.row,), f=(float(alpha),)), t.rows, t.inner)

    def linear(self, x, weight, bias):
        import torch
        w = weight.detach().cpu().double().numpy() if isinstance(weight, torch.Tensor) else weight.array
        b = None if bias is None else (bias.detach().cpu().double().numpy() if isinstance(bias, torch.Tensor)
                                       else bias.array)
        if not isinstance(x, (Tensor, Zeros)) or not x.inner or x.inner[-1] != w.shape[1]:
            self.fail("a linear layer of %d inputs on features %s" % (w.shape[1], getattr(x, "inner", None)))
        groups = int(np.prod(x.inner[:-1], dtype=np.int64))
        inner = x.inner[:-1] + (w.shape[0],)
        if isinstance(x, Zeros) and b is None:
            return Zeros(x.rows, inner)
        t = self.real(x)
        bias_rows = np.tile(b if b is not None else np.zeros(w.shape[0]), groups).reshape(-1, 1)
        wp = self.g.param(np.tile(w, (groups, 1)))
        bp = self.g.param(bias_rows)
        return Tensor(self.g.add(LINEAR, (t.row, wp, bp), i=(groups,)), t.rows, inner)

    def activation(self, name, x, kwargs):
        kinds = {"silu": U_SILU, "tanh": U_TANH, "sigmoid": U_SIGMOID, "exp": U_EXP, "sin": U_SIN, "cos": U_COS,
                 "log": U_LOG}
        if name in kinds:
            return self.unary(x, kinds[name])
        if name == "softplus":
            if kwargs.get("beta", 1) != 1:
                self.fail("softplus with beta != 1")
            return self.unary(x, U_SOFTPLUS)
        if name == "sqrt":
            return self.unary(x, U_POW, 1.0, 0.5)
        if name == "rsqrt":
            return self.unary(x, U_POW, 1.0, -0.5)
        if name == "reciprocal":
            return self.unary(x, U_POW, 1.0, -1.0)
        if name == "square":
            return self.unary(x, U_POW, 1.0, 2.0)
        if name == "neg":
            return self.binary("mul", x, -1.0)
        return None

    def norm(self, x, p=2, dim=None, keepdim=False):
        if p not in (2, "fro", None) or dim is None:
            self.fail("a norm other than the 2-norm over given dimensions")
        t = self.real(x)
        if isinstance(dim, (tuple, list)) and len(dim) == 1:
            dim = dim[0]
        if isinstance(dim, int) and t.inner == (3,) and self.axis(t, dim) == 0:
            r = Tensor(self.g.add(NORM3, (t.row,)), t.rows, (1,))
            return r if keepdim else self.reshape(r, (Size(t.rows),))
        return self.power(self.reduce_sum(self.power(t, 2), dim, keepdim), 0.5)

    def compare(self, op, a, b):
        c = self.const_of(b)
        if c is None or np.ndim(c) != 0 or not isinstance(a, Tensor):
            self.fail("a comparison other than of a tensor with a number (cutoff masks)")
        c = float(c)
        if op == "lt":
            return self.unary(a, U_LESS, 1.0, c)
        if op == "le":
            return self.unary(a, U_LESS_EQUAL, 1.0, c)
        if op == "gt":
            return self.affine(self.unary(a, U_LESS_EQUAL, 1.0, c), -1.0, 1.0)
        return self.affine(self.unary(a, U_LESS, 1.0, c), -1.0, 1.0)

    def where(self, mask, a, b):
        # mask * a + (1 - mask) * b, masks being 0 or 1 (comparisons above)
        if not isinstance(mask, Tensor):
            self.fail("where on something other than a comparison of a tensor with a number")
        x = self.binary("mul", mask, a) if self.const_of(a) is None or self.const_of(a) != 0 else None
        inv = self.affine(mask, -1.0, 1.0)
        y = self.binary("mul", inv, b) if self.const_of(b) is None or self.const_of(b) != 0 else None
        if x is None and y is None:
            return Zeros(mask.rows, mask.inner)
        if x is None or y is None:
            return x if y is None else y
        return self.binary("add", x, y)

    def zeros(self, size, like=None):
        if len(size) == 1 and isinstance(size[0], (tuple, list)):
            size = tuple(size[0])
        if like is not None:
            return Zeros(like.rows, like.inner)
        if not size or not isinstance(size[0], Size):
            self.fail("zeros not sized by n_systems or a tensor's first dimension")
        return Zeros(size[0].rows, tuple(int(s) for s in size[1:]))

    def common(self, name, args, kwargs):
        """Operations that are both functions (torch.x) and methods (t.x)."""
        x = args[0] if args else None
        act = self.activation(name, x, kwargs) if name in ("silu", "tanh", "sigmoid", "exp", "sin", "cos", "log",
                                                          "softplus", "sqrt", "rsqrt", "reciprocal", "square",
                                                          "neg") else None
        if act is not None:
            return act
        dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
        if name in ("add", "sub", "mul", "div", "true_divide", "multiply", "subtract", "divide"):
            op = {"true_divide": "div", "multiply": "mul", "subtract": "sub", "divide": "div"}.get(name, name)
            b = args[1] if len(args) > 1 else kwargs.get("other")
            if "alpha" in kwargs and op in ("add", "sub"):
                b = self.binary("mul", b, kwargs["alpha"])
            return self.binary(op, x, b)
        if name == "pow":
            return self.power(x, args[1] if len(args) > 1 else kwargs["exponent"])
        if name == "mean":
            if dim is None:
                self.fail("a mean over every dimension")
            total = self.reduce_sum(x, dim, kwargs.get("keepdim", args[2] if len(args) > 2 else False))
            dims = (dim,) if isinstance(dim, int) else tuple(dim)
            count = int(np.prod([x.inner[self.axis(x, d)] for d in dims]))
            return self.binary("mul", total, 1.0 / count)
        if name == "celu":
            return self.celu(x, kwargs.get("alpha", args[1] if len(args) > 1 else 1.0))
        if name == "sum":
            if dim is None:
                self.fail("a sum over every dimension: sum per system with index_add by system")
            return self.reduce_sum(x, dim, kwargs.get("keepdim", args[2] if len(args) > 2 else False))
        if name == "norm":
            p = kwargs.get("p", args[1] if len(args) > 1 else 2)
            dim = kwargs.get("dim", args[2] if len(args) > 2 else None)
            return self.norm(x, p, dim, kwargs.get("keepdim", False))
        if name in ("unsqueeze",):
            return self.unsqueeze(x, dim)
        if name == "squeeze":
            return self.squeeze(x, dim)
        if name in ("reshape", "view"):
            return self.reshape(x, tuple(args[1:]) or tuple(kwargs.get("shape", ())))
        if name == "index_select":
            if args[1] != 0:
                self.fail("index_select over a dimension other than the first")
            return self.gather_rows(x, args[2] if len(args) > 2 else kwargs["index"])
        if name in ("index_add", "index_add_"):
            index = args[2] if len(args) > 2 else kwargs["index"]
            source = args[3] if len(args) > 3 else kwargs["source"]
            return self.index_add(x, args[1], index, source, kwargs.get("alpha", 1))
        if name in ("scatter_add", "scatter_add_"):
            index = args[2] if len(args) > 2 else kwargs["index"]
            source = args[3] if len(args) > 3 else kwargs["src"]
            return self.index_add(x, args[1] if len(args) > 1 else kwargs["dim"], Index(index.role, index.rows),
                                  source)
        if name in ("cat", "concat", "concatenate"):
            return self.cat(x, kwargs.get("dim", args[1] if len(args) > 1 else 0))
        if name == "split":
            return self.split(x, args[1] if len(args) > 1 else kwargs["split_size_or_sections"],
                              kwargs.get("dim", args[2] if len(args) > 2 else 0))
        if name == "chunk":
            chunks = args[1]
            d = kwargs.get("dim", args[2] if len(args) > 2 else 0)
            n = self.real(x).inner[self.axis(x, d)]
            return self.split(x, -(-n // chunks), d)
        if name == "where":
            return self.where(x, args[1], args[2])
        if name in ("zeros_like", "new_zeros"):
            return self.zeros(args[1:], like=x) if name == "zeros_like" else self.zeros(tuple(args[1:]) or
                                                                                        kwargs.get("size"))
        if name in ("expand", "expand_as"):
            return self.expand_to(x, tuple(args[1:]) if name == "expand" else args[1].shape)
        if name in ("to", "float", "double", "type_as", "contiguous", "clone", "detach_never"):
            if name == "to" and any(isinstance(a, str) and a != "cpu" for a in args[1:]):
                pass
            return x
        return None

    def method(self, name, args, kwargs):
        x = args[0]
        if name == "size":
            shape = x.shape
            return shape if len(args) < 2 else shape[args[1]]
        if name == "dim":
            return len(x.shape)
        r = self.common(name, args, kwargs)
        if r is None:
            self.unsupported()
        return r

    def function(self, f, args, kwargs):
        import torch
        import torch.nn.functional as F
        if f is getattr:
            x, attr = args
            if attr == "shape":
                return x.shape
            if attr == "dtype":
                return DType()
            if attr == "device":
                return "cpu"
            self.unsupported()
        if f is operator.getitem:
            return self.getitem(args[0], args[1])
        ops = {operator.add: "add", operator.iadd: "add", operator.sub: "sub", operator.isub: "sub",
               operator.mul: "mul", operator.imul: "mul", operator.truediv: "div", operator.itruediv: "div"}
        if f in ops:
            return self.binary(ops[f], args[0], args[1])
        if f is operator.neg:
            return self.binary("mul", args[0], -1.0)
        if f is operator.pow:
            return self.power(args[0], args[1])
        cmp = {operator.lt: "lt", operator.le: "le", operator.gt: "gt", operator.ge: "ge", torch.lt: "lt",
               torch.le: "le", torch.gt: "gt", torch.ge: "ge"}
        if f in cmp:
            return self.compare(cmp[f], args[0], args[1])
        if f is torch.zeros:
            return self.zeros(args)
        if f is F.linear:
            w, b = args[1], args[2] if len(args) > 2 else kwargs.get("bias")
            return self.linear(args[0], w, b)
        if f is F.embedding:
            return self.gather_rows(args[1], args[0])
        if f is torch.linalg.norm or f is torch.linalg.vector_norm:
            return self.norm(args[0], kwargs.get("ord", 2), kwargs.get("dim", args[2] if len(args) > 2 else None),
                             kwargs.get("keepdim", False))
        for mod in (torch, F):
            for name in ("silu", "tanh", "sigmoid", "exp", "sin", "cos", "log", "softplus", "sqrt", "rsqrt",
                         "reciprocal", "square", "neg", "add", "sub", "mul", "div", "true_divide", "pow", "sum",
                         "norm", "mean", "celu", "unsqueeze", "squeeze", "reshape", "index_select", "index_add",
                         "scatter_add",
                         "cat", "concat", "split", "chunk", "where", "zeros_like"):
                if getattr(mod, name, None) is f:
                    r = self.common(name, args, kwargs)
                    if r is not None:
                        return r
        if f in (math.sqrt, math.exp, math.log, math.cos, math.sin) and all(self.const_of(a) is not None for a in args):
            return f(*args)
        self.unsupported()


def export_model(module, path, cutoff, elements):
    """Trace `module` (forward(species, positions, pairs, shifts, system,
    n_systems) -> energies) and write it to `path` as an mlff model file for
    these elements (symbols) and pair cutoff (Angstrom). Raises ExportError
    on anything mlff cannot run."""
    cutoff = float(cutoff)
    if not 0 < cutoff <= 30:
        raise ExportError("cutoff must be in (0, 30] Angstrom, not %g" % cutoff)
    unknown = [e for e in elements if e not in _SYMBOLS]
    if unknown:
        raise ExportError("unknown element symbols %s" % unknown)
    numbers = [_SYMBOLS.index(e) for e in elements]
    if not numbers or len(set(numbers)) != len(numbers):
        raise ExportError("elements must be distinct element symbols")
    module = module.eval()
    gm, graph = _trace(module)
    ex = _Exporter(gm, graph, cutoff, numbers)
    ex.run()
    g = ex.g
    layers = _interaction_layers(g)
    meta = [("family", "graph"), ("name", type(module).__name__), ("elements", " ".join(elements)),
            ("cutoff", repr(cutoff)), ("energy_unit", "eV"), ("length_unit", "Angstrom"),
            ("interaction_layers", str(layers))]
    tensors = [("graph.nodes", np.asarray(g.nodes, dtype=np.int32)),
               ("graph.attrs", np.asarray(g.attrs, dtype=np.float64).reshape(-1, 2))]
    tensors += [("param.%d" % k, p) for k, p in enumerate(g.params)]
    _write_model_file(path, meta, tensors)
    return layers


def _interaction_layers(g):
    """How many gathers along the pair list an energy passes through at most:
    an atom's energy depends on atoms that many cutoffs away."""
    depth = []
    for code, a, b, c, *_ in g.nodes:
        d = max([depth[k] for k in (a, b, c) if k >= 0] + [0])
        if code == GATHER_ROWS and g.nodes[b][0] == INPUT and g.nodes[b][4] == IN_PAIR_J:
            d += 1
        depth.append(d)
    return max(depth) if depth else 0
