#include "dtype.h"

size_t mlff_dtype_size(mlff_dtype dtype)
{
    switch (dtype) {
    case MLFF_DTYPE_F32: return 4;
    case MLFF_DTYPE_F64: return 8;
    case MLFF_DTYPE_I32: return 4;
    case MLFF_DTYPE_REAL: break;
    }
    return 0;
}
