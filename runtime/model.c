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
 * interaction range: the largest pair-list cutoff. */
static mlff_status build_full_graph(mlff_model *m, mlff_error *err)
{
    mlff_graph *g;
    mlff_status s = mlff_model_build_graph(m, NULL, m->family->default_form, &g, err);
    if (s != MLFF_OK)
        return s;
    for (int t = 0; t < g->n_tensors; t++)
        if (g->tensors[t].kind == MLFF_TENSOR_INPUT && g->tensors[t].role == MLFF_INPUT_PAIRS &&
            g->tensors[t].cutoff > m->cutoff)
            m->cutoff = g->tensors[t].cutoff;
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

/* Dense (all pairs) or sparse (cell lists): both give the same numbers;
 * the caller may force either, else batches of up to the record's
 * dense_most_atoms atoms without periodic systems go dense (GPUs: where the
 * sparse path's lists are not written by the host anyway, device_cells.h,
 * without the dense path's host work). */
static int use_dense(const mlff_model *m, const mlff_batch *b)
{
    const mlff_context *ctx = m->ctx;
    if (ctx->settings.neighbors != MLFF_NEIGHBORS_AUTO)
        return ctx->settings.neighbors == MLFF_NEIGHBORS_DENSE;
    if (b->system_offsets[b->n_systems] > ctx->tuning.dense_most_atoms)
        return 0;
    for (int64_t s = 0; s < b->n_systems; s++)
        if (mlff_batch_is_periodic(b, s))
            return 0;
    return !(m->device_cells && mlff_device_cells_listed_on_host(m->device_cells, b));
}

/* W = -dE/d(strain) = sum_i F_i (x) r_i + sum_k F_cell_k (x) cell_k per system. */
static void assemble_virials(const mlff_batch *b, const double *forces, const double *cell_forces,
                             double *virials)
{
    for (int64_t s = 0; s < b->n_systems; s++) {
        double *w = virials + 9 * s;
        memset(w, 0, 9 * sizeof *w);
        for (int64_t i = b->system_offsets[s]; i < b->system_offsets[s + 1]; i++)
            for (int a = 0; a < 3; a++)
                for (int c = 0; c < 3; c++)
                    w[3 * a + c] += forces[3 * i + a] * b->positions[3 * i + c];
        if (!b->cells || !mlff_batch_is_periodic(b, s))
            continue;
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++)
                for (int c = 0; c < 3; c++)
                    w[3 * a + c] += cell_forces[9 * s + 3 * k + a] * b->cells[9 * s + 3 * k + c];
    }
}

/* The host phases of an evaluation, for MLFF_LOG=profile (core/profile.h). */
enum {
    PHASE_CHECK,
    PHASE_ELEMENTS,
    PHASE_SEARCH,
    PHASE_CHUNKS,
    PHASE_FILL,
    PHASE_BIND,
    PHASE_UPLOAD,
    PHASE_DEVICE_LISTS,
    PHASE_COMPUTE,
    PHASE_DOWNLOAD
};

/* Adds the time since *since to a phase and restarts the clock. */
static void phase_done(mlff_model *m, int phase, const char *name, double *since)
{
    if (!m->profile.enabled)
        return;
    const double now = mlff_seconds();
    mlff_profile_add(&m->profile, phase, name, now - *since);
    *since = now;
}

/* The view's pair lists, made on the device into the plan's inputs. */
static mlff_status write_device_lists(mlff_model *m, const mlff_atom_view *v, mlff_error *err)
{
    mlff_plan *plan = m->active->plan;
    mlff_batch_device_lists d = *v->device_lists;
    for (int l = 0; l < d.lists.n_lists; l++) {
        d.lists.pairs[l] = mlff_plan_input_to_fill(plan, d.pairs[l]);
        d.lists.images[l] = mlff_plan_input_to_fill(plan, d.images[l]);
    }
    if (d.triple_starts >= 0)
        d.lists.triple_starts = mlff_plan_input_to_fill(plan, d.triple_starts);
    return mlff_device_cells_write_lists(m->device_cells, &d.lists, err);
}

/* One plan execution for the atoms of a view, its inputs filled (w);
 * forces are per local atom. Outputs left NULL are not read. */
static mlff_status run_filled(mlff_model *m, const mlff_atom_view *v, unsigned outputs, double *energies,
                              double *forces, double *cell_forces)
{
    mlff_context *ctx = m->ctx;
    mlff_error *err = &ctx->error;
    const mlff_graph *g = m->active->graph;
    mlff_plan *plan = m->active->plan;
    double t = mlff_seconds();
    uint64_t builds = mlff_plan_builds(plan);
    mlff_status s = mlff_plan_bind(plan, m->work.symbols, err);
    if (s != MLFF_OK)
        return s;
    ctx->stats.plan_builds += mlff_plan_builds(plan) - builds;
    phase_done(m, PHASE_BIND, "host: plan bound to the sizes", &t);
    for (int t = 0; t < g->n_tensors && s == MLFF_OK; t++) {
        const mlff_graph_tensor *gt = &g->tensors[t];
        /* The device's lists of a whole batch are symmetric by construction
         * (cell_lists.cl): their pair gradients need no sort by neighbour. A
         * chunk's are not: its ghosts' pairs are not listed. */
        if (gt->kind == MLFF_TENSOR_INPUT && gt->role == MLFF_INPUT_PAIRS)
            mlff_plan_set_symmetric(plan, t, mlff_batch_made_on_device(g, v, t) && v->n_owned == v->n_atoms);
        if (gt->kind != MLFF_TENSOR_INPUT || mlff_batch_made_on_device(g, v, t))
            continue;
        const void *data = gt->role == MLFF_INPUT_POSITIONS ? (const void *)m->work.positions
                                                             : m->work.inputs[t].data;
        s = mlff_plan_write(plan, t, m->work.input_dtypes[t], data, err);
    }
    phase_done(m, PHASE_UPLOAD, "upload", &t);
    const int write_lists = v->device_lists && !v->device_lists->kept;
    if (s == MLFF_OK && write_lists) {
        s = write_device_lists(m, v, err);
        phase_done(m, PHASE_DEVICE_LISTS, "device: pair lists written", &t);
    }
    const uint64_t reused = mlff_plan_reused(plan);
    if (s == MLFF_OK)
        s = mlff_plan_run(plan, outputs, err);
    ctx->stats.nodes_reused += mlff_plan_reused(plan) - reused;
    if (s == MLFF_OK && write_lists)
        s = mlff_device_cells_read_check(m->device_cells, err);
    if (s == MLFF_OK) {
        phase_done(m, PHASE_COMPUTE, "device work (run, or enqueued)", &t);
        ctx->stats.plan_executions++;
    }
    /* The results and the lists' check come back after one wait. */
    if (s == MLFF_OK && energies)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_ENERGY], energies, err);
    if (s == MLFF_OK && forces)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_FORCES], forces, err);
    if (s == MLFF_OK && cell_forces)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_CELL_FORCES], cell_forces, err);
    /* Also after a failure: reads under way write into the caller's arrays,
     * and transfers may still read the host's. */
    mlff_error ignored;
    const mlff_status waited = mlff_plan_wait(plan, s == MLFF_OK ? err : &ignored);
    if (s == MLFF_OK)
        s = waited;
    if (s == MLFF_OK && write_lists)
        s = mlff_device_cells_check_lists(m->device_cells, err);
    phase_done(m, PHASE_DOWNLOAD, "download (waits for the device)", &t);
    return s;
}

static mlff_status run_view(mlff_model *m, const mlff_batch *batch, const mlff_atom_view *v, unsigned outputs,
                            double *energies, double *forces, double *cell_forces)
{
    double t = mlff_seconds();
    mlff_status s = mlff_batch_fill(m->active->graph, batch, v, &m->work, &m->ctx->error);
    if (s != MLFF_OK)
        return s;
    phase_done(m, PHASE_FILL, "host: inputs", &t);
    return run_filled(m, v, outputs, energies, forces, cell_forces);
}

/* Zeroes the batch's results, to which its chunks' are added. */
static void clear_results(const mlff_batch *batch, int64_t n_atoms, double *energies, double *forces,
                          double *cell_forces)
{
    if (energies)
        memset(energies, 0, (size_t)batch->n_systems * sizeof *energies);
    if (forces)
        memset(forces, 0, (size_t)n_atoms * 3 * sizeof *forces);
    if (cell_forces)
        memset(cell_forces, 0, (size_t)batch->n_systems * 9 * sizeof *cell_forces);
}

/* Runs a chunk (its inputs filled) and adds its results to the batch's. */
static mlff_status run_chunk(mlff_model *m, const mlff_batch *batch, const mlff_atom_view *v, unsigned outputs,
                             double *energies, double *forces, double *cell_forces)
{
    const int64_t n_systems = batch->n_systems;
    const size_t bytes = (size_t)(10 * n_systems + 3 * v->n_atoms) * sizeof(double);
    double *part = mlff_host_array_reserve(&m->chunk_results, bytes, &m->ctx->error);
    if (!part)
        return m->ctx->error.status;
    double *e = energies ? part : NULL, *cf = cell_forces ? part + n_systems : NULL;
    double *f = forces ? part + 10 * n_systems : NULL;
    mlff_status s = run_filled(m, v, outputs, e, f, cf);
    if (s != MLFF_OK)
        return s;
    for (int64_t y = 0; e && y < n_systems; y++)
        energies[y] += e[y];
    for (int64_t y = 0; cf && y < 9 * n_systems; y++)
        cell_forces[y] += cf[y];
    for (int64_t l = 0; f && l < v->n_atoms; l++)
        for (int d = 0; d < 3; d++)
            forces[3 * (int64_t)v->batch_atom[l] + d] += f[3 * l + d];
    return MLFF_OK;
}

/* The batch chunk by chunk, with the host's pair lists. */
static mlff_status run_chunks(mlff_model *m, const mlff_batch *batch, unsigned outputs, double *energies,
                              double *forces, double *cell_forces)
{
    mlff_error *err = &m->ctx->error;
    clear_results(batch, m->work.n_atoms, energies, forces, cell_forces);
    mlff_status s = MLFF_OK;
    for (int64_t k = 0; k < m->chunks.n_chunks && s == MLFF_OK; k++) {
        double t = mlff_seconds();
        if ((s = mlff_chunks_select(&m->chunks, k, &m->work, err)) == MLFF_OK)
            s = mlff_batch_fill(m->active->graph, batch, &m->chunks.view, &m->work, err);
        phase_done(m, PHASE_FILL, "host: inputs", &t);
        if (s == MLFF_OK)
            s = run_chunk(m, batch, &m->chunks.view, outputs, energies, forces, cell_forces);
    }
    return s;
}

/* The pairs of a view (the whole batch, or a chunk's atoms) counted on
 * the device, and its inputs filled; *listed is 0 when the device cannot
 * list them, *fits whether the view fits one pass. */
static mlff_status count_on_device(mlff_model *m, const mlff_batch *batch, const mlff_cell_atoms *atoms,
                                   const mlff_atom_view *v, const mlff_chunk_limits *limits, int *listed, int *fits)
{
    mlff_error *err = &m->ctx->error;
    mlff_model_plan *p = m->active;
    double t = mlff_seconds();
    *fits = 0;
    mlff_status s = mlff_device_cells_count_lists(m->device_cells, batch, atoms, &p->device_lists.lists, listed, err);
    if (s != MLFF_OK || !*listed)
        return s;
    phase_done(m, PHASE_SEARCH, "pair search", &t);
    if ((s = mlff_batch_fill(p->graph, batch, v, &m->work, err)) == MLFF_OK)
        s = mlff_chunks_whole_fits(&m->chunks, p->graph, p->plan, limits, batch, m->work.symbols, fits, err);
    phase_done(m, PHASE_FILL, "host: inputs", &t);
    return s;
}

/*
 * The batch chunk by chunk, each chunk's pair lists made on the device
 * (mlff_chunks_plan_binned), after a count of the whole batch's. *done
 * stays 0 when the device cannot list a chunk's pairs or a chunk does not
 * fit after all: the host's search then takes over.
 */
static mlff_status run_device_chunks(mlff_model *m, const mlff_batch *batch, unsigned outputs,
                                     const mlff_chunk_limits *limits, double *energies, double *forces,
                                     double *cell_forces, int *done)
{
    mlff_context *ctx = m->ctx;
    mlff_model_plan *p = m->active;
    mlff_chunks *chunks = &m->chunks;
    p->device_lists.lists.skin = 0.0; /* a chunk's lists are not kept */
    double t = mlff_seconds();
    mlff_cell_census census;
    mlff_status s = mlff_device_cells_census(m->device_cells, &census, &ctx->error);
    if (s == MLFF_OK)
        s = mlff_chunks_plan_binned(chunks, p->graph, p->plan, limits, batch, &m->work, &p->device_lists.lists,
                                    &census, &ctx->error);
    if (s != MLFF_OK)
        return s;
    phase_done(m, PHASE_CHUNKS, "host: chunk plan", &t);
    /* The plan kept the cap on owned atoms; a chunk's atoms include its ghosts. */
    mlff_chunk_limits chunk_limits = *limits;
    chunk_limits.max_atoms = 0;
    clear_results(batch, m->work.n_atoms, energies, forces, cell_forces);
    for (int64_t k = 0; k < chunks->n_chunks; k++) {
        if ((s = mlff_chunks_select_binned(chunks, k, &m->work, &ctx->error)) != MLFF_OK)
            return s;
        mlff_atom_view v = chunks->view;
        v.device_lists = &p->device_lists;
        const mlff_cell_atoms atoms = {v.n_atoms, v.n_owned, v.batch_atom, m->work.system};
        int listed, fits;
        if ((s = count_on_device(m, batch, &atoms, &v, &chunk_limits, &listed, &fits)) != MLFF_OK || !listed ||
            !fits)
            return s;
        ctx->stats.neighbor_builds++;
        ctx->stats.device_pair_lists++;
        if ((s = run_chunk(m, batch, &v, outputs, energies, forces, cell_forces)) != MLFF_OK)
            return s;
    }
    *done = 1;
    return MLFF_OK;
}

/*
 * The batch with the graph's pair lists made on the device (cell lists,
 * device_cells.h), in one pass or in chunks: nothing per pair crosses the
 * bus. With a skin, the lists of a batch in one pass hold the pairs within
 * each cutoff + skin, and stay in the plan's inputs while no atom has moved
 * more than half of it (core/verlet.h): every kernel gives nothing beyond
 * its own cutoff, so the extra pairs change no result, and such a call
 * costs neither the search, with its wait for the counts, nor the sorts of
 * the lists' segments (their buffers are not written). *done stays 0 when
 * the host's search must run instead: the device saw something (atoms too
 * close) that the host must judge.
 */
static mlff_status run_with_device_lists(mlff_model *m, const mlff_batch *batch, unsigned outputs,
                                         const mlff_chunk_limits *limits, double *energies, double *forces,
                                         double *cell_forces, int *done)
{
    mlff_context *ctx = m->ctx;
    mlff_batch_work *w = &m->work;
    mlff_batch_device_lists *d = &m->active->device_lists;
    const double radius = m->cutoff + ctx->settings.skin;
    *done = 0;
    w->pool = ctx->pool;
    const mlff_atom_view whole = {.n_owned = w->n_atoms, .n_atoms = w->n_atoms, .device_lists = d};
    mlff_status s;
    d->kept = mlff_verlet_holds(&m->device_searched, batch, radius);
    if (d->kept) {
        double t = mlff_seconds();
        s = mlff_batch_fill(m->active->graph, batch, &whole, w, &ctx->error);
        phase_done(m, PHASE_FILL, "host: inputs", &t);
    } else {
        m->device_searched.valid = 0;
        d->lists.skin = ctx->settings.skin;
        int listed, fits;
        s = count_on_device(m, batch, NULL, &whole, limits, &listed, &fits);
        if (s != MLFF_OK || !listed)
            return s;
        w->pairs.searched.valid = 0; /* the host's list is not this batch's */
        if (!fits)
            return run_device_chunks(m, batch, outputs, limits, energies, forces, cell_forces, done);
        ctx->stats.neighbor_builds++;
    }
    if (s == MLFF_OK) {
        ctx->stats.device_pair_lists++;
        *done = 1;
        s = run_filled(m, &whole, outputs, energies, forces, cell_forces);
    }
    if (s == MLFF_OK && !d->kept && d->lists.kept_skin > 0)
        s = mlff_verlet_remember(&m->device_searched, batch, radius, d->lists.kept_skin, &ctx->error);
    if (s != MLFF_OK)
        m->device_searched.valid = 0;
    return s;
}

/* The batch through the host's pair search: in one pass or in chunks. */
static mlff_status run_with_host_lists(mlff_model *m, const mlff_batch *batch, unsigned outputs,
                                       const mlff_chunk_limits *limits, double *energies, double *forces,
                                       double *cell_forces)
{
    mlff_context *ctx = m->ctx;
    mlff_error *err = &ctx->error;
    m->device_searched.valid = 0; /* the plan's pair inputs are written anew */
    const mlff_neighbor_search device_search = mlff_device_cells_search(m->device_cells);
    const mlff_pair_options pairs = {use_dense(m, batch), ctx->settings.skin, ctx->pool,
                                     m->device_cells ? &device_search : NULL};
    const uint64_t searches = m->work.pairs.searches;
    double t = mlff_seconds();
    mlff_status s = mlff_batch_find_pairs(m->active->graph, batch, &pairs, &m->work, err);
    ctx->stats.neighbor_builds += m->work.pairs.searches - searches;
    if (s != MLFF_OK || outputs == 0)
        return s;
    phase_done(m, PHASE_SEARCH, "pair search", &t);
    if ((s = mlff_chunks_plan(&m->chunks, m->active->graph, m->active->plan, limits, batch, &m->work, err)) != MLFF_OK)
        return s;
    phase_done(m, PHASE_CHUNKS, "host: chunk plan", &t);
    if (m->chunks.n_chunks > 1)
        return run_chunks(m, batch, outputs, energies, forces, cell_forces);
    const mlff_atom_view whole = mlff_batch_whole(&m->work);
    return run_view(m, batch, &whole, outputs, energies, forces, cell_forces);
}

mlff_status mlff_model_run(mlff_model *m, const mlff_batch *batch, const mlff_results *results)
{
    mlff_context *ctx = m->ctx;
    mlff_error *err = &ctx->error;
    mlff_profile_begin(&m->profile);
    unsigned outputs = (results->energies ? 1u << MLFF_OUTPUT_ENERGY : 0) |
                       (results->forces || results->virials ? 1u << MLFF_OUTPUT_FORCES : 0) |
                       (results->virials ? 1u << MLFF_OUTPUT_CELL_FORCES : 0);
    double t = mlff_seconds();
    mlff_status s = mlff_batch_check(batch, m->species_index, m->name, m->element_list, &m->work, err);
    if (s != MLFF_OK)
        return s;
    phase_done(m, PHASE_CHECK, "host: checks", &t);
    if ((s = mlff_model_use_elements(m, err)) != MLFF_OK)
        return s;
    phase_done(m, PHASE_ELEMENTS, "host: plan of the batch's elements", &t);
    /* The weights of the plans set aside stay on the device too. */
    mlff_memory_limits device;
    ctx->iface->memory_limits(ctx->backend, &device);
    const size_t parked = mlff_model_parked_bytes(m);
    const mlff_chunk_limits limits = {device.budget > parked ? device.budget - parked : 0, device.max_buffer,
                                      ctx->settings.max_chunk_atoms};

    /* Virials need the forces and the cell forces, asked for or not. */
    const int64_t n_atoms = m->work.n_atoms;
    double *forces = results->forces, *cell_forces = NULL;
    if (results->virials) {
        const size_t bytes = (size_t)(3 * n_atoms + 9 * batch->n_systems) * sizeof(double);
        if (!(cell_forces = mlff_host_array_reserve(&m->scratch, bytes, err)))
            return err->status;
        if (!forces)
            forces = cell_forces + 9 * batch->n_systems;
    }
    int done = 0;
    if (m->active->lists_on_device && outputs && !use_dense(m, batch))
        s = run_with_device_lists(m, batch, outputs, &limits, results->energies, forces, cell_forces, &done);
    if (s == MLFF_OK && !done)
        s = run_with_host_lists(m, batch, outputs, &limits, results->energies, forces, cell_forces);
    if (s == MLFF_OK && outputs && results->virials)
        assemble_virials(batch, forces, cell_forces, results->virials);
    return s;
}

mlff_status mlff_model_run_subdomain(mlff_model *m, const mlff_subdomain *sub, const mlff_subdomain_results *results)
{
    (void)sub;
    (void)results;
    return mlff_fail(&m->ctx->error, MLFF_ERROR_UNSUPPORTED, "subdomains: not yet");
}
