/* A loaded model: its file, its plans on the context's device (one per set
 * of elements, model_plans.c), and the work area for batches. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device_cells.h"
#include "environment.h"
#include "models/model_file.h"
#include "context.h"

/* True when the code of this library was loaded from inside the build tree
 * (libmlff.so there, or a test program linked statically there). */
static int running_from_build_tree(void)
{
    Dl_info info;
    char self[PATH_MAX], build[PATH_MAX];
    if (!dladdr((void *)running_from_build_tree, &info) || !info.dli_fname)
        return 0;
    /* The main program may be reported by the name it was started with. */
    const char *file = info.dli_fname;
    if (!*file || !realpath(file, self)) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return 0;
        self[n] = '\0';
    }
    if (!realpath(MLFF_BUILD_DIR, build))
        return 0;
    size_t len = strlen(build);
    return strncmp(self, build, len) == 0 && self[len] == '/';
}

const char *mlff_default_model_path(void)
{
    const char *env = mlff_environment_model();
    if (env)
        return env;
    return running_from_build_tree() ? MLFF_BUILD_MODEL_PATH : MLFF_INSTALL_MODEL_PATH;
}

static mlff_status read_identity(mlff_model *m, const mlff_model_file *mf, mlff_error *err)
{
    const char *name = mlff_model_file_meta(mf, "name");
    const char *elements = mlff_model_file_meta(mf, "elements");
    if (!name || !elements)
        return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model %s lacks its name or elements", m->path);
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->element_list, sizeof m->element_list, "%s", elements);
    for (int z = 0; z <= MLFF_MAX_ATOMIC_NUMBER; z++)
        m->species_index[z] = -1;
    char copy[128];
    snprintf(copy, sizeof copy, "%s", elements);
    char *save = NULL;
    for (char *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        int z = mlff_element_number_internal(tok);
        if (!z || m->species_index[z] >= 0 || m->n_elements == MLFF_MAX_ATOMIC_NUMBER)
            return mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model %s: bad element '%s'", m->path, tok);
        m->species_index[z] = m->n_elements;
        m->atomic_numbers[m->n_elements++] = z;
    }
    return MLFF_OK;
}

/* The graph of every element checks the whole file and gives the
 * interaction range: the largest pair-list cutoff, times the layers that
 * pass messages. */
static mlff_status build_full_graph(mlff_model *m, mlff_error *err)
{
    mlff_graph *g;
    const mlff_plan_extras none = {0};
    mlff_status s = mlff_model_build_graph(m, NULL, m->family->default_form, &none, &g, err);
    if (s != MLFF_OK)
        return s;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == MLFF_TENSOR_INPUT && g->tensors[t].role == MLFF_INPUT_PAIRS &&
            g->tensors[t].cutoff > m->cutoff)
            m->cutoff = g->tensors[t].cutoff;
    m->interaction_layers = g->interaction_layers > 1 ? g->interaction_layers : 1;
    m->plans[0].graph = g;
    m->plans[0].form = m->family->default_form;
    for (int e = 0; e < m->n_elements; e++)
        mlff_element_set_add(&m->plans[0].elements, e);
    return MLFF_OK;
}

/* Everything the device does not change: the file, the identity, the
 * graph of every element. Safe to run on another thread while the device
 * opens. */
mlff_status mlff_model_read(const char *path, mlff_model **out, mlff_error *err)
{
    *out = NULL;
    if (!path)
        path = mlff_default_model_path();
    mlff_model *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    mlff_profile_init(&m->profile, m->name, mlff_environment_profile());
    mlff_status s = mlff_model_file_read(path, &m->file, err);
    if (s == MLFF_OK && !(m->family = mlff_model_family_of(m->file, path, err)))
        s = err->status;
    if (s == MLFF_OK)
        s = read_identity(m, m->file, err);
    if (s == MLFF_OK)
        s = build_full_graph(m, err);
    if (s != MLFF_OK) {
        mlff_model_discard(m);
        return s;
    }
    *out = m;
    return MLFF_OK;
}

/* Where the sparse path's cell lists run: the record's cell_lists (device:
 * where the backend has the kernels). */
static mlff_status open_device_cells(mlff_context *ctx, mlff_model *m, mlff_error *err)
{
    if (ctx->tuning.cell_lists != MLFF_CELL_LISTS_DEVICE)
        return MLFF_OK;
    return mlff_device_cells_create(ctx->iface, ctx->backend, ctx->pool, &ctx->tuning, &m->device_cells, err);
}

mlff_status mlff_model_attach(mlff_context *ctx, mlff_model *m)
{
    mlff_error *err = &ctx->error;
    m->ctx = ctx;
    m->work.real = ctx->real;
    mlff_status s = open_device_cells(ctx, m, err);
    if (s == MLFF_OK)
        s = mlff_context_add_model(ctx, m);
    if (s != MLFF_OK) {
        m->ctx = NULL;
        mlff_model_discard(m);
    }
    return s;
}

mlff_status mlff_model_open(mlff_context *ctx, const char *path, mlff_model **out)
{
    mlff_model *m = NULL;
    mlff_status s = mlff_model_read(path, &m, &ctx->error);
    if (s == MLFF_OK && (s = mlff_model_attach(ctx, m)) != MLFF_OK)
        m = NULL;
    *out = m;
    return s;
}

void mlff_model_discard(mlff_model *m)
{
    if (!m)
        return;
    mlff_device_cells_free(m->device_cells);
    mlff_verlet_free(&m->device_searched);
    mlff_model_plans_free(m);
    mlff_batch_work_free(&m->work);
    mlff_chunks_free(&m->chunks);
    mlff_model_file_destroy(m->file);
    free(m->scratch.data);
    free(m->chunk_results.data);
    free(m->pair_gradients.data);
    free(m->hessian_scratch.data);
    free(m->path);
    free(m);
}

void mlff_model_close(mlff_model *m)
{
    if (!m)
        return;
    mlff_context_remove_model(m->ctx, m);
    mlff_profile_print(&m->profile);
    mlff_model_discard(m);
}
