/*
 * The environment, read in this one place (no other file of the library
 * reads a variable): the variables that choose kernel forms, which are
 * the tuning record's keys (core/tuning.h), and the others, which the
 * runtime hands down to the backends (mlff_backend_options), the kernel
 * cache and the profiles. Read again at each context, so that a program
 * may change them between contexts.
 */
#ifndef MLFF_RUNTIME_ENVIRONMENT_H
#define MLFF_RUNTIME_ENVIRONMENT_H

#include "backends/backend.h"
#include "core/tuning.h"

typedef struct mlff_environment {
    char cache_dir[1024]; /* MLFF_CACHE_DIR, else $XDG_CACHE_HOME/mlff, else ~/.cache/mlff; "" without any */
    int cache_off;        /* MLFF_CACHE=off: no kernel cache (the tuning record is still read there) */
    int log_cache;        /* MLFF_LOG=cache */
    int profile;          /* MLFF_LOG=phases or profile (core/profile.h) */
    int vulkan_validation; /* MLFF_VULKAN_VALIDATION */
} mlff_environment;

void mlff_environment_read(mlff_environment *env);

/* The options of a backend opened for it (device and threads left as they are). */
void mlff_environment_backend_options(const mlff_environment *env, mlff_backend_options *opts);

/* Sets the keys of t whose variables are set (MLFF_SUM_LANES=4 ...);
 * changed[k] marks them. A bad value is MLFF_ERROR_INVALID_ARGUMENT
 * naming the variable. */
mlff_status mlff_environment_tuning(mlff_tuning *t, unsigned char *changed, mlff_error *err);

/* MLFF_MODEL, or NULL. */
const char *mlff_environment_model(void);
/* What MLFF_LOG asks of a profile (core/profile.h). */
int mlff_environment_profile(void);

#endif
