"""Finding and loading libmlff, and the ctypes mirror of api/mlff.h.

The binding has no compiled part of its own (ctypes, ABI level), so it works
with whatever libmlff it is pointed at; the price is that the structures
below must match the header byte for byte. They mirror mlff.h of version
0.4 (mlff_compute, virials, the Verlet skin, atom chunks); the loader refuses a library
of another major version, an older minor one, or one without mlff_compute.

The loaded library is cached: it is the only module-level mutable state of
the package, and a library cannot be unloaded meaningfully anyway.
"""
import ctypes
import ctypes.util
import os
import threading

from .errors import LibraryNotFoundError

# The C API version these declarations were written against.
API_MAJOR = 0
API_MINOR = 4  # 0.4: settings.max_chunk_atoms (0.3: mlff_stats.kernel_*; 0.2: settings.skin,
               # neighbor_builds, mlff_compute)

# mlff_status
OK = 0
ERROR_INVALID_ARGUMENT = -1
ERROR_OUT_OF_MEMORY = -2
ERROR_IO = -3
ERROR_MODEL_FORMAT = -4
ERROR_BAD_INPUT = -5
ERROR_UNSUPPORTED = -6
ERROR_DEVICE = -7
ERROR_INTERNAL = -8

# mlff_device_kind, mlff_precision, mlff_neighbors (C enums are int here).
DEVICES = {"auto": 0, "cpu": 1, "opencl": 2, "vulkan": 3}
PRECISIONS = {"float32": 0, "float64": 1}
NEIGHBORS = {"auto": 0, "dense": 1, "sparse": 2}


class Settings(ctypes.Structure):
    """mlff_settings."""
    _fields_ = [
        ("device", ctypes.c_int),
        ("device_index", ctypes.c_int),
        ("precision", ctypes.c_int),
        ("n_threads", ctypes.c_int),
        ("neighbors", ctypes.c_int),
        ("skin", ctypes.c_double),
        ("max_chunk_atoms", ctypes.c_int64),
        ("reserved", ctypes.c_uint8 * 48),
    ]


class ModelInfo(ctypes.Structure):
    """mlff_model_info."""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("n_elements", ctypes.c_int),
        ("atomic_numbers", ctypes.POINTER(ctypes.c_int)),
        ("cutoff", ctypes.c_double),
        ("path", ctypes.c_char_p),
    ]


# The pointers of the two structures below are plain addresses (c_void_p),
# same layout as the header's typed pointers: numpy's data addresses go in
# as ints, without the ctypes pointer objects that cost microseconds each.


class Batch(ctypes.Structure):
    """mlff_batch (int64 *system_offsets, int32 *atomic_numbers, double
    *positions, double *cells, uint8 *pbc)."""
    _fields_ = [
        ("n_systems", ctypes.c_int64),
        ("system_offsets", ctypes.c_void_p),
        ("atomic_numbers", ctypes.c_void_p),
        ("positions", ctypes.c_void_p),
        ("cells", ctypes.c_void_p),
        ("pbc", ctypes.c_void_p),
    ]


class Results(ctypes.Structure):
    """mlff_results (double *energies, *forces, *virials)."""
    _fields_ = [
        ("energies", ctypes.c_void_p),
        ("forces", ctypes.c_void_p),
        ("virials", ctypes.c_void_p),
        ("reserved", ctypes.c_void_p * 8),
    ]


class HessianResults(ctypes.Structure):
    """mlff_hessian_results (double *energies, *forces, *hessians), since 0.6."""
    _fields_ = [
        ("energies", ctypes.c_void_p),
        ("forces", ctypes.c_void_p),
        ("hessians", ctypes.c_void_p),
        ("reserved", ctypes.c_void_p * 4),
    ]


class Stats(ctypes.Structure):
    """mlff_stats."""
    _fields_ = [
        ("evaluations", ctypes.c_uint64),
        ("plan_executions", ctypes.c_uint64),
        ("plan_builds", ctypes.c_uint64),
        ("neighbor_builds", ctypes.c_uint64),
        ("kernel_builds", ctypes.c_uint64),
        ("kernel_cache_hits", ctypes.c_uint64),
        ("kernel_cache_rejects", ctypes.c_uint64),
        ("device_pair_lists", ctypes.c_uint64),
        ("element_plans", ctypes.c_uint64),
        ("nodes_reused", ctypes.c_uint64),
        ("tuning_record", ctypes.c_uint64),
    ]


# Opaque handles: plain void pointers, so that a NULL handle reads as None.
context_p = ctypes.c_void_p
model_p = ctypes.c_void_p

_PROTOTYPES = {
    "mlff_version": (ctypes.c_uint, []),
    "mlff_version_string": (ctypes.c_char_p, []),
    "mlff_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "mlff_default_settings": (None, [ctypes.POINTER(Settings)]),
    "mlff_context_create": (ctypes.c_int, [ctypes.POINTER(Settings), ctypes.POINTER(context_p)]),
    "mlff_context_destroy": (None, [context_p]),
    "mlff_last_error": (ctypes.c_char_p, [context_p]),
    "mlff_last_error_location": (ctypes.c_int, [context_p, ctypes.POINTER(ctypes.c_int64),
                                                ctypes.POINTER(ctypes.c_int64)]),
    "mlff_device_description": (ctypes.c_char_p, [context_p]),
    "mlff_model_load": (ctypes.c_int, [context_p, ctypes.c_char_p, ctypes.POINTER(model_p)]),
    "mlff_open": (ctypes.c_int, [ctypes.POINTER(Settings), ctypes.c_char_p, ctypes.POINTER(context_p),
                                 ctypes.POINTER(model_p)]),
    "mlff_model_free": (None, [model_p]),
    "mlff_model_get_info": (ctypes.c_int, [model_p, ctypes.POINTER(ModelInfo)]),
    "mlff_model_get_interaction_layers": (ctypes.c_int, [model_p, ctypes.POINTER(ctypes.c_int)]),
    "mlff_compute": (ctypes.c_int, [model_p, ctypes.POINTER(Batch), ctypes.POINTER(Results)]),
    "mlff_element_symbol": (ctypes.c_char_p, [ctypes.c_int]),
    "mlff_element_number": (ctypes.c_int, [ctypes.c_char_p]),
    "mlff_get_stats": (ctypes.c_int, [context_p, ctypes.POINTER(Stats)]),
    "mlff_list_devices": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t,
                                         ctypes.POINTER(ctypes.c_size_t)]),
}

# Functions of later versions than API_MINOR: declared where the library has
# them; the methods that need them raise UnsupportedError where it does not.
_OPTIONAL_PROTOTYPES = {
    "mlff_compute_hessians": (ctypes.c_int, [model_p, ctypes.POINTER(Batch), ctypes.POINTER(HessianResults)]),
}

_lock = threading.Lock()
_library = None  # (CDLL, path it was loaded from)


def _candidates():
    """Where to look, in order, as (description, path or soname) pairs.

    MLFF_LIBRARY wins and is never second-guessed; then a copy shipped next
    to the package; then the build tree when the package is used in place
    (python/mlff inside the repository, library in build/); then the
    dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache).
    """
    env = os.environ.get("MLFF_LIBRARY")
    if env:
        return [("MLFF_LIBRARY", env)]
    here = os.path.dirname(os.path.abspath(__file__))
    found = [("next to the package", os.path.join(here, "libmlff.so"))]
    # Used in place from a source checkout: <repo>/python/mlff.
    repo = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(repo, "meson.build")) and os.path.exists(
            os.path.join(repo, "api", "mlff.h")):
        found.append(("build tree", os.path.join(repo, "build", "libmlff.so")))
    found += [
        ("system library path", "libmlff.so.%d" % API_MAJOR),
        ("system library path", "libmlff.so"),
    ]
    name = ctypes.util.find_library("mlff")
    if name:
        found.append(("system library path", name))
    return found


def _declare(lib):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    for name, (restype, argtypes) in _OPTIONAL_PROTOTYPES.items():
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = argtypes


def has(name):
    """Whether the loaded library has the function (an optional one)."""
    return hasattr(load(), name)


def _check_version(lib, path):
    lib.mlff_version.restype = ctypes.c_uint
    lib.mlff_version.argtypes = []
    version = lib.mlff_version()
    major, minor = version >> 16, (version >> 8) & 0xFF
    if major != API_MAJOR or minor < API_MINOR:
        raise LibraryNotFoundError(
            "%s is libmlff %d.%d; this binding needs %d.x with x >= %d"
            % (path, major, minor, API_MAJOR, API_MINOR))


def load():
    """The loaded libmlff (ctypes.CDLL), loading it on first use."""
    global _library
    with _lock:
        if _library is None:
            _library = _load()
        return _library[0]


def library_path():
    """Where the loaded library came from (loads it if needed)."""
    load()
    return _library[1]


def _load():
    tried = []
    for where, path in _candidates():
        is_file = os.sep in path
        if is_file and where != "MLFF_LIBRARY" and not os.path.exists(path):
            tried.append("%s: %s (absent)" % (where, path))
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            if where == "MLFF_LIBRARY":
                raise LibraryNotFoundError(
                    "MLFF_LIBRARY=%s cannot be loaded: %s" % (path, e)) from None
            tried.append("%s: %s (%s)" % (where, path, e))
            continue
        if not hasattr(lib, "mlff_version"):
            raise LibraryNotFoundError("%s is not libmlff (no mlff_version)" % path)
        _check_version(lib, path)
        try:
            _declare(lib)
        except AttributeError as e:
            raise LibraryNotFoundError(
                "%s is a libmlff older than this binding (%s)" % (path, e)) from None
        return lib, getattr(lib, "_name", path)
    raise LibraryNotFoundError(
        "libmlff not found; set MLFF_LIBRARY to the path of libmlff.so. Tried:\n  "
        + "\n  ".join(tried))
