#ifndef MLFF_CORE_DTYPE_H
#define MLFF_CORE_DTYPE_H

#include <stddef.h>

/* Element types as the graph sees them. REAL is the compute precision chosen
 * when a plan is made (float32 or float64); F64 is double in every plan and
 * is used where accuracy needs it (energies summed per system). */
typedef enum mlff_dtype {
    MLFF_DTYPE_REAL = 0,
    MLFF_DTYPE_F32 = 1,
    MLFF_DTYPE_F64 = 2,
    MLFF_DTYPE_I32 = 3
} mlff_dtype;

size_t mlff_dtype_size(mlff_dtype dtype); /* REAL has no size: 0 */

#endif
