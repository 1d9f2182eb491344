/*
 * One graph and plan per set of elements that batches hold.
 *
 * The graph of all of a model's elements computes, for a batch of water,
 * the AEV columns and first-layer products of five elements that are not
 * there: zeros, at eight times the work of what is (ANI-2x: 128 of its 1008
 * AEV columns for H and O; bench/RESULTS.md). So a batch runs through the
 * graph of the elements it holds, built from the model file when first
 * needed (a few milliseconds) and kept with its plan for the batches after
 * it: an MD run, or systems of the same elements, use one. A stream of
 * systems of more element sets than a model keeps plans for would make a
 * plan at every call; there a plan of more elements serves instead (the
 * elements a batch lacks only cost their zeros), down to the plan of every
 * element. MLFF_ELEMENT_PLANS=off runs every batch through that one.
 *
 * A plan also fixes how the element networks run: separately (each on its
 * atoms) or merged (every element's on every atom, fewer launches, n
 * elements times the network work; models/ani_networks.c). Merged wins
 * where the launches it saves cost more than the work it adds: small
 * batches on a GPU (MERGED_NETWORKS_MOST_EXTRA).
 * MLFF_ELEMENT_NETWORKS=merged|separate forces either.
 */
#include <stdlib.h>
#include <string.h>

#include "../backends/common/device_cells.h"
#include "../models/ani.h"
#include "../models/model_file.h"
#include "context.h"

mlff_status mlff_model_build_graph(const mlff_model *m, const mlff_element_set *subset, int merged_networks,
                                   mlff_graph **out, mlff_error *err)
{
    const mlff_model_file *mf = m->file;
    *out = NULL;
    const char *family = mlff_model_file_meta(mf, "family");
    if (!family || strcmp(family, "ani") != 0)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "model %s: unknown model family '%s'", m->path,
                         family ? family : "(none)");
    mlff_graph *g = mlff_graph_create();
    if (!g)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    mlff_status s = mlff_ani_build_graph(mf, subset, merged_networks, g, err);
    if (s == MLFF_OK) {
        /* Forces and the cell's share of the virial, -dE/d(positions, cells), in one reverse pass. */
        int wrt[2] = {mlff_graph_input_positions(g), mlff_graph_input_cells(g)}, grads[2];
        if (mlff_graph_gradients(g, g->outputs[MLFF_OUTPUT_ENERGY], wrt, 2, -1.0, grads) == MLFF_OK) {
            mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, grads[0]);
            mlff_graph_set_output(g, MLFF_OUTPUT_CELL_FORCES, grads[1]);
        }
        if (mlff_graph_status(g) != MLFF_OK)
            s = mlff_fail(err, mlff_graph_status(g), "model %s: %s", m->path, g->error.message);
    }
    if (s != MLFF_OK) {
        mlff_graph_destroy(g);
        return s;
    }
    *out = g;
    return MLFF_OK;
}

static void plan_free(mlff_model_plan *p)
{
    mlff_plan_destroy(p->plan);
    mlff_graph_destroy(p->graph);
    memset(p, 0, sizeof *p);
}

void mlff_model_plans_free(mlff_model *m)
{
    for (int k = 0; k < MLFF_MODEL_PLANS; k++)
        plan_free(&m->plans[k]);
    m->active = NULL;
}

/* The plan for a batch of the elements in *set, with merged networks or
 * not: its own; else the slot to make it in (an empty one, else the least
 * recently used); but when that slot served within the last 2
 * MLFF_MODEL_PLANS runs (a stream of more sets than there are slots), the
 * smallest plan that holds the set, else the slot for the plan of every
 * element (*set becomes that), which holds any. */
static mlff_model_plan *choose_plan(mlff_model *m, mlff_element_set *set, int merged, int *found)
{
    mlff_model_plan *slot = NULL, *holder = NULL;
    *found = 1;
    for (int k = 0; k < MLFF_MODEL_PLANS; k++) {
        mlff_model_plan *p = &m->plans[k];
        const int same_kind = p->graph && p->merged_networks == merged;
        if (same_kind && !memcmp(&p->elements, set, sizeof *set))
            return p;
        if (same_kind && mlff_element_set_holds(&p->elements, set) &&
            (!holder || mlff_element_set_size(&p->elements) < mlff_element_set_size(&holder->elements)))
            holder = p;
        if (!slot || (slot->graph && (!p->graph || p->last_used < slot->last_used)))
            slot = p;
    }
    const int streaming = slot->graph && m->runs - slot->last_used < 2 * MLFF_MODEL_PLANS;
    if (streaming && holder)
        return holder;
    if (streaming)
        for (int e = 0; e < m->n_elements; e++)
            mlff_element_set_add(set, e);
    *found = 0;
    return slot;
}

/* Merged networks run n elements' networks on every atom: n - 1 networks
 * an atom more than separate ones, and 6 launches forward and back in all
 * instead of about 10 an element. Measured on an NVIDIA H200 (bench/RESULTS.md,
 * 2026-11-25): methane (2 elements) 0.28-0.35 -> 0.15 ms on OpenCL, 0.26 ->
 * 0.18-0.19 on Vulkan; water (2 elements) gains up to 90 atoms on both
 * backends and loses from 150 on Vulkan; 64 molecules of 4 elements (560
 * atoms) take twice as long. So a GPU merges while the extra networks,
 * (n - 1) x atoms, stay within 128. */
#define MERGED_NETWORKS_MOST_EXTRA 128

static int use_merged_networks(const mlff_model *m, const mlff_element_set *set)
{
    if (m->networks != MLFF_ELEMENT_NETWORKS_AUTO)
        return m->networks == MLFF_ELEMENT_NETWORKS_MERGED;
    const int64_t extra = (mlff_element_set_size(set) - 1) * m->work.n_atoms;
    return m->ctx->iface->is_gpu(m->ctx->backend) && extra <= MERGED_NETWORKS_MOST_EXTRA;
}

static mlff_status make_plan(mlff_model *m, mlff_model_plan *p, const mlff_element_set *set, int merged,
                             mlff_error *err)
{
    mlff_context *ctx = m->ctx;
    mlff_status s = MLFF_OK;
    if (!p->graph) {
        p->elements = *set;
        p->merged_networks = merged;
        s = mlff_model_build_graph(m, set, merged, &p->graph, err);
        ctx->stats.element_plans += s == MLFF_OK;
    }
    if (s == MLFF_OK)
        s = mlff_plan_create(p->graph, ctx->iface, ctx->backend, ctx->real, &p->plan, err);
    if (s == MLFF_OK)
        s = mlff_batch_work_fit(&m->work, p->graph, err);
    if (s != MLFF_OK) {
        plan_free(p);
        return s;
    }
    p->lists_on_device = m->device_cells && mlff_batch_device_lists_of(p->graph, &p->device_lists);
    return MLFF_OK;
}

mlff_status mlff_model_use_elements(mlff_model *m, mlff_error *err)
{
    mlff_batch_work *w = &m->work;
    mlff_element_set set;
    memset(&set, 0, sizeof set);
    for (int e = 0; e < m->n_elements; e++)
        if (m->all_elements || w->n_atoms == 0)
            mlff_element_set_add(&set, e);
    for (int64_t a = 0; a < w->n_atoms; a++)
        mlff_element_set_add(&set, w->species[a]);
    const int merged = use_merged_networks(m, &set);
    int found;
    mlff_model_plan *p = choose_plan(m, &set, merged, &found);
    if (!found)
        plan_free(p);
    if (!p->plan) {
        mlff_status s = make_plan(m, p, &set, merged, err);
        if (s != MLFF_OK)
            return s;
    }
    /* One plan holds working buffers at a time: memory stays what one
     * batch needs, whatever the number of sets. */
    if (m->active != p) {
        if (m->active)
            mlff_plan_release(m->active->plan);
        mlff_chunks_forget_plan(&m->chunks);
    }
    m->active = p;
    p->last_used = ++m->runs;
    /* The graph's elements are the plan's, numbered in the model's order. */
    int graph_element[MLFF_MAX_ATOMIC_NUMBER], n = 0;
    for (int e = 0; e < m->n_elements; e++)
        graph_element[e] = mlff_element_set_has(&p->elements, e) ? n++ : -1;
    for (int64_t a = 0; a < w->n_atoms; a++)
        w->species[a] = graph_element[w->species[a]];
    return MLFF_OK;
}

size_t mlff_model_parked_bytes(const mlff_model *m)
{
    size_t bytes = 0;
    for (int k = 0; k < MLFF_MODEL_PLANS; k++)
        if (m->plans[k].plan && &m->plans[k] != m->active)
            bytes += mlff_plan_param_bytes(m->plans[k].plan);
    return bytes;
}
