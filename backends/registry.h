/*
 * The backends this project has, in one list: the context opens devices
 * through it, the API and `mlff devices` list them, the tests find them by
 * name. A backend this build left out keeps its row, with the reason, so
 * that asking for it gives a clear error instead of an unknown name.
 */
#ifndef MLFF_BACKENDS_REGISTRY_H
#define MLFF_BACKENDS_REGISTRY_H

#include "backends/backend.h"
#include "mlff.h"

typedef struct mlff_backend_entry {
    const char *name;              /* "cpu", "opencl", "vulkan" */
    mlff_device_kind kind;         /* how mlff_settings.device names it */
    const mlff_backend_iface *iface; /* NULL: not in this build */
    const char *not_built;         /* why not, when iface is NULL */
    int tried_for_gpu;             /* MLFF_DEVICE_AUTO tries it for a GPU, in list order */
} mlff_backend_entry;

/* Every backend, in the order `auto` tries them; *n receives the count. */
const mlff_backend_entry *mlff_backend_list(int *n);

/* The row of a device kind (CPU, OpenCL, Vulkan), or NULL for AUTO and unknown kinds. */
const mlff_backend_entry *mlff_backend_of_kind(mlff_device_kind kind);

/* The backend of a name ("opencl"), or NULL when unknown or not built. */
const mlff_backend_iface *mlff_backend_named(const char *name);

#endif
