/* mlff tune's measurements (tune.c; api/mlff.h's mlff_tune). */
#ifndef MLFF_RUNTIME_TUNE_H
#define MLFF_RUNTIME_TUNE_H

#include "context.h"

/* *text: the record measured (malloc'ed), also written into the cache
 * directory unless options->no_write. */
mlff_status mlff_runtime_tune(const mlff_settings *settings, const mlff_tune_options *options, char **text,
                              mlff_error *err);

#endif
