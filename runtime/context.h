/* The context and model objects behind the public handles. */
#ifndef MLFF_RUNTIME_CONTEXT_H
#define MLFF_RUNTIME_CONTEXT_H

#include "backends/backend.h"
#include "core/tuning.h"
#include "models/family.h"
#include "batch.h"
#include "chunks.h"
#include "core/elements.h"
#include "core/error.h"
#include "core/graph.h"
#include "mlff.h"
#include "plan.h"
#include "core/profile.h"
#include "verlet.h"

/* Where each key of a context's tuning record came from. */
typedef enum mlff_tuning_origin {
    MLFF_TUNING_FROM_TABLE = 0,
    MLFF_TUNING_FROM_RECORD,      /* the measured record (mlff tune) */
    MLFF_TUNING_FROM_ENVIRONMENT,
    MLFF_TUNING_FROM_SETTINGS     /* settings.tuning */
} mlff_tuning_origin;

/* How a context fills its tuning record (mlff_context_open_as). */
enum {
    MLFF_OPEN_TABLE_ONLY = 1 /* the table's row and settings.tuning, no measured record nor environment (mlff tune) */
};

struct mlff_context {
    mlff_settings settings;
    const mlff_backend_iface *iface; /* NULL when opening the device failed */
    mlff_backend *backend;
    mlff_thread_pool *pool; /* settings.n_threads threads (all CPUs when 0) */
    mlff_dtype real;
    mlff_tuning tuning; /* the device's choices of forms (core/tuning.h) */
    const char *tuning_row;                         /* the table's row it started from */
    unsigned char tuning_origin[MLFF_TUNING_MAX_KEYS]; /* mlff_tuning_origin of each key */
    char tuning_record[1400];                       /* the measured record: its file, or why none */
    char cache_dir[1024];                           /* where records live ("": nowhere) */
    mlff_error error;
    mlff_stats stats;
    mlff_model **models; /* a core/ds.h array */
};

/* What a plan's graph gives besides energies, forces and cell forces. */
typedef struct mlff_plan_extras {
    int pair_gradients; /* -dE/dr_ij of every pair list (per-atom virials) */
    int64_t tangents;   /* T > 0: the forces' tangent along T directions of the positions (Hessians) */
} mlff_plan_extras;

/* The graph and plan of one set of the model's elements: a batch runs
 * through the one of the elements it holds (model_plans.c). */
typedef struct mlff_model_plan {
    mlff_element_set elements;
    int form;                             /* the family's form of the graph (plan_form) */
    mlff_plan_extras extras;
    mlff_graph *graph;
    mlff_plan *plan;                      /* NULL until a batch needs it */
    int lists_on_device;                  /* the device may make the graph's pair lists */
    mlff_batch_device_lists device_lists; /* which lists and inputs (batch.h) */
    uint64_t last_used;                   /* model run count when last used */
} mlff_model_plan;

/* Plans kept per model, for as many element sets; the least recently used
 * makes room for a new set. */
#define MLFF_MODEL_PLANS 8

struct mlff_model {
    mlff_context *ctx;
    char *path;
    char name[64];
    char element_list[128];             /* "H C N O S F Cl", for messages */
    int n_elements;
    int atomic_numbers[MLFF_MAX_ATOMIC_NUMBER];
    int species_index[MLFF_MAX_ATOMIC_NUMBER + 1]; /* atomic number -> element index or -1 */
    double cutoff;
    int interaction_layers;                 /* cutoffs an atom's energy reaches (at least 1) */
    struct mlff_model_file *file;           /* kept (mapped) for the graphs of other element sets */
    const mlff_model_family *family;        /* what builds its graphs (models/family.h) */
    mlff_model_plan plans[MLFF_MODEL_PLANS]; /* the first: every element's graph, built when read */
    mlff_model_plan *active;                /* the batch's (mlff_model_use_elements) */
    uint64_t runs;
    struct mlff_device_cells *device_cells; /* cell lists on the device, or NULL: on the host */
    mlff_verlet device_searched;            /* what the active plan's device lists were searched for */
    mlff_batch_work work;
    mlff_chunks chunks;            /* how the last batch was cut (chunks.h) */
    mlff_host_array scratch;       /* forces and cell forces for virials, when not asked for */
    mlff_host_array chunk_results; /* one chunk's energies, cell forces, forces and atom virials */
    mlff_host_array pair_gradients; /* per-atom virials' -dE/dr_ij of every pair */
    mlff_host_array hessian_scratch; /* a Hessian pass's directions and the forces' tangent */
    mlff_profile profile;          /* MLFF_LOG=profile */
};

/* A device's tuning record in layers (core/tuning.h): the table's row,
 * the measured record (tuning_record.h), the environment's keys, then
 * `tuning` (settings.tuning; may be NULL), as far as flags allow. */
typedef struct mlff_tuning_fill_result {
    mlff_tuning tuning;
    const char *row;                             /* the table's row */
    unsigned char origin[MLFF_TUNING_MAX_KEYS];  /* mlff_tuning_origin of each key */
    int measured;                                /* a measured record was applied */
    char record[1400];                           /* its file, or why none */
} mlff_tuning_fill_result;
struct mlff_environment;
mlff_status mlff_tuning_fill(const mlff_device_info *info, const struct mlff_environment *env, const char *tuning,
                             int flags, mlff_tuning_fill_result *out, mlff_error *err);

mlff_status mlff_context_open(mlff_context *ctx, const mlff_settings *settings);
/* The same, with MLFF_OPEN_* flags. */
mlff_status mlff_context_open_as(mlff_context *ctx, const mlff_settings *settings, int flags);
/* Another tuning record for an open context (mlff tune): the backend's
 * copy too; plans of another form of graph are made as batches need them. */
mlff_status mlff_context_set_tuning(mlff_context *ctx, const mlff_tuning *t);
/* The record in use as text, with where each key came from (mlff_get_tuning). */
int mlff_context_format_tuning(const mlff_context *ctx, char *buf, size_t size);
/* Every key: its variable, the value in use and where it came from, what it
 * takes, what it does (mlff_describe_tuning_keys), as snprintf. */
int mlff_context_format_keys(const mlff_context *ctx, char *buf, size_t size);
/* The backend an automatic context with a device index opens: the first
 * GPU API with GPUs (*gpus of them; may be NULL), or NULL. */
const struct mlff_backend_entry *mlff_first_gpu_api(int *gpus);
void mlff_context_close(mlff_context *ctx);
mlff_status mlff_context_add_model(mlff_context *ctx, mlff_model *model);
void mlff_context_remove_model(mlff_context *ctx, mlff_model *model);

/* Opening a model is reading it (file, graph: no device, any thread) and
 * attaching it to a context (plans on its device); open does both. On
 * failure read and attach free the model. */
mlff_status mlff_model_read(const char *path, mlff_model **out, mlff_error *err);
mlff_status mlff_model_attach(mlff_context *ctx, mlff_model *model);
mlff_status mlff_model_open(mlff_context *ctx, const char *path, mlff_model **out);
/* Frees a model that no context holds; close also takes it out of its context. */
void mlff_model_discard(mlff_model *model);
void mlff_model_close(mlff_model *model);
mlff_status mlff_model_run(mlff_model *model, const mlff_batch *batch, const mlff_results *results);
/* mlff_compute_hessians and mlff_compute_hessian_products (api/mlff.h; hessian.c). */
mlff_status mlff_model_hessians(mlff_model *model, const mlff_batch *batch, const mlff_hessian_results *results);
mlff_status mlff_model_hessian_products(mlff_model *model, const mlff_batch *batch, int64_t n_vectors,
                                        const double *vectors, double *products);
/* mlff_compute_subdomain (api/mlff.h). */
mlff_status mlff_model_run_subdomain(mlff_model *model, const mlff_subdomain *sub, const mlff_subdomain_results *results);

/* model_plans.c: the graph of a set of the model's elements (NULL: all),
 * forward and reverse, from model->file. */
mlff_status mlff_model_build_graph(const mlff_model *model, const mlff_element_set *subset, int form,
                                   const mlff_plan_extras *extras, mlff_graph **out, mlff_error *err);
/* Makes model->active the plan of the elements of the checked batch in
 * model->work (made if needed, with the extras asked for) and renumbers
 * work.species to its graph's elements. */
mlff_status mlff_model_use_elements(mlff_model *model, const mlff_plan_extras *extras, mlff_error *err);
/* Device bytes of the weights of the plans other than the active one. */
size_t mlff_model_parked_bytes(const mlff_model *model);
void mlff_model_plans_free(mlff_model *model);

/* The file mlff_model_load(ctx, NULL) uses; see api/mlff.h. */
const char *mlff_default_model_path(void);

#endif
