"""Exceptions raised by the binding, one per mlff_status.

Each also derives from the built-in exception a Python caller would expect
(ValueError for bad input, OSError for files, NotImplementedError for what
the library cannot do yet), so generic handlers keep working.
"""


class MLFFError(Exception):
    """An error reported by libmlff.

    Attributes: status (the mlff_status code, or None when the library was
    never reached), message (the library's own message), system and atom
    (0-based indices the error concerns, or None).
    """

    def __init__(self, message, *, status=None, system=None, atom=None):
        self.message = message
        self.status = status
        self.system = system
        self.atom = atom
        super().__init__(self._describe())

    def _describe(self):
        # Python indices (0-based), named so that they are not mistaken for
        # the 1-based numbers a library message may quote.
        where = []
        if self.system is not None:
            where.append("system index %d" % self.system)
        if self.atom is not None:
            where.append("atom index %d" % self.atom)
        if where:
            return "%s [%s]" % (self.message, ", ".join(where))
        return self.message


class LibraryNotFoundError(MLFFError, OSError):
    """libmlff could not be found or loaded."""


class InvalidArgumentError(MLFFError, ValueError):
    """MLFF_ERROR_INVALID_ARGUMENT: bad use of the API."""


class OutOfMemoryError(MLFFError, MemoryError):
    """MLFF_ERROR_OUT_OF_MEMORY: host or device memory exhausted."""


class FileError(MLFFError, OSError):
    """MLFF_ERROR_IO: a file (the model) is missing or unreadable."""


class ModelFormatError(MLFFError, ValueError):
    """MLFF_ERROR_MODEL_FORMAT: corrupt, truncated or unknown model file."""


class BadInputError(MLFFError, ValueError):
    """MLFF_ERROR_BAD_INPUT: the atoms themselves (element, NaN, overlap)."""


class UnsupportedError(MLFFError, NotImplementedError):
    """MLFF_ERROR_UNSUPPORTED: valid, but not possible with this build or
    model (a periodic system with the dense neighbour search, for one)."""


class DeviceError(MLFFError, RuntimeError):
    """MLFF_ERROR_DEVICE: the device is missing or failed."""


class InternalError(MLFFError, RuntimeError):
    """MLFF_ERROR_INTERNAL: a bug in mlff."""


BY_STATUS = {
    -1: InvalidArgumentError,
    -2: OutOfMemoryError,
    -3: FileError,
    -4: ModelFormatError,
    -5: BadInputError,
    -6: UnsupportedError,
    -7: DeviceError,
    -8: InternalError,
}
