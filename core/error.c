#include "error.h"

#include <stdarg.h>
#include <stdio.h>

void mlff_error_clear(mlff_error *err)
{
    err->status = MLFF_OK;
    err->system = -1;
    err->atom = -1;
    err->message[0] = '\0';
}

static mlff_status record(mlff_error *err, mlff_status status, int64_t system, int64_t atom,
                          const char *fmt, va_list ap)
{
    if (err) {
        err->status = status;
        err->system = system;
        err->atom = atom;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    }
    return status;
}

mlff_status mlff_fail(mlff_error *err, mlff_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(err, status, -1, -1, fmt, ap);
    va_end(ap);
    return status;
}

mlff_status mlff_fail_atom(mlff_error *err, mlff_status status, int64_t system, int64_t atom,
                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(err, status, system, atom, fmt, ap);
    va_end(ap);
    return status;
}
