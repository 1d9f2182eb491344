#include "buffer_sharing.h"

#include <stdlib.h>

#include "core/counting_sort.h"

typedef struct shared_buffer {
    int owner;        /* the first tensor it held: the plan allocates it under that tensor */
    int symbol;
    size_t row_bytes; /* the widest row of the tensors it holds */
    int free_after;   /* the last node that reads what it holds now */
} shared_buffer;

/* The last node that may read each tensor (its first write when none does;
 * past the last node when it is read after a run). */
static void last_reads(const mlff_graph *g, const uint8_t *read_after, const int *written_at, int *last)
{
    for (int t = 0; t < g->n_tensors; t++)
        last[t] = read_after[t] ? g->n_nodes : written_at[t];
    for (int k = 0; k < g->n_nodes; k++)
        for (int j = 0; j < g->nodes[k].n_inputs; j++)
            if (last[g->nodes[k].inputs[j]] < k)
                last[g->nodes[k].inputs[j]] = k;
    /* x + 0 elided: the add's readers read a term. Backwards, so that
     * chains of adds reach their first term. */
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        const mlff_graph_node *n = &g->nodes[k];
        if (n->op != MLFF_OP_ADD)
            continue;
        for (int j = 0; j < n->n_inputs; j++)
            if (last[n->inputs[j]] < last[n->output])
                last[n->inputs[j]] = last[n->output];
    }
}

/* Of the buffers free before node `at` with rows of `symbol`: the
 * narrowest at least `row_bytes` wide, else the widest; -1 if none. */
static int buffer_to_reuse(const shared_buffer *b, int n, int symbol, size_t row_bytes, int at)
{
    int fits = -1, widest = -1;
    for (int k = 0; k < n; k++) {
        if (b[k].symbol != symbol || b[k].free_after >= at)
            continue;
        if (b[k].row_bytes >= row_bytes && (fits < 0 || b[k].row_bytes < b[fits].row_bytes))
            fits = k;
        if (widest < 0 || b[k].row_bytes > b[widest].row_bytes)
            widest = k;
    }
    return fits >= 0 ? fits : widest;
}

mlff_status mlff_share_buffers(const mlff_graph *g, const uint8_t *shareable, const uint8_t *read_after,
                               const int *written_at, const size_t *row_bytes, int *owner, mlff_error *err)
{
    const size_t n = (size_t)g->n_tensors + 1;
    /* The shareable tensors by first write (a stable counting sort; the
     * others under a key after every node's). */
    int32_t *keys = malloc(n * sizeof *keys), *starts = malloc(((size_t)g->n_nodes + 2) * sizeof *starts);
    int32_t *order = malloc(n * sizeof *order);
    int *last = malloc(n * sizeof *last);
    shared_buffer *buffers = malloc(n * sizeof *buffers);
    mlff_status s = keys && starts && order && last && buffers
                        ? MLFF_OK
                        : mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning the graph's buffers");
    for (int t = 0; t < g->n_tensors; t++)
        owner[t] = t;
    if (s == MLFF_OK) {
        last_reads(g, read_after, written_at, last);
        for (int t = 0; t < g->n_tensors; t++)
            keys[t] = shareable[t] ? written_at[t] : g->n_nodes;
        mlff_counting_sort(keys, 1, g->n_tensors, g->n_nodes + 1, starts, order);
        int n_buffers = 0;
        for (int k = 0; k < starts[g->n_nodes]; k++) {
            const int t = order[k], symbol = g->tensors[t].rows_symbol;
            int b = buffer_to_reuse(buffers, n_buffers, symbol, row_bytes[t], written_at[t]);
            if (b < 0) {
                b = n_buffers++;
                buffers[b] = (shared_buffer){.owner = t, .symbol = symbol, .row_bytes = 0};
            }
            owner[t] = buffers[b].owner;
            if (buffers[b].row_bytes < row_bytes[t])
                buffers[b].row_bytes = row_bytes[t];
            buffers[b].free_after = last[t];
        }
    }
    free(keys);
    free(starts);
    free(order);
    free(last);
    free(buffers);
    return s;
}
