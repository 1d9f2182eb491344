/* Error reporting inside the library: a status plus a message and, for bad
 * input, the system and atom it concerns. The context owns one of these. */
#ifndef MLFF_CORE_ERROR_H
#define MLFF_CORE_ERROR_H

#include <stdint.h>

#include "mlff.h"

typedef struct mlff_error {
    mlff_status status;
    int64_t system; /* -1 when not about one system */
    int64_t atom;   /* -1 when not about one atom (index within its system) */
    char message[512];
} mlff_error;

void mlff_error_clear(mlff_error *err);

/* Records the error (if err is not NULL) and returns status, so that callers
 * can write `return mlff_fail(err, MLFF_ERROR_IO, "cannot open %s", path);` */
mlff_status mlff_fail(mlff_error *err, mlff_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Same, for an error about one atom of one system. */
mlff_status mlff_fail_atom(mlff_error *err, mlff_status status, int64_t system, int64_t atom,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
