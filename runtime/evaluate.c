/*
 * Evaluating a model: a batch of systems (mlff_model_run) or one
 * subdomain of owned atoms and ghosts (mlff_model_run_subdomain), through
 * pair lists found on the host or made on the device, in one pass or in
 * chunks of atoms.
 */
#include <string.h>

#include "device_cells.h"
#include "evaluate.h"

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

/* Adds each pair's virial term r_ij (x) -dE/dr_ij of list l to its
 * neighbour j's share (api/mlff.h: mlff_subdomain_results.atom_virials). */
static mlff_status add_pair_virials(mlff_model *m, int l, const double *gradients, double *atom_virials)
{
    const mlff_graph *g = m->active->graph;
    const mlff_batch_work *w = &m->work;
    const int t = g->gradient_pairs[l];
    const int64_t n_pairs = w->symbols[g->tensors[t].rows_symbol];
    const int32_t *pairs = w->inputs[t].data;
    const double *r = w->positions;
    for (int64_t p = 0; p < n_pairs; p++) {
        const int64_t i = pairs[2 * p], j = pairs[2 * p + 1];
        double *v = atom_virials + 9 * j;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                v[3 * a + b] += (r[3 * j + a] - r[3 * i + a]) * gradients[3 * p + b];
    }
    return MLFF_OK;
}

/* The pair gradients of every list, read once the device is done. */
static mlff_status read_pair_gradients(mlff_model *m, double **lists, mlff_error *err)
{
    const mlff_graph *g = m->active->graph;
    mlff_plan *plan = m->active->plan;
    size_t total = 0;
    for (int l = 0; l < MLFF_MAX_GRADIENT_LISTS && g->gradient_pairs[l] >= 0; l++)
        total += 3 * (size_t)m->work.symbols[g->tensors[g->gradient_pairs[l]].rows_symbol];
    double *scratch = mlff_host_array_reserve(&m->pair_gradients, total * sizeof(double), err);
    if (!scratch)
        return err->status;
    mlff_status s = MLFF_OK;
    for (int l = 0; l < MLFF_MAX_GRADIENT_LISTS && s == MLFF_OK; l++) {
        lists[l] = NULL;
        if (g->gradient_pairs[l] < 0)
            continue;
        lists[l] = scratch;
        scratch += 3 * m->work.symbols[g->tensors[g->gradient_pairs[l]].rows_symbol];
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_PAIR_GRADIENTS + l], lists[l], err);
    }
    return s;
}

/* One plan execution for the atoms of a view, its inputs filled (w);
 * per-atom results are per local atom. */
static mlff_status run_filled(mlff_model *m, const mlff_atom_view *v, const mlff_run_out *o)
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
         * (shaders/cell_lists.kernel): their pair gradients need no sort by neighbour. A
         * chunk's are not: its outermost ghosts' pairs are not listed. */
        if (gt->kind == MLFF_TENSOR_INPUT && gt->role == MLFF_INPUT_PAIRS)
            mlff_plan_set_symmetric(plan, t, mlff_batch_made_on_device(g, v, t) && v->n_owned == v->n_atoms);
        if (gt->kind != MLFF_TENSOR_INPUT || mlff_batch_made_on_device(g, v, t))
            continue;
        const int positions = gt->role == MLFF_INPUT_POSITIONS;
        s = mlff_plan_write(plan, t, positions ? m->work.positions_upload_dtype : m->work.input_dtypes[t],
                            positions ? m->work.positions_upload : m->work.inputs[t].data, err);
    }
    phase_done(m, PHASE_UPLOAD, "upload", &t);
    const int write_lists = v->device_lists && !v->device_lists->kept;
    if (s == MLFF_OK && write_lists) {
        s = write_device_lists(m, v, err);
        phase_done(m, PHASE_DEVICE_LISTS, "device: pair lists written", &t);
    }
    unsigned outputs = o->outputs | (o->force_tangents ? 1u << MLFF_OUTPUT_FORCE_TANGENTS : 0u);
    for (int l = 0; o->atom_virials && l < MLFF_MAX_GRADIENT_LISTS; l++)
        outputs |= 1u << (MLFF_OUTPUT_PAIR_GRADIENTS + l);
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
    if (s == MLFF_OK && o->energies)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_ENERGY], o->energies, err);
    if (s == MLFF_OK && o->forces)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_FORCES], o->forces, err);
    if (s == MLFF_OK && o->cell_forces)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_CELL_FORCES], o->cell_forces, err);
    if (s == MLFF_OK && o->force_tangents)
        s = mlff_plan_read_later(plan, g->outputs[MLFF_OUTPUT_FORCE_TANGENTS], o->force_tangents, err);
    double *pair_gradients[MLFF_MAX_GRADIENT_LISTS] = {NULL};
    if (s == MLFF_OK && o->atom_virials)
        s = read_pair_gradients(m, pair_gradients, err);
    /* Also after a failure: reads under way write into the caller's arrays,
     * and transfers may still read the host's. */
    mlff_error ignored;
    const mlff_status waited = mlff_plan_wait(plan, s == MLFF_OK ? err : &ignored);
    if (s == MLFF_OK)
        s = waited;
    if (s == MLFF_OK && write_lists)
        s = mlff_device_cells_check_lists(m->device_cells, err);
    if (s == MLFF_OK && o->atom_virials) {
        memset(o->atom_virials, 0, (size_t)v->n_atoms * 9 * sizeof *o->atom_virials);
        for (int l = 0; l < MLFF_MAX_GRADIENT_LISTS && pair_gradients[l] && s == MLFF_OK; l++)
            s = add_pair_virials(m, l, pair_gradients[l], o->atom_virials);
    }
    phase_done(m, PHASE_DOWNLOAD, "download (waits for the device)", &t);
    return s;
}

static mlff_status run_view(mlff_model *m, const mlff_batch *batch, const mlff_atom_view *v, const mlff_run_out *o)
{
    double t = mlff_seconds();
    mlff_status s = mlff_batch_fill(m->active->graph, batch, v, &m->work, &m->ctx->error);
    if (s != MLFF_OK)
        return s;
    phase_done(m, PHASE_FILL, "host: inputs", &t);
    return run_filled(m, v, o);
}

/* Rows of the energies: per system, or per owned atom. */
static int64_t energy_rows(const mlff_batch *batch, const mlff_batch_work *w, int atom_systems)
{
    return atom_systems ? w->n_owned : batch->n_systems;
}

/* Columns of a per-atom row of the forces' tangent: 3T. */
static int64_t tangent_cols(const mlff_batch_work *w)
{
    return w->tangent_cols;
}

/* Zeroes the batch's results, to which its chunks' are added. */
static void clear_results(const mlff_batch *batch, const mlff_batch_work *w, const mlff_run_out *o, int atom_systems)
{
    if (o->energies)
        memset(o->energies, 0, (size_t)energy_rows(batch, w, atom_systems) * sizeof *o->energies);
    if (o->forces)
        memset(o->forces, 0, (size_t)w->n_atoms * 3 * sizeof *o->forces);
    if (o->cell_forces)
        memset(o->cell_forces, 0, (size_t)batch->n_systems * 9 * sizeof *o->cell_forces);
    if (o->atom_virials)
        memset(o->atom_virials, 0, (size_t)w->n_atoms * 9 * sizeof *o->atom_virials);
    if (o->force_tangents)
        memset(o->force_tangents, 0, (size_t)w->n_atoms * tangent_cols(w) * sizeof *o->force_tangents);
}

/* Runs a chunk (its inputs filled) and adds its results to the batch's. */
static mlff_status run_chunk(mlff_model *m, const mlff_batch *batch, const mlff_atom_view *v, const mlff_run_out *o)
{
    const int64_t n_systems = batch->n_systems, n_energies = v->atom_systems ? v->n_owned : n_systems;
    const int64_t t_cols = tangent_cols(&m->work);
    const size_t bytes = (size_t)(n_energies + 9 * n_systems + (12 + t_cols) * v->n_atoms) * sizeof(double);
    double *part = mlff_host_array_reserve(&m->chunk_results, bytes, &m->ctx->error);
    if (!part)
        return m->ctx->error.status;
    double *atoms = part + n_energies + 9 * n_systems;
    const mlff_run_out local = {
        .outputs = o->outputs,
        .energies = o->energies ? part : NULL,
        .cell_forces = o->cell_forces ? part + n_energies : NULL,
        .forces = o->forces ? atoms : NULL,
        .atom_virials = o->atom_virials ? atoms + 3 * v->n_atoms : NULL,
        .force_tangents = o->force_tangents ? atoms + 12 * v->n_atoms : NULL,
    };
    mlff_status s = run_filled(m, v, &local);
    if (s != MLFF_OK)
        return s;
    for (int64_t y = 0; local.energies && y < n_energies; y++)
        o->energies[v->atom_systems ? v->batch_atom[y] : y] += local.energies[y];
    for (int64_t y = 0; local.cell_forces && y < 9 * n_systems; y++)
        o->cell_forces[y] += local.cell_forces[y];
    for (int64_t l = 0; local.forces && l < v->n_atoms; l++)
        for (int d = 0; d < 3; d++)
            o->forces[3 * (int64_t)v->batch_atom[l] + d] += local.forces[3 * l + d];
    for (int64_t l = 0; local.atom_virials && l < v->n_atoms; l++)
        for (int d = 0; d < 9; d++)
            o->atom_virials[9 * (int64_t)v->batch_atom[l] + d] += local.atom_virials[9 * l + d];
    for (int64_t l = 0; local.force_tangents && l < v->n_atoms; l++)
        for (int64_t d = 0; d < t_cols; d++)
            o->force_tangents[t_cols * v->batch_atom[l] + d] += local.force_tangents[t_cols * l + d];
    return MLFF_OK;
}

/* The batch chunk by chunk, with the host's pair lists. */
static mlff_status run_chunks(mlff_model *m, const mlff_batch *batch, const mlff_run_out *o, int atom_systems)
{
    mlff_error *err = &m->ctx->error;
    clear_results(batch, &m->work, o, atom_systems);
    mlff_status s = MLFF_OK;
    for (int64_t k = 0; k < m->chunks.n_chunks && s == MLFF_OK; k++) {
        double t = mlff_seconds();
        if ((s = mlff_chunks_select(&m->chunks, k, &m->work, err)) != MLFF_OK)
            break;
        m->chunks.view.atom_systems = atom_systems;
        s = mlff_batch_fill(m->active->graph, batch, &m->chunks.view, &m->work, err);
        phase_done(m, PHASE_FILL, "host: inputs", &t);
        if (s == MLFF_OK)
            s = run_chunk(m, batch, &m->chunks.view, o);
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
 * stays 0 when the device cannot list a chunk's pairs, a chunk does not
 * fit after all, or no chunk of whole slabs fits (a model of several
 * layers, whose slabs of centers and ghosts span much of a box): the
 * host's search then takes over.
 */
static mlff_status run_device_chunks(mlff_model *m, const mlff_batch *batch, const mlff_run_out *o,
                                     const mlff_chunk_limits *limits, int *done)
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
    if (s != MLFF_OK || chunks->n_chunks == 0)
        return s;
    phase_done(m, PHASE_CHUNKS, "host: chunk plan", &t);
    /* The plan kept the cap on owned atoms; a chunk's atoms include its ghosts. */
    mlff_chunk_limits chunk_limits = *limits;
    chunk_limits.max_atoms = 0;
    clear_results(batch, &m->work, o, 0);
    for (int64_t k = 0; k < chunks->n_chunks; k++) {
        if ((s = mlff_chunks_select_binned(chunks, k, &m->work, &ctx->error)) != MLFF_OK)
            return s;
        mlff_atom_view v = chunks->view;
        v.device_lists = &p->device_lists;
        const mlff_cell_atoms atoms = {v.n_atoms, chunks->n_centers, v.batch_atom, m->work.system};
        int listed, fits;
        if ((s = count_on_device(m, batch, &atoms, &v, &chunk_limits, &listed, &fits)) != MLFF_OK || !listed ||
            !fits)
            return s;
        ctx->stats.neighbor_builds++;
        ctx->stats.device_pair_lists++;
        if ((s = run_chunk(m, batch, &v, o)) != MLFF_OK)
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
static mlff_status run_with_device_lists(mlff_model *m, const mlff_batch *batch, const mlff_run_out *o,
                                         const mlff_chunk_limits *limits, int *done)
{
    mlff_context *ctx = m->ctx;
    mlff_batch_work *w = &m->work;
    mlff_batch_device_lists *d = &m->active->device_lists;
    const double radius = m->cutoff + ctx->settings.skin;
    *done = 0;
    d->lists.most_candidates = (double)limits->budget / MLFF_BYTES_PER_CANDIDATE;
    d->lists.most_candidates_per_atom = MLFF_CANDIDATES_PER_ATOM;
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
            return run_device_chunks(m, batch, o, limits, done);
        ctx->stats.neighbor_builds++;
    }
    if (s == MLFF_OK) {
        ctx->stats.device_pair_lists++;
        *done = 1;
        s = run_filled(m, &whole, o);
    }
    if (s == MLFF_OK && !d->kept && d->lists.kept_skin > 0)
        s = mlff_verlet_remember(&m->device_searched, batch, radius, d->lists.kept_skin, &ctx->error);
    if (s != MLFF_OK)
        m->device_searched.valid = 0;
    return s;
}

/* The batch through the host's pair search: in one pass or in chunks. */
static mlff_status run_with_host_lists(mlff_model *m, const mlff_batch *batch, const mlff_run_out *o,
                                       const mlff_chunk_limits *limits, int atom_systems)
{
    mlff_context *ctx = m->ctx;
    mlff_error *err = &ctx->error;
    m->device_searched.valid = 0; /* the plan's pair inputs are written anew */
    const mlff_neighbor_search device_search = mlff_device_cells_search(m->device_cells);
    const mlff_pair_options pairs = {use_dense(m, batch), ctx->settings.skin, ctx->pool,
                                     m->device_cells ? &device_search : NULL,
                                     (double)limits->budget / MLFF_BYTES_PER_CANDIDATE, MLFF_CANDIDATES_PER_ATOM};
    const uint64_t searches = m->work.pairs.searches;
    double t = mlff_seconds();
    mlff_status s = mlff_batch_find_pairs(m->active->graph, batch, &pairs, &m->work, err);
    ctx->stats.neighbor_builds += m->work.pairs.searches - searches;
    if (s != MLFF_OK || o->outputs == 0)
        return s;
    phase_done(m, PHASE_SEARCH, "pair search", &t);
    if ((s = mlff_chunks_plan(&m->chunks, m->active->graph, m->active->plan, limits, batch, &m->work, err)) != MLFF_OK)
        return s;
    phase_done(m, PHASE_CHUNKS, "host: chunk plan", &t);
    if (m->chunks.n_chunks > 1)
        return run_chunks(m, batch, o, atom_systems);
    mlff_atom_view whole = mlff_batch_whole(&m->work);
    whole.atom_systems = atom_systems;
    return run_view(m, batch, &whole, o);
}

/* The device's limits for the active plan: the weights of the plans set
 * aside stay on the device too. */
static mlff_chunk_limits chunk_limits(const mlff_model *m)
{
    const mlff_context *ctx = m->ctx;
    mlff_memory_limits device;
    ctx->iface->memory_limits(ctx->backend, &device);
    const size_t parked = mlff_model_parked_bytes(m);
    return (mlff_chunk_limits){device.budget > parked ? device.budget - parked : 0, device.max_buffer,
                               ctx->settings.max_chunk_atoms};
}

mlff_status mlff_evaluate_prepare(mlff_model *m, const mlff_batch *batch, int64_t n_owned, double ghost_depth,
                                  const mlff_plan_extras *extras)
{
    mlff_error *err = &m->ctx->error;
    double t = mlff_seconds();
    mlff_status s = mlff_batch_check(batch, m->species_index, m->name, m->element_list, &m->work, err);
    if (s != MLFF_OK)
        return s;
    m->work.tangent_cols = 3 * extras->tangents;
    phase_done(m, PHASE_CHECK, "host: checks", &t);
    s = mlff_model_use_elements(m, extras, err);
    phase_done(m, PHASE_ELEMENTS, "host: plan of the batch's elements", &t);
    const int layers = m->active ? m->active->graph->interaction_layers : 1;
    if (s != MLFF_OK || n_owned < 0 || n_owned == m->work.n_atoms || layers <= 1) {
        if (n_owned >= 0)
            mlff_batch_own(&m->work, n_owned, 0);
        return s;
    }
    /* An owned atom's energy reads the features of ghosts up to layers - 1
     * cutoffs away, each made from its own neighbours: exact when every
     * atom within layers x cutoff is there and the ghosts' pairs run too.
     * The relative slack forgives a caller's depth computed as the product
     * in another order. */
    const double needed = layers * m->cutoff;
    if (!(ghost_depth >= needed * (1 - 1e-12)))
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "model %s passes messages %d cutoffs far: a subdomain's ghosts must reach %g Angstrom "
                         "(%d x the cutoff %g) beyond its owned atoms, and these reach %g (mlff_subdomain.ghost_depth%s)",
                         m->name, layers, needed, layers, m->cutoff, ghost_depth > 0 ? ghost_depth : m->cutoff,
                         ghost_depth > 0 ? "" : " 0: one cutoff");
    mlff_batch_own(&m->work, n_owned, 1);
    return s;
}

mlff_status mlff_evaluate_run(mlff_model *m, const mlff_batch *batch, const mlff_run_out *o, int atom_systems)
{
    const mlff_chunk_limits limits = chunk_limits(m);
    int done = 0;
    mlff_status s = MLFF_OK;
    if (m->active->lists_on_device && o->outputs && !atom_systems && m->work.n_owned == m->work.n_atoms &&
        !use_dense(m, batch))
        s = run_with_device_lists(m, batch, o, &limits, &done);
    if (s == MLFF_OK && !done)
        s = run_with_host_lists(m, batch, o, &limits, atom_systems);
    return s;
}

mlff_status mlff_model_run(mlff_model *m, const mlff_batch *batch, const mlff_results *results)
{
    mlff_context *ctx = m->ctx;
    mlff_error *err = &ctx->error;
    mlff_profile_begin(&m->profile);
    mlff_status s = mlff_evaluate_prepare(m, batch, -1, 0, &(mlff_plan_extras){0});
    if (s != MLFF_OK)
        return s;
    mlff_run_out o = {
        .outputs = (results->energies ? 1u << MLFF_OUTPUT_ENERGY : 0) |
                   (results->forces || results->virials ? 1u << MLFF_OUTPUT_FORCES : 0) |
                   (results->virials ? 1u << MLFF_OUTPUT_CELL_FORCES : 0),
        .energies = results->energies,
        .forces = results->forces,
    };
    /* Virials need the forces and the cell forces, asked for or not. */
    const int64_t n_atoms = m->work.n_atoms;
    if (results->virials) {
        const size_t bytes = (size_t)(3 * n_atoms + 9 * batch->n_systems) * sizeof(double);
        if (!(o.cell_forces = mlff_host_array_reserve(&m->scratch, bytes, err)))
            return err->status;
        if (!o.forces)
            o.forces = o.cell_forces + 9 * batch->n_systems;
    }
    s = mlff_evaluate_run(m, batch, &o, 0);
    if (s == MLFF_OK && o.outputs && results->virials)
        assemble_virials(batch, o.forces, o.cell_forces, results->virials);
    return s;
}

mlff_status mlff_model_run_subdomain(mlff_model *m, const mlff_subdomain *sub, const mlff_subdomain_results *r)
{
    mlff_context *ctx = m->ctx;
    mlff_error *err = &ctx->error;
    mlff_profile_begin(&m->profile);
    if (sub->n_owned < 0 || sub->n_atoms < sub->n_owned)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT,
                         "a subdomain of %lld atoms with %lld owned: need 0 <= n_owned <= n_atoms",
                         (long long)sub->n_atoms, (long long)sub->n_owned);
    /* One system of every atom, which the pair search sees whole; the
     * energy is the owned atoms'. */
    const int64_t offsets[2] = {0, sub->n_atoms};
    const mlff_batch batch = {1, offsets, sub->atomic_numbers, sub->positions, NULL, NULL};
    if (sub->renumbered)
        m->work.pairs.searched.valid = 0;
    const int atom_systems = r->atom_energies != NULL;
    mlff_status s = mlff_evaluate_prepare(m, &batch, sub->n_owned, sub->ghost_depth, &(mlff_plan_extras){.pair_gradients = r->atom_virials != NULL});
    if (s != MLFF_OK)
        return s;
    const size_t energy_bytes = (size_t)(atom_systems ? sub->n_owned : 1) * sizeof(double);
    double *scratch = mlff_host_array_reserve(&m->scratch, energy_bytes + (size_t)sub->n_atoms * 3 * sizeof(double), err);
    if (!scratch)
        return err->status;
    mlff_run_out o = {
        .outputs = (r->energy || r->atom_energies ? 1u << MLFF_OUTPUT_ENERGY : 0) |
                   (r->forces || r->virial ? 1u << MLFF_OUTPUT_FORCES : 0),
        .energies = r->atom_energies ? r->atom_energies : r->energy ? scratch : NULL,
        .forces = r->forces ? r->forces : r->virial ? scratch + energy_bytes / sizeof(double) : NULL,
        .atom_virials = r->atom_virials,
    };
    if (sub->n_owned == 0 || !o.outputs)
        /* Nothing counts here (a rank that owns no atoms), or nothing was asked for. */
        clear_results(&batch, &m->work, &o, atom_systems);
    else
        s = mlff_evaluate_run(m, &batch, &o, atom_systems);
    if (s != MLFF_OK)
        return s;
    if (r->energy) {
        *r->energy = 0;
        for (int64_t a = 0; o.energies && a < (atom_systems ? sub->n_owned : 1); a++)
            *r->energy += o.energies[a];
    }
    if (r->virial)
        assemble_virials(&batch, o.forces, NULL, r->virial);
    return MLFF_OK;
}
