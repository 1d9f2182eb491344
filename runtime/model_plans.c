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
 * element. The record's element_plans=off runs every batch through that one.
 *
 * A plan also fixes the form of its graph, which the model's family chooses
 * by device and batch size (mlff_model_family.plan_form; ANI: how its
 * element networks run) from the device's tuning record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_cells.h"
#include "models/model_file.h"
#include "context.h"

/* Whether the reverse pass keeps ANI's radial pair gradients apart
 * (mlff_graph): unless the device's launches cost (and before it is known). */
static int radial_gradients_apart(const mlff_model *m)
{
    return !m->ctx || !m->ctx->iface->launches_cost;
}

/* The node of op that reads pair list t as its input `slot`, or -1. */
static int node_reading(const mlff_graph *g, mlff_op op, int slot, int t)
{
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k].op == op && g->nodes[k].inputs[slot] == t)
            return k;
    return -1;
}

/* The vectors of each pair list (the PAIR_VECTORS that read it), in the
 * order of the lists; their count, or -1 when there are too many. A graph
 * that makes r_ij = x_j - x_i + shift_ij itself (the graph family) has no
 * PAIR_VECTORS: its PAIR_SHIFTS stand in, as dE/d(shift_ij) = dE/d(r_ij). */
static int pair_vector_tensors(const mlff_graph *g, int *vectors, int *lists)
{
    int n = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        if (g->tensors[t].kind != MLFF_TENSOR_INPUT || g->tensors[t].role != MLFF_INPUT_PAIRS)
            continue;
        int k = node_reading(g, MLFF_OP_PAIR_VECTORS, 1, t);
        if (k < 0)
            k = node_reading(g, MLFF_OP_PAIR_SHIFTS, 2, t);
        if (k < 0)
            continue;
        if (n == MLFF_MAX_GRADIENT_LISTS)
            return -1;
        lists[n] = t;
        vectors[n++] = g->nodes[k].output;
    }
    return n;
}

/* The reverse pass: forces and the cell's share of the virial,
 * -dE/d(positions, cells), and with pair_gradients -dE/d(r_ij) of every
 * pair list's vectors too, in one pass; with tangents, the tangent pass
 * over it: the forces' tangent along T directions of the positions. */
static void add_derivatives(mlff_graph *g, int pair_gradients, int64_t tangents)
{
    int wrt[2 + MLFF_MAX_GRADIENT_LISTS] = {mlff_graph_input_positions(g), mlff_graph_input_cells(g)};
    int grads[2 + MLFF_MAX_GRADIENT_LISTS], lists[MLFF_MAX_GRADIENT_LISTS];
    const int n_lists = pair_gradients ? pair_vector_tensors(g, wrt + 2, lists) : 0;
    if (n_lists < 0) {
        mlff_graph_fail(g, MLFF_ERROR_UNSUPPORTED, "per-atom virials of more than %d pair lists",
                        MLFF_MAX_GRADIENT_LISTS);
        return;
    }
    if (mlff_graph_gradients(g, g->outputs[MLFF_OUTPUT_ENERGY], wrt, 2 + n_lists, -1.0, grads) != MLFF_OK)
        return;
    mlff_graph_set_output(g, MLFF_OUTPUT_FORCES, grads[0]);
    mlff_graph_set_output(g, MLFF_OUTPUT_CELL_FORCES, grads[1]);
    for (int l = 0; l < n_lists; l++) {
        mlff_graph_set_output(g, (mlff_output_role)(MLFF_OUTPUT_PAIR_GRADIENTS + l), grads[2 + l]);
        g->gradient_pairs[l] = lists[l];
    }
    if (tangents > 0) {
        const int positions = wrt[0], seed = mlff_graph_input_tangents(g, tangents);
        int force_tangents;
        if (mlff_graph_tangents(g, tangents, &positions, &seed, 1, &grads[0], 1, &force_tangents) == MLFF_OK)
            mlff_graph_set_output(g, MLFF_OUTPUT_FORCE_TANGENTS, force_tangents);
    }
}

mlff_status mlff_model_build_graph(const mlff_model *m, const mlff_element_set *subset, int form,
                                   const mlff_plan_extras *extras, mlff_graph **out, mlff_error *err)
{
    *out = NULL;
    mlff_graph *g = mlff_graph_create();
    if (!g)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory");
    g->radial_gradients_apart = radial_gradients_apart(m);
    const mlff_graph_request request = {subset, form};
    mlff_status s = m->family->build_graph(m->file, &request, g, err);
    if (s != MLFF_OK) {
        /* The family names the tensor; the file is named here. */
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        mlff_fail(err, s, "model %s: %s", m->path, why);
    } else {
        add_derivatives(g, extras->pair_gradients, extras->tangents);
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

/* The plan for a batch of the elements in *set, its graph of the given
 * form: its own; else the slot to make it in (an empty one, else
 * the least recently used); but when that slot served within the last 2
 * MLFF_MODEL_PLANS runs (a stream of more sets than there are slots), the
 * smallest plan that holds the set, else the slot for the plan of every
 * element (*set becomes that), which holds any. */
/* Field by field: a struct's padding bytes are anyone's (clang left stack
 * garbage in a compound literal's, and every call then built a new plan). */
static int same_extras(const mlff_plan_extras *a, const mlff_plan_extras *b)
{
    return a->pair_gradients == b->pair_gradients && a->tangents == b->tangents;
}

static mlff_model_plan *choose_plan(mlff_model *m, mlff_element_set *set, int form, const mlff_plan_extras *extras,
                                    int *found)
{
    mlff_model_plan *slot = NULL, *holder = NULL;
    *found = 1;
    for (int k = 0; k < MLFF_MODEL_PLANS; k++) {
        mlff_model_plan *p = &m->plans[k];
        const int same_kind = p->graph && p->form == form && same_extras(&p->extras, extras);
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

/* The form of the graph for the batch in m->work: the family's choice. */
static int choose_form(const mlff_model *m, const mlff_element_set *set)
{
    const mlff_context *ctx = m->ctx;
    if (!m->family->plan_form)
        return m->family->default_form;
    return m->family->plan_form(mlff_element_set_size(set), m->work.n_atoms, &ctx->tuning);
}

/* The tuning record's pair_vectors as the plan takes it (mlff_graph). */
static int pair_vectors_apart(const mlff_model *m)
{
    return m->ctx->tuning.pair_vectors == MLFF_PAIR_VECTORS_APART;
}

static mlff_status make_plan(mlff_model *m, mlff_model_plan *p, const mlff_element_set *set, int form,
                             const mlff_plan_extras *extras, mlff_error *err)
{
    mlff_context *ctx = m->ctx;
    mlff_status s = MLFF_OK;
    if (p->graph && p->graph->radial_gradients_apart != radial_gradients_apart(m)) {
        /* The graph of every element, read before the device was known
         * (mlff_model_read): made again for this one. */
        mlff_graph_destroy(p->graph);
        p->graph = NULL;
        s = mlff_model_build_graph(m, &p->elements, p->form, &p->extras, &p->graph, err);
    }
    if (s == MLFF_OK && !p->graph) {
        p->elements = *set;
        p->form = form;
        p->extras = *extras;
        s = mlff_model_build_graph(m, set, form, extras, &p->graph, err);
        ctx->stats.element_plans += s == MLFF_OK;
    }
    if (s == MLFF_OK) {
        p->graph->pair_vectors_apart = pair_vectors_apart(m);
        s = mlff_plan_create(p->graph, ctx->iface, ctx->backend, ctx->real, &p->plan, err);
    }
    if (s == MLFF_OK)
        s = mlff_batch_work_fit(&m->work, p->graph, err);
    if (s != MLFF_OK) {
        plan_free(p);
        return s;
    }
    p->lists_on_device = m->device_cells && mlff_batch_device_lists_of(p->graph, &p->device_lists);
    return MLFF_OK;
}

mlff_status mlff_model_use_elements(mlff_model *m, const mlff_plan_extras *extras, mlff_error *err)
{
    mlff_batch_work *w = &m->work;
    mlff_element_set set;
    memset(&set, 0, sizeof set);
    for (int e = 0; e < m->n_elements; e++)
        if (!m->ctx->tuning.element_plans || w->n_atoms == 0)
            mlff_element_set_add(&set, e);
    for (int64_t a = 0; a < w->n_atoms; a++)
        mlff_element_set_add(&set, w->species[a]);
    const int form = choose_form(m, &set);
    int found;
    mlff_model_plan *p = choose_plan(m, &set, form, extras, &found);
    if (!found)
        plan_free(p);
    /* The context's record changed its pair_vectors since (mlff tune): the
     * graph stays, its plan is made again. */
    const int remade = p->plan && p->graph->pair_vectors_apart != pair_vectors_apart(m);
    if (remade) {
        mlff_plan_destroy(p->plan);
        p->plan = NULL;
    }
    if (!p->plan) {
        mlff_status s = make_plan(m, p, &set, form, extras, err);
        if (s != MLFF_OK)
            return s;
    }
    /* One plan holds working buffers at a time: memory stays what one
     * batch needs, whatever the number of sets. */
    if (m->active != p || !found || remade) {
        if (m->active && m->active != p)
            mlff_plan_release(m->active->plan);
        mlff_chunks_forget_plan(&m->chunks);
        m->device_searched.valid = 0; /* the lists were in the buffers of the plan before */
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
