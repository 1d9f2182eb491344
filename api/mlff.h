/*
 * mlff: machine-learned force fields on any hardware.
 *
 * Public C API. Conventions:
 *  - every function returns an mlff_status (0 = success, negative = error);
 *  - a context owns all state (device, models, plans, the last error);
 *    there is no global mutable state, so independent contexts may be used
 *    from different threads (one context must not be used from two threads
 *    at once);
 *  - units at the interface: positions and cells in Angstrom, energies in
 *    eV, forces in eV/Angstrom, whatever the precision used inside;
 *  - output buffers belong to the caller; NULL skips an output.
 */
#ifndef MLFF_H
#define MLFF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MLFF_BUILDING_LIBRARY) && defined(__GNUC__)
#define MLFF_API __attribute__((visibility("default")))
#else
#define MLFF_API
#endif

#define MLFF_VERSION_MAJOR 0
#define MLFF_VERSION_MINOR 6
#define MLFF_VERSION_PATCH 0
#define MLFF_VERSION_STRING "0.6.0"
#define MLFF_VERSION_NUMBER(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))
#define MLFF_VERSION MLFF_VERSION_NUMBER(MLFF_VERSION_MAJOR, MLFF_VERSION_MINOR, MLFF_VERSION_PATCH)

/* Runtime version of the library, as MLFF_VERSION_NUMBER(...). */
MLFF_API unsigned mlff_version(void);
MLFF_API const char *mlff_version_string(void);

typedef enum mlff_status {
    MLFF_OK = 0,
    MLFF_ERROR_INVALID_ARGUMENT = -1, /* bad use of the API (NULL pointer, bad enum, ...) */
    MLFF_ERROR_OUT_OF_MEMORY = -2,    /* host or device memory exhausted */
    MLFF_ERROR_IO = -3,               /* file missing or unreadable */
    MLFF_ERROR_MODEL_FORMAT = -4,     /* corrupt, truncated or unknown model file */
    MLFF_ERROR_BAD_INPUT = -5,        /* the systems themselves: element, NaN, overlap */
    MLFF_ERROR_UNSUPPORTED = -6,      /* valid request this build or model cannot do yet */
    MLFF_ERROR_DEVICE = -7,           /* device missing, or failed */
    MLFF_ERROR_INTERNAL = -8          /* a bug in mlff: please report it */
} mlff_status;

/* Static description of a status code ("invalid argument", ...). */
MLFF_API const char *mlff_strerror(mlff_status status);

typedef enum mlff_device_kind {
    MLFF_DEVICE_AUTO = 0,   /* a real GPU through OpenCL or Vulkan if present, else the CPU */
    MLFF_DEVICE_CPU = 1,    /* the CPU backend (its own threads, n_threads) */
    MLFF_DEVICE_OPENCL = 2, /* OpenCL (any device type, PoCL included) */
    MLFF_DEVICE_VULKAN = 3  /* Vulkan (any device type, lavapipe included) */
} mlff_device_kind;

typedef enum mlff_precision {
    MLFF_PRECISION_FLOAT32 = 0,
    MLFF_PRECISION_FLOAT64 = 1
} mlff_precision;

/* How pairs are found. Both give the same numbers; they differ in cost. */
typedef enum mlff_neighbors {
    MLFF_NEIGHBORS_AUTO = 0,   /* dense for small batches (48 atoms) on a GPU, else sparse */
    MLFF_NEIGHBORS_DENSE = 1,  /* all pairs within each system: O(N^2), no periodic systems */
    MLFF_NEIGHBORS_SPARSE = 2  /* cell lists: O(N), periodic boundaries */
} mlff_neighbors;

typedef struct mlff_settings {
    mlff_device_kind device;
    int device_index;         /* -1: the backend's best device */
    mlff_precision precision;
    int n_threads;            /* CPU threads; 0: all available */
    mlff_neighbors neighbors;
    double skin;              /* Verlet skin in Angstrom (sparse path): the neighbour list is
                               * reused until some atom moved more than skin / 2; 0 rebuilds it
                               * every call. For MD (0.3 suits molecules); results do not depend
                               * on it beyond rounding. A GPU that makes the pair lists itself
                               * keeps them in its buffers too (since 0.5), for less while two
                               * atoms are within the skin of the closest distance allowed */
    int64_t max_chunk_atoms;  /* 0: a batch is evaluated in as few passes as the device's memory
                               * allows; N > 0: at most N atoms per pass. Results do not depend
                               * on it (since 0.4) */
    const char *tuning;       /* NULL, or choices of kernel forms and thresholds for this context,
                               * "key=value" separated by spaces or commas ("mlp=wide
                               * sum_lanes=4"): applied over the device's tuning record and the
                               * environment; the keys are listed by `mlff tune --keys`. Read
                               * when the context is created (since 0.6) */
    uint8_t reserved[40];     /* room to grow without breaking the ABI; keep zero */
} mlff_settings;

/* Fill *settings with the defaults (auto device, float32, all threads). */
MLFF_API void mlff_default_settings(mlff_settings *settings);

typedef struct mlff_context mlff_context;
typedef struct mlff_model mlff_model;

/*
 * Create a context and open the requested device.
 * On MLFF_ERROR_OUT_OF_MEMORY *ctx is NULL. On any other error *ctx is a
 * context that only holds the reason (mlff_last_error); destroy it.
 * settings may be NULL for the defaults.
 */
MLFF_API mlff_status mlff_context_create(const mlff_settings *settings, mlff_context **ctx);
/* Destroys the context and every model loaded into it. NULL is allowed. */
MLFF_API void mlff_context_destroy(mlff_context *ctx);

/* The message of the last error in this context ("" if none). */
MLFF_API const char *mlff_last_error(const mlff_context *ctx);

/*
 * Where the last MLFF_ERROR_BAD_INPUT points: system and atom index within
 * that system (0-based), or -1 where it does not apply.
 */
MLFF_API mlff_status mlff_last_error_location(const mlff_context *ctx, int64_t *system, int64_t *atom);

/* Human-readable description of the device in use ("cpu: 2 threads"). */
MLFF_API const char *mlff_device_description(const mlff_context *ctx);

/*
 * Load a model file. path NULL means the default model: $MLFF_MODEL if set,
 * else the model next to the build tree of an uninstalled library, else the
 * installed one.
 */
MLFF_API mlff_status mlff_model_load(mlff_context *ctx, const char *path, mlff_model **model);
/* Optional: models are also released with their context. */
MLFF_API void mlff_model_free(mlff_model *model);

/*
 * mlff_context_create and mlff_model_load in one call, quicker: the model
 * file is read while the device opens (drivers take a good part of a short
 * run's start; since 0.5). Outcomes as with the two calls: on failure *ctx is as
 * mlff_context_create leaves it (destroy it) and *model is NULL.
 */
MLFF_API mlff_status mlff_open(const mlff_settings *settings, const char *path, mlff_context **ctx,
                               mlff_model **model);

typedef struct mlff_model_info {
    const char *name;            /* "ANI-2x" */
    int n_elements;
    const int *atomic_numbers;   /* the elements the model knows, n_elements of them */
    double cutoff;               /* largest interaction cutoff, Angstrom */
    const char *path;            /* the file it was loaded from */
} mlff_model_info;

/* Pointers inside stay valid while the model lives. */
MLFF_API mlff_status mlff_model_get_info(const mlff_model *model, mlff_model_info *info);

/*
 * How many cutoffs an atom's energy reaches: 1 for a local model (ANI), L
 * for a model that passes messages through L interaction layers (an atom's
 * energy then depends on every atom within L x cutoff). A subdomain's
 * ghosts must reach that far (mlff_subdomain.ghost_depth). Since 0.6.
 */
MLFF_API mlff_status mlff_model_get_interaction_layers(const mlff_model *model, int *layers);

/*
 * A batch of systems of possibly different sizes: atoms of all systems
 * concatenated; system s owns atoms [system_offsets[s], system_offsets[s+1]).
 */
typedef struct mlff_batch {
    int64_t n_systems;
    const int64_t *system_offsets;  /* n_systems + 1, starting at 0, non-decreasing */
    const int32_t *atomic_numbers;  /* one per atom */
    const double *positions;        /* n_atoms x 3, Angstrom */
    const double *cells;            /* n_systems x 3 x 3, rows are lattice vectors; may be NULL
                                     * when nothing is periodic */
    const uint8_t *pbc;             /* n_systems x 3 periodic flags (per lattice vector);
                                     * NULL: none periodic */
} mlff_batch;

/* Where mlff_compute writes; NULL skips an output. */
typedef struct mlff_results {
    double *energies; /* n_systems, eV */
    double *forces;   /* n_atoms x 3, eV/Angstrom */
    double *virials;  /* n_systems x 9 (row-major 3x3), eV: W = -dE/d(strain) with atoms and
                       * cell strained together; the stress is -W / volume (ASE's sign) */
    void *reserved[8];
} mlff_results;

/* Evaluate every system of the batch in one pass. */
MLFF_API mlff_status mlff_compute(mlff_model *model, const mlff_batch *batch,
                                  const mlff_results *results);

/* mlff_compute for energies and forces (either may be NULL). */
MLFF_API mlff_status mlff_evaluate(mlff_model *model, const mlff_batch *batch,
                                   double *energies, double *forces);

/* Where mlff_compute_hessians writes; NULL skips an output. Since 0.6. */
typedef struct mlff_hessian_results {
    double *energies; /* n_systems, eV */
    double *forces;   /* n_atoms x 3, eV/Angstrom */
    double *hessians; /* each system's Hessian, one after another: system s's block is (3 N_s) x (3 N_s),
                       * row-major, eV/Angstrom^2, entry (3a + i, 3b + j) = d2E / dx_ai dx_bj for its
                       * atoms a, b (0-based within the system) and axes i, j; block s starts after the
                       * blocks of the systems before it (the sum of their (3 N)^2) */
    void *reserved[4];
} mlff_hessian_results;

/*
 * The Hessian of every system of the batch, exact (the derivative of the
 * forces by the graph's tangent pass, not finite differences), each of its
 * own atoms; periodic systems' with their cell fixed. The cost is a few
 * gradients per 3 directions of the largest system, all systems at once;
 * memory grows with the batch, not with the Hessians.
 */
MLFF_API mlff_status mlff_compute_hessians(mlff_model *model, const mlff_batch *batch,
                                           const mlff_hessian_results *results);

/*
 * Hessian-vector products H v for n_vectors vectors of the whole batch:
 * vectors and products are n_vectors x n_atoms x 3, vector k's row of atom
 * a at (k n_atoms + a) x 3 (eV/Angstrom^2 times the vectors' Angstrom). A
 * system's Hessian acts on its own atoms. Memory is that of a few gradients
 * per vector, whatever the system's size (a 100k-atom box's too).
 */
MLFF_API mlff_status mlff_compute_hessian_products(mlff_model *model, const mlff_batch *batch, int64_t n_vectors,
                                                   const double *vectors, double *products);

/*
 * One subdomain of a larger system, as a domain decomposition gives it
 * (LAMMPS under MPI: a rank's atoms, then its ghosts). Atoms 0 .. n_owned-1
 * are owned; the rest are ghosts: copies of other ranks' atoms and periodic
 * images, already placed where they act (there is no cell). Every atom
 * within ghost_depth of an owned atom must be among them. Only owned
 * atoms' energies count. For a model of L > 1 interaction layers
 * (mlff_model_get_interaction_layers) ghost_depth must be at least L x
 * cutoff: the whole graph then runs over owned and ghost atoms (the pairs
 * of ghosts too, so that the features of ghosts that owned atoms read are
 * exact), and a shallower subdomain is refused with the depth it needs.
 * Since 0.6.
 */
typedef struct mlff_subdomain {
    int64_t n_owned;
    int64_t n_atoms;                /* owned + ghosts */
    const int32_t *atomic_numbers;  /* n_atoms */
    const double *positions;        /* n_atoms x 3, Angstrom */
    int renumbered;                 /* nonzero when the atoms may not be those of the last call in the
                                     * same order (LAMMPS re-neighboured: it sorts and exchanges
                                     * atoms then): the pair lists kept through settings.skin are
                                     * searched again. Between such calls only positions change */
    int reserved_pad;               /* 0 */
    double ghost_depth;             /* Angstrom: how far beyond the owned atoms the ghosts reach
                                     * (every atom that near an owned atom is a ghost); 0: the
                                     * model's cutoff, as for a model of one layer */
    uint8_t reserved[16];
} mlff_subdomain;

/* Where mlff_compute_subdomain writes; NULL skips an output. */
typedef struct mlff_subdomain_results {
    double *energy;        /* 1 value: the owned atoms' energies summed, eV */
    double *forces;        /* n_atoms x 3, eV/Angstrom: -dE/dx of that energy, for every atom, ghosts
                            * included (their forces belong to the atoms they stand for: LAMMPS's
                            * reverse communication adds them, newton on) */
    double *virial;        /* 9 (row-major 3x3), eV: sum over all n_atoms of x (x) F, this
                            * subdomain's share: the ranks' shares add up to the system's virial */
    double *atom_energies; /* n_owned, eV: each owned atom's energy (LAMMPS eatom) */
    double *atom_virials;  /* n_atoms x 9 (row-major 3x3), eV: each atom's share of the virial, the
                            * asymmetric per-atom form that LAMMPS's centroid/stress/atom and
                            * heat/flux read (cvatom): the term -r_ij (x) dE_i/dr_ij of centre i's
                            * energy and its neighbour j goes to j (the heat current of many-body
                            * potentials, Fan et al., PRB 92, 094301). Ghosts' shares belong to
                            * their owners; all of them add up to the virial */
    void *reserved[4];
} mlff_subdomain_results;

/* Evaluates one subdomain. */
MLFF_API mlff_status mlff_compute_subdomain(mlff_model *model, const mlff_subdomain *subdomain,
                                            const mlff_subdomain_results *results);

/*
 * How many devices a backend sees, and how many of them are GPUs: OpenCL
 * and Vulkan number GPUs first, so settings.device_index 0 .. gpus-1 are
 * the GPUs (for one MPI rank per GPU: the rank's index on its node modulo
 * gpus). MLFF_DEVICE_AUTO: the GPUs of the first API that has any, which
 * is the one an automatic context with a device_index opens. Since 0.6.
 */
MLFF_API mlff_status mlff_count_devices(mlff_device_kind kind, int *devices, int *gpus);

/* Chemical element symbol of atomic number z (1..118), or NULL. */
MLFF_API const char *mlff_element_symbol(int z);
/* Atomic number of a symbol ("Cl"; exact case), or 0 if none. */
MLFF_API int mlff_element_number(const char *symbol);

/* Counters for tests and tuning. */
typedef struct mlff_stats {
    uint64_t evaluations;      /* mlff_evaluate calls that succeeded */
    uint64_t plan_executions;  /* times a compiled plan ran on the device */
    uint64_t plan_builds;      /* plans created or grown (buffer allocations) */
    uint64_t neighbor_builds;  /* neighbour lists searched (not reused through the skin) */
    uint64_t kernel_builds;    /* GPU programs compiled from source (0 on a warm kernel cache) */
    uint64_t kernel_cache_hits;    /* programs loaded from the on-disk kernel cache */
    uint64_t kernel_cache_rejects; /* cache files found invalid (corrupt, stale), deleted, rebuilt */
    uint64_t device_pair_lists; /* passes (plan executions) whose pair lists the device made (GPU cell lists) */
    uint64_t element_plans;     /* graphs made for the set of elements of a batch (one per set in
                                 * use; again after a set was set aside for others) */
    uint64_t nodes_reused;      /* graph nodes not run again: they read nothing that changed since
                                 * (in an MD loop, all that does not depend on the positions) */
    uint64_t tuning_record;     /* 1 when the context uses a tuning record that `mlff tune` measured on its
                                 * device (read from the cache directory), else 0: the table's numbers for
                                 * the device; mlff_get_tuning says more (since 0.6) */
} mlff_stats;

MLFF_API mlff_status mlff_get_stats(const mlff_context *ctx, mlff_stats *stats);

/*
 * The tuning record a context uses: every choice of kernel form and every
 * threshold that picks one (`mlff tune --keys` lists them), as lines
 * "key=value  # where it came from": the table's row for the device's API,
 * vendor and kind, the record `mlff tune` measured on it, the environment,
 * or settings.tuning; after comment lines naming the device, the table's
 * row and the measured record's file (or why there is none). Like
 * snprintf: as much as fits goes into buf (NUL-terminated when size > 0)
 * and *needed (may be NULL) receives the size the whole text needs. Since 0.6.
 */
MLFF_API mlff_status mlff_get_tuning(const mlff_context *ctx, char *buf, size_t size, size_t *needed);

/*
 * Every key of the tuning record, a line each: its environment variable,
 * the value the context uses and where that came from, the values it
 * takes; then a line on what it does (`mlff tune --keys`). As
 * mlff_get_tuning. Since 0.6.
 */
MLFF_API mlff_status mlff_describe_tuning_keys(const mlff_context *ctx, char *buf, size_t size, size_t *needed);

/* How mlff_tune measures. */
typedef struct mlff_tune_options {
    int quick;        /* nonzero: fewer sizes and calls (about a second on a CPU; for tests) */
    int no_write;     /* nonzero: measure only; else the record goes into the cache directory */
    const char *model; /* NULL: the default model (mlff_model_load) */
    /* Called with each line of progress (no newline), may be NULL. */
    void (*progress)(void *user, const char *line);
    void *user;
    uint8_t reserved[32]; /* keep zero */
} mlff_tune_options;

/*
 * Measures on the device `settings` opens which forms serve ANI-2x energies
 * and forces best there: where all pairs beat cell lists, how the element
 * networks run; on GPUs also the thresholds of the fused layers' forms, of
 * sums in lanes and of the tiled GEMMs. It times generated systems of
 * growing size (methane, water clusters, small molecules), each candidate
 * after a warm-up, keeping medians; it starts from the table's row for the
 * device (not the environment, nor an earlier record) and settings.tuning.
 * The record (the measured keys as text, with comments on what was timed)
 * goes into the cache directory, where contexts on the same device, driver
 * and library version read it (mlff_get_stats' tuning_record says so), and
 * like snprintf into record (*needed its size; both may be NULL / 0). On
 * failure record holds the message. options may be NULL. Since 0.6.
 */
MLFF_API mlff_status mlff_tune(const mlff_settings *settings, const mlff_tune_options *options, char *record,
                               size_t size, size_t *needed);

/*
 * What each device of each backend compiled in is and has, for a user
 * before a long run (`mlff devices`): memory and what is free of it (where
 * the API tells: Vulkan's VK_EXT_memory_budget; OpenCL tells the total),
 * the largest buffer, fp64, subgroup sizes, whether the kernel cache holds
 * its kernels, and the tuning record a context on it would use (the
 * table's row, a measured record or why not); `records`: nonzero for every
 * key of that record too. Devices are described without being opened. As
 * mlff_list_devices. Since 0.6.
 */
MLFF_API mlff_status mlff_describe_devices(int records, char *buf, size_t size, size_t *needed);

/*
 * List the backends compiled in and the devices each can see, one per line.
 * Like snprintf: as much as fits goes into buf (NUL-terminated when size > 0)
 * and *needed (may be NULL) receives the size the whole list needs.
 */
MLFF_API mlff_status mlff_list_devices(char *buf, size_t size, size_t *needed);

#ifdef __cplusplus
}
#endif

#endif /* MLFF_H */
