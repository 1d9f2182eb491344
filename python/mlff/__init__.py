"""mlff: machine-learned force fields (ANI-2x) from Python.

A thin ctypes binding over the libmlff C API: no compiled part of its own.
The library is found through MLFF_LIBRARY (path to libmlff.so), then next to
this package, then in the build tree of a source checkout, then on the
system's library path.

    import mlff
    with mlff.Model(precision="float64") as model:
        energy, forces = model.evaluate([8, 1, 1], positions)   # eV, eV/Angstrom

For ASE, use mlff.ase.MLFFCalculator.
"""
from . import _lib
from .errors import (BadInputError, DeviceError, FileError, InternalError,
                     InvalidArgumentError, LibraryNotFoundError, MLFFError,
                     ModelFormatError, OutOfMemoryError, UnsupportedError)
from .model import Model, SystemArrays

__version__ = "0.6.0"

__all__ = [
    "Model", "SystemArrays", "library_version", "library_path", "list_devices",
    "MLFFError", "LibraryNotFoundError", "InvalidArgumentError", "OutOfMemoryError",
    "FileError", "ModelFormatError", "BadInputError", "UnsupportedError",
    "DeviceError", "InternalError",
]


def library_version():
    """Version string of the loaded libmlff ("0.6.0")."""
    return _lib.load().mlff_version_string().decode()


def library_path():
    """The file (or soname) libmlff was loaded from."""
    return _lib.library_path()


def list_devices():
    """The backends compiled into libmlff and the devices each sees, as text."""
    import ctypes
    lib = _lib.load()
    needed = ctypes.c_size_t(0)
    lib.mlff_list_devices(None, 0, ctypes.byref(needed))
    buf = ctypes.create_string_buffer(needed.value)
    lib.mlff_list_devices(buf, needed.value, None)
    return buf.value.decode()
