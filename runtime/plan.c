#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "buffer_sharing.h"
#include "core/grow.h"
#include "vectors_in_aev.h"

typedef struct plan_tensor {
    void *buffer;
    size_t capacity; /* bytes */
    /* The tensor whose buffer this one's is (buffer_sharing.h): itself, or
     * one whose life ends before this one's begins. An owner's buffer
     * takes rows of held_row_bytes, the widest row of the tensors it holds. */
    int owner;
    size_t held_row_bytes;
    int64_t rows;
    mlff_dtype dtype;   /* concrete */
    /* In the last run (see elide): the tensor whose buffer holds this one's
     * values (itself, unless it was x + 0), and whether it is all zeros
     * that no node has written yet. */
    int same_as;
    int zero;
    int source; /* when zero: the skipped node that stands for it */
    int ascending; /* mlff_graph_ascending */
    int symmetric; /* mlff_plan_set_symmetric */
    /* Batch inputs (is_batch_input) and outputs of constant nodes: the
     * plan clock when the contents last changed; a batch input's last
     * contents (its host copy as uploaded). */
    uint64_t version;
    void *last;
    size_t last_bytes, last_capacity;
} plan_tensor;

/* The nodes needed by one set of outputs, in execution order. partner[k] is
 * the node folded into nodes[k] as its epilogue, or -1 (-2 while planning:
 * folded into an earlier node). */
typedef struct node_list {
    int *nodes;
    int *partner;
    int n;
} node_list;

/* An output on its way to the host: the device's values land in raw (dst
 * itself for doubles), converted into dst when the plan waits. */
typedef struct plan_read {
    double *dst;
    void *raw;
    size_t n;
    mlff_dtype dtype;
    void *staging;
    int64_t staging_size;
} plan_read;
#define PLAN_READS 4

struct mlff_plan {
    const mlff_graph *g;
    const mlff_backend_iface *iface;
    mlff_backend *be;
    mlff_dtype real;
    plan_tensor *tensors;
    node_list runs[1 << MLFF_OUTPUT_COUNT];
    mlff_exec_node *exec;
    uint8_t *skip; /* per graph node, in the last run: not launched (elide, or reused) */
    /* Per graph node: whether it reads only parameters, batch inputs and
     * constant nodes (constant while the batch is, as in an MD loop), and
     * the clock of its last run (0: its output holds nothing reusable). */
    uint8_t *constant;
    uint64_t *ran_at;
    /* Where launches cost, per graph node: the AEV that makes its pair
     * vectors, or -1 (vectors_in_aev.h), and whether it is such an AEV;
     * else NULL. */
    int *vectors_made_in;
    uint8_t *aev_makes_vectors;
    uint64_t clock;
    uint64_t reused;
    mlff_memory_limits limits;
    void *staging; /* host conversion buffer */
    size_t staging_size;
    /* Reads asked for and not yet waited for (mlff_plan_read_later). */
    plan_read reads[PLAN_READS];
    int n_reads;
    uint64_t builds;
};

static mlff_dtype concrete(mlff_dtype d, mlff_dtype real)
{
    return d == MLFF_DTYPE_REAL ? real : d;
}

static int is_input_but_positions(const mlff_graph_tensor *gt)
{
    return gt->kind == MLFF_TENSOR_INPUT && gt->role != MLFF_INPUT_POSITIONS && gt->role != MLFF_INPUT_POSITIONS_LOW;
}

/* Inputs that stay as they are while the batch does: an MD loop moves the
 * atoms, and with them the pair lists, nothing else. */
static int is_batch_input(const mlff_graph_tensor *gt)
{
    return is_input_but_positions(gt) && gt->role != MLFF_INPUT_PAIRS && gt->role != MLFF_INPUT_PAIR_IMAGES &&
           gt->role != MLFF_INPUT_TRIPLE_STARTS && gt->role != MLFF_INPUT_TANGENTS;
}

/* Pair lists up to this size are compared with what was uploaded last, as
 * batch inputs are: a molecule's lists (all its pairs) stay the same call
 * after call, and the nodes that read them and no positions (the image
 * shifts, the angular triples) then need not run. Larger lists change with
 * almost every call, and a copy of them would only cost. */
#define PLAN_COMPARED_PAIRS_MOST_BYTES ((size_t)1 << 20)

static int compared_on_write(const mlff_graph_tensor *gt, size_t bytes)
{
    return is_batch_input(gt) || (is_input_but_positions(gt) && bytes <= PLAN_COMPARED_PAIRS_MOST_BYTES);
}

/* Nodes that read no positions, directly or through other nodes: ANI's self
 * energies, the head of its reverse pass (the seed, gathered to each
 * element's atoms and broadcast to its members), the pair lists' image
 * shifts and triples. They run again only when something they read changed
 * (tensor versions). */
static void mark_constant_nodes(mlff_plan *p)
{
    const mlff_graph *g = p->g;
    for (int k = 0; k < g->n_nodes; k++) {
        const mlff_graph_node *n = &g->nodes[k];
        int constant = 1;
        for (int j = 0; j < n->n_inputs && constant; j++) {
            const mlff_graph_tensor *in = &g->tensors[n->inputs[j]];
            const mlff_graph_node *producer = mlff_graph_producer(g, n->inputs[j]);
            constant = in->kind == MLFF_TENSOR_PARAM || is_input_but_positions(in) ||
                       (producer && p->constant[producer - g->nodes]);
        }
        p->constant[k] = (uint8_t)constant;
    }
}

static size_t tensor_bytes(const mlff_plan *p, int t)
{
    const plan_tensor *pt = &p->tensors[t];
    return (size_t)pt->rows * (size_t)p->g->tensors[t].cols * mlff_dtype_size(pt->dtype);
}

/* Liveness: the nodes that produce the wanted outputs, found backwards. */
static mlff_status collect_nodes(mlff_plan *p, unsigned outputs, node_list *list, mlff_error *err)
{
    const mlff_graph *g = p->g;
    char *needed = calloc((size_t)g->n_tensors, 1);
    list->nodes = malloc(((size_t)g->n_nodes + 1) * sizeof *list->nodes);
    list->partner = malloc(((size_t)g->n_nodes + 1) * sizeof *list->partner);
    if (!needed || !list->nodes || !list->partner) {
        free(needed);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning the graph");
    }
    for (int r = 0; r < MLFF_OUTPUT_COUNT; r++)
        if ((outputs & (1u << r)) && g->outputs[r] >= 0)
            needed[g->outputs[r]] = 1;
    int n = 0;
    for (int k = g->n_nodes - 1; k >= 0; k--) {
        const mlff_graph_node *node = &g->nodes[k];
        if (!needed[node->output])
            continue;
        list->nodes[n++] = k;
        for (int j = 0; j < node->n_inputs; j++)
            needed[node->inputs[j]] = 1;
    }
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        int tmp = list->nodes[a];
        list->nodes[a] = list->nodes[b];
        list->nodes[b] = tmp;
    }
    list->n = n;
    for (int k = 0; k < n; k++)
        list->partner[k] = -1;
    free(needed);
    return MLFF_OK;
}

/* What node b reads besides node a's output when folded into a (the CELU
 * gradient's y, the add's other term), or -1. */
static int epilogue_operand(const mlff_graph_node *a, const mlff_graph_node *b)
{
    if (b->n_inputs < 2)
        return -1;
    return b->inputs[0] == a->output ? b->inputs[1] : b->inputs[1] == a->output ? b->inputs[0] : -1;
}

/* The epilogue that node b would be as part of node a, or NONE. */
static mlff_epilogue epilogue_of(const mlff_graph *g, const mlff_graph_node *a, const mlff_graph_node *b)
{
    /* The epilogues read one block; tangents' nodes run as they are. */
    if (mlff_op_tangents(a->op, &a->attrs) > 1 || mlff_op_tangents(b->op, &b->attrs) > 1)
        return MLFF_EPILOGUE_NONE;
    if (b->n_inputs > 0 && b->inputs[0] == a->output) {
        if (a->op == MLFF_OP_LINEAR && b->op == MLFF_OP_CELU)
            return MLFF_EPILOGUE_CELU;
        if ((a->op == MLFF_OP_LINEAR_VJP || a->op == MLFF_OP_CELU_MLP_VJP) && b->op == MLFF_OP_CELU_VJP)
            return MLFF_EPILOGUE_CELU_GRAD;
    }
    const int y = epilogue_operand(a, b);
    if (b->op != MLFF_OP_ADD || y < 0 || (a->op != MLFF_OP_SCATTER_ADD_ROWS && a->op != MLFF_OP_PAIR_VECTORS_VJP))
        return MLFF_EPILOGUE_NONE;
    /* The add's terms alike: no broadcast, one type. */
    const mlff_graph_tensor *x = &g->tensors[a->output], *t = &g->tensors[y];
    return x->dtype == t->dtype && x->rows_symbol == t->rows_symbol && x->rows == t->rows && x->cols == t->cols
               ? MLFF_EPILOGUE_ADD
               : MLFF_EPILOGUE_NONE;
}

/*
 * Folds an activation (or its derivative) into the dense layer that feeds
 * it, and an add into the sum that feeds it, where that output has no other
 * reader, the backend can do it, and everything the folded node reads
 * exists by the time the first one runs.
 */
static mlff_status fuse_epilogues(mlff_plan *p, node_list *list, mlff_error *err)
{
    const mlff_graph *g = p->g;
    int *readers = calloc((size_t)g->n_tensors, sizeof *readers);
    int *made_at = malloc((size_t)g->n_tensors * sizeof *made_at);
    if (!readers || !made_at) {
        free(readers);
        free(made_at);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning the graph");
    }
    for (int t = 0; t < g->n_tensors; t++)
        made_at[t] = -1;
    for (int r = 0; r < MLFF_OUTPUT_COUNT; r++)
        if (g->outputs[r] >= 0)
            readers[g->outputs[r]]++;
    for (int k = 0; k < list->n; k++) {
        const mlff_graph_node *n = &g->nodes[list->nodes[k]];
        made_at[n->output] = k;
        for (int j = 0; j < n->n_inputs; j++)
            readers[n->inputs[j]]++;
    }
    /* First choose the partners, then drop them from the list. */
    for (int k = 0; k < list->n; k++) {
        const mlff_graph_node *a = &g->nodes[list->nodes[k]];
        if (readers[a->output] != 1 || list->partner[k] == -2)
            continue;
        for (int m = k + 1; m < list->n; m++) {
            const mlff_graph_node *b = &g->nodes[list->nodes[m]];
            int reads = 0;
            for (int j = 0; j < b->n_inputs; j++)
                reads |= b->inputs[j] == a->output;
            if (!reads)
                continue;
            const mlff_epilogue e = epilogue_of(g, a, b);
            const int y = epilogue_operand(a, b), ready = y < 0 || made_at[y] < k;
            /* A constant node is not launched while its inputs stay
             * (reusable()); with a node folded in that is not constant, it
             * would be every time (ANI's self energies and their add). */
            const int keeps_constant = !p->constant[list->nodes[k]] || p->constant[list->nodes[m]];
            if (e != MLFF_EPILOGUE_NONE && ready && keeps_constant &&
                p->iface->fuses(p->be, a->op, e, p->tensors[a->output].dtype)) {
                list->partner[k] = list->nodes[m];
                list->partner[m] = -2; /* folded away */
            }
            break;
        }
    }
    int kept = 0;
    for (int k = 0; k < list->n; k++)
        if (list->partner[k] != -2) {
            list->nodes[kept] = list->nodes[k];
            list->partner[kept] = list->partner[k];
            kept++;
        }
    list->n = kept;
    free(readers);
    free(made_at);
    return MLFF_OK;
}

/* Whether graph node `node` is an AEV that makes its pair vectors. */
static int makes_vectors(const mlff_plan *p, int node)
{
    return p->aev_makes_vectors && p->aev_makes_vectors[node];
}

/* Leaves out the PAIR_VECTORS nodes whose AEV makes their vectors. */
static void drop_vectors_made_in_aev(const mlff_plan *p, node_list *list)
{
    if (!p->vectors_made_in)
        return;
    int kept = 0;
    for (int k = 0; k < list->n; k++) {
        const int aev = p->vectors_made_in[list->nodes[k]];
        int aev_listed = 0;
        for (int m = k + 1; m < list->n && aev >= 0 && !aev_listed; m++)
            aev_listed = list->nodes[m] == aev;
        if (aev_listed)
            continue;
        list->nodes[kept] = list->nodes[k];
        list->partner[kept] = list->partner[k];
        kept++;
    }
    list->n = kept;
}

static mlff_status ensure_staging(mlff_plan *p, size_t bytes, mlff_error *err)
{
    if (bytes <= p->staging_size)
        return MLFF_OK;
    size_t size = bytes + bytes / 2;
    void *s = realloc(p->staging, size);
    if (!s)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", size);
    p->staging = s;
    p->staging_size = size;
    return MLFF_OK;
}

/* Converts n values of host dtype `from` into `to` at dst. */
static void convert(void *dst, mlff_dtype to, const void *src, mlff_dtype from, size_t n)
{
    if (to == from) {
        memcpy(dst, src, n * mlff_dtype_size(to));
        return;
    }
    for (size_t k = 0; k < n; k++) {
        double v = from == MLFF_DTYPE_F32   ? ((const float *)src)[k]
                   : from == MLFF_DTYPE_F64 ? ((const double *)src)[k]
                                            : ((const int32_t *)src)[k];
        if (to == MLFF_DTYPE_F32)
            ((float *)dst)[k] = (float)v;
        else if (to == MLFF_DTYPE_F64)
            ((double *)dst)[k] = v;
        else
            ((int32_t *)dst)[k] = (int32_t)v;
    }
}

static mlff_status write_tensor(mlff_plan *p, int tensor, mlff_dtype host_dtype, const void *data, int once,
                                mlff_error *err);

static mlff_status upload_params(mlff_plan *p, mlff_error *err)
{
    const mlff_graph *g = p->g;
    for (int t = 0; t < g->n_tensors; t++) {
        const mlff_graph_tensor *gt = &g->tensors[t];
        if (gt->kind != MLFF_TENSOR_PARAM)
            continue;
        plan_tensor *pt = &p->tensors[t];
        pt->rows = gt->rows;
        size_t bytes = tensor_bytes(p, t);
        mlff_status s = p->iface->buffer_alloc(p->be, bytes, &pt->buffer, err);
        if (s != MLFF_OK)
            return s;
        pt->capacity = bytes;
        if ((s = write_tensor(p, t, gt->host_dtype, gt->host_data, 1, err)) != MLFF_OK)
            return s;
    }
    return MLFF_OK;
}

/*
 * Which working tensors share buffers (buffer_sharing.h): those written by
 * a node of the plan's lists (not inputs or parameters), read by no one
 * after a run (not outputs, nor tensors named for tests and tools to read)
 * and kept by no one between runs (not the outputs of constant nodes,
 * which reusable() reads again), of real values with rows that follow the
 * batch. Index tensors keep their own: the GPU backends know a sorted
 * index by its buffer (backends/common/segments.h).
 */
static mlff_status share_buffers(mlff_plan *p, mlff_error *err)
{
    const mlff_graph *g = p->g;
    const size_t n = (size_t)g->n_tensors + 1;
    uint8_t *shareable = calloc(n, 1), *read_after = calloc(n, 1);
    int *written_at = malloc(n * sizeof *written_at), *owner = malloc(n * sizeof *owner);
    size_t *row_bytes = malloc(n * sizeof *row_bytes);
    mlff_status s = shareable && read_after && written_at && owner && row_bytes
                        ? MLFF_OK
                        : mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory planning the graph's buffers");
    for (int t = 0; s == MLFF_OK && t < g->n_tensors; t++) {
        written_at[t] = -1;
        row_bytes[t] = p->tensors[t].held_row_bytes;
    }
    for (int k = 0; s == MLFF_OK && k < g->n_nodes; k++) {
        const mlff_graph_node *n = &g->nodes[k];
        const mlff_graph_tensor *out = &g->tensors[n->output];
        written_at[n->output] = k;
        shareable[n->output] = out->kind == MLFF_TENSOR_INTERNAL && !p->constant[k] &&
                               out->rows_symbol != MLFF_FIXED_ROWS && p->tensors[n->output].dtype != MLFF_DTYPE_I32;
    }
    /* Read after a run, and kept in buffers of their own: the outputs and
     * the named tensors (what they may be read through lives to the run's
     * end: mlff_share_buffers). */
    for (int t = 0; s == MLFF_OK && t < g->n_tensors; t++)
        read_after[t] = g->tensors[t].name[0] != 0;
    for (int r = 0; s == MLFF_OK && r < MLFF_OUTPUT_COUNT; r++)
        if (g->outputs[r] >= 0)
            read_after[g->outputs[r]] = 1;
    for (int t = 0; s == MLFF_OK && t < g->n_tensors; t++)
        shareable[t] = shareable[t] && !read_after[t];
    /* A node folded into an earlier one writes its output there. */
    for (unsigned mask = 1; s == MLFF_OK && mask < (1u << MLFF_OUTPUT_COUNT); mask++) {
        const node_list *list = &p->runs[mask];
        for (int k = 0; k < list->n; k++) {
            const int folded = list->partner[k];
            if (folded >= 0 && written_at[g->nodes[folded].output] > list->nodes[k])
                written_at[g->nodes[folded].output] = list->nodes[k];
        }
    }
    if (s == MLFF_OK)
        s = mlff_share_buffers(g, shareable, read_after, written_at, row_bytes, owner, err);
    for (int t = 0; s == MLFF_OK && t < g->n_tensors; t++) {
        plan_tensor *pt = &p->tensors[t], *held = &p->tensors[owner[t]];
        pt->owner = owner[t];
        if (held->held_row_bytes < pt->held_row_bytes)
            held->held_row_bytes = pt->held_row_bytes;
    }
    free(shareable);
    free(read_after);
    free(written_at);
    free(owner);
    free(row_bytes);
    return s;
}

mlff_status mlff_plan_create(const mlff_graph *g, const mlff_backend_iface *iface,
                             mlff_backend *be, mlff_dtype real, mlff_plan **out, mlff_error *err)
{
    *out = NULL;
    if (!iface->supports_dtype(be, real))
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "device %s does not support %s",
                         iface->describe(be), real == MLFF_DTYPE_F64 ? "float64" : "float32");
    if (!iface->second_order && mlff_graph_second_order(g))
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "%s: second derivatives (Hessians) are not implemented on this "
                         "backend yet; use the CPU", iface->name);
    mlff_plan *p = calloc(1, sizeof *p);
    if (!p)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory creating a plan");
    p->g = g;
    p->iface = iface;
    p->be = be;
    p->real = real;
    iface->memory_limits(be, &p->limits);
    p->tensors = calloc((size_t)g->n_tensors, sizeof *p->tensors);
    p->exec = calloc((size_t)g->n_nodes + 1, sizeof *p->exec);
    p->skip = calloc((size_t)g->n_nodes + 1, 1);
    p->constant = calloc((size_t)g->n_nodes + 1, 1);
    p->ran_at = calloc((size_t)g->n_nodes + 1, sizeof *p->ran_at);
    const int vectors_in_aev = iface->launches_cost && !g->pair_vectors_apart;
    if (vectors_in_aev) {
        p->vectors_made_in = malloc(((size_t)g->n_nodes + 1) * sizeof *p->vectors_made_in);
        p->aev_makes_vectors = calloc((size_t)g->n_nodes + 1, 1);
    }
    mlff_status s = MLFF_OK;
    if (!p->tensors || !p->exec || !p->skip || !p->constant || !p->ran_at ||
        (vectors_in_aev && (!p->vectors_made_in || !p->aev_makes_vectors))) {
        s = mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory creating a plan");
    } else {
        mark_constant_nodes(p);
        if (p->vectors_made_in)
            mlff_vectors_made_in_aev(g, p->vectors_made_in);
        for (int k = 0; p->vectors_made_in && k < g->n_nodes; k++)
            if (p->vectors_made_in[k] >= 0)
                p->aev_makes_vectors[p->vectors_made_in[k]] = 1;
    }
    for (int t = 0; s == MLFF_OK && t < g->n_tensors; t++) {
        p->tensors[t].dtype = concrete(g->tensors[t].dtype, real);
        p->tensors[t].owner = t;
        p->tensors[t].held_row_bytes = (size_t)g->tensors[t].cols * mlff_dtype_size(p->tensors[t].dtype);
        p->tensors[t].same_as = t;
        p->tensors[t].ascending = mlff_graph_ascending(g, t);
    }
    for (unsigned mask = 1; s == MLFF_OK && mask < (1u << MLFF_OUTPUT_COUNT); mask++) {
        s = collect_nodes(p, mask, &p->runs[mask], err);
        if (s == MLFF_OK)
            s = fuse_epilogues(p, &p->runs[mask], err);
        if (s == MLFF_OK)
            drop_vectors_made_in_aev(p, &p->runs[mask]);
    }
    if (s == MLFF_OK)
        s = share_buffers(p, err);
    if (s == MLFF_OK)
        s = upload_params(p, err);
    if (s != MLFF_OK) {
        mlff_plan_destroy(p);
        return s;
    }
    *out = p;
    return MLFF_OK;
}

void mlff_plan_destroy(mlff_plan *p)
{
    if (!p)
        return;
    if (p->tensors)
        for (int t = 0; t < p->g->n_tensors; t++) {
            if (p->tensors[t].buffer && p->tensors[t].owner == t)
                p->iface->buffer_free(p->be, p->tensors[t].buffer);
            free(p->tensors[t].last);
        }
    for (unsigned m = 0; m < (1u << MLFF_OUTPUT_COUNT); m++) {
        free(p->runs[m].nodes);
        free(p->runs[m].partner);
    }
    free(p->tensors);
    free(p->exec);
    free(p->skip);
    free(p->constant);
    free(p->ran_at);
    free(p->vectors_made_in);
    free(p->aev_makes_vectors);
    free(p->staging);
    for (int k = 0; k < PLAN_READS; k++)
        free(p->reads[k].staging);
    free(p);
}

void mlff_plan_release(mlff_plan *p)
{
    for (int t = 0; p && t < p->g->n_tensors; t++) {
        plan_tensor *pt = &p->tensors[t];
        if (p->g->tensors[t].kind == MLFF_TENSOR_PARAM || !pt->buffer)
            continue;
        if (pt->owner == t)
            p->iface->buffer_free(p->be, pt->buffer);
        pt->buffer = NULL;
        pt->capacity = 0;
    }
}

mlff_status mlff_plan_bind(mlff_plan *p, const int64_t *symbol_values, mlff_error *err)
{
    const mlff_graph *g = p->g;
    int grew = 0;
    for (int t = 0; t < g->n_tensors; t++) {
        const mlff_graph_tensor *gt = &g->tensors[t];
        if (gt->kind == MLFF_TENSOR_PARAM)
            continue;
        plan_tensor *pt = &p->tensors[t];
        const int64_t rows = gt->rows_symbol == MLFF_FIXED_ROWS ? gt->rows : symbol_values[gt->rows_symbol];
        if (rows != pt->rows)
            pt->version = ++p->clock; /* what it held is of no use */
        pt->rows = rows;
        if (pt->owner != t)
            continue; /* in its owner's buffer, below */
        /* Never allocate zero bytes: an empty pair list is still a buffer. */
        size_t need = (size_t)rows * pt->held_row_bytes;
        if (need == 0)
            need = 16;
        if (need <= pt->capacity)
            continue;
        pt->version = ++p->clock;
        pt->last_bytes = 0;
        /* Sizes that follow the batch get headroom: in MD the pair counts
         * drift a little every step, and each step must not reallocate. */
        size_t grown = pt->capacity + pt->capacity / 2;
        size_t size = need > grown ? need : grown;
        if (gt->rows_symbol != MLFF_FIXED_ROWS)
            size = size > need + need / 4 ? size : need + need / 4;
        /* Headroom never pushes a buffer past what the device allows. */
        if (size > p->limits.max_buffer)
            size = need > p->limits.max_buffer ? need : p->limits.max_buffer;
        if (pt->buffer)
            p->iface->buffer_free(p->be, pt->buffer);
        pt->buffer = NULL;
        pt->capacity = 0;
        mlff_status s = p->iface->buffer_alloc(p->be, size, &pt->buffer, err);
        if (s != MLFF_OK)
            return s;
        pt->capacity = size;
        grew = 1;
    }
    for (int t = 0; t < g->n_tensors; t++) {
        plan_tensor *pt = &p->tensors[t];
        pt->buffer = p->tensors[pt->owner].buffer;
        pt->capacity = p->tensors[pt->owner].capacity;
    }
    p->builds += (uint64_t)grew;
    return MLFF_OK;
}

/* mlff_plan_write; `once` for a parameter's upload (buffer_upload). */
static mlff_status write_tensor(mlff_plan *p, int tensor, mlff_dtype host_dtype, const void *data, int once,
                                mlff_error *err)
{
    plan_tensor *pt = &p->tensors[tensor];
    size_t n = (size_t)pt->rows * (size_t)p->g->tensors[tensor].cols;
    if (n == 0)
        return MLFF_OK;
    const void *src = data;
    if (host_dtype != pt->dtype) {
        mlff_status s = ensure_staging(p, n * mlff_dtype_size(pt->dtype), err);
        if (s != MLFF_OK)
            return s;
        convert(p->staging, pt->dtype, data, host_dtype, n);
        src = p->staging;
    }
    const size_t bytes = n * mlff_dtype_size(pt->dtype);
    /* An input as the device holds it already: nothing to upload, and the
     * constant nodes that read it need not run again. */
    const int compared = compared_on_write(&p->g->tensors[tensor], bytes);
    if (compared && pt->last_bytes == bytes && memcmp(pt->last, src, bytes) == 0)
        return MLFF_OK;
    pt->version = ++p->clock;
    pt->last_bytes = 0;
    mlff_status s = once && p->iface->buffer_upload ? p->iface->buffer_upload(p->be, pt->buffer, src, bytes, err)
                                                    : p->iface->buffer_write(p->be, pt->buffer, 0, src, bytes, err);
    if (s != MLFF_OK || !compared) /* positions, large pair lists, or a parameter rewritten (a test's) */
        return s;
    if (bytes > pt->last_capacity) {
        /* As large as the device buffer, headroom included: pair counts
         * drift in MD, and the steady state allocates nothing. */
        const size_t capacity = pt->capacity > bytes ? pt->capacity : bytes;
        void *last = realloc(pt->last, capacity);
        if (!last)
            return MLFF_OK; /* without a copy it is uploaded every time */
        pt->last = last;
        pt->last_capacity = capacity;
    }
    memcpy(pt->last, src, bytes);
    pt->last_bytes = bytes;
    return MLFF_OK;
}

mlff_status mlff_plan_write(mlff_plan *p, int tensor, mlff_dtype host_dtype, const void *data,
                            mlff_error *err)
{
    return write_tensor(p, tensor, host_dtype, data, 0, err);
}

/* Tensor t as a kernel sees it: its shape, in the buffer that holds it. */
static mlff_exec_tensor exec_tensor(const mlff_plan *p, int t)
{
    const plan_tensor *pt = &p->tensors[t];
    return (mlff_exec_tensor){.buffer = p->tensors[pt->same_as].buffer, .dtype = pt->dtype, .rows = pt->rows,
                              .cols = p->g->tensors[t].cols, .ascending = pt->ascending, .symmetric = pt->symmetric};
}

/*
 * Nodes whose result the bound sizes already give are not launched: a
 * scatter of no rows (or of zeros) is all zeros, and x + 0 is x, which
 * later nodes then read from x's buffer. A batch without some of the
 * model's elements leaves every node of their networks empty but these,
 * about a quarter of a small molecule's launches. Exact: adding zero
 * changes no value. A skipped node stays in the list with no rows, so the
 * backends see the same kernels (one program for every batch) and launch
 * nothing for it.
 */
static int elide(mlff_plan *p, int node)
{
    const mlff_graph_node *n = &p->g->nodes[node];
    plan_tensor *out = &p->tensors[n->output];
    if (n->op == MLFF_OP_SCATTER_ADD_ROWS) {
        const plan_tensor *x = &p->tensors[p->tensors[n->inputs[0]].same_as];
        if (x->rows != 0 && !x->zero)
            return 0;
        out->zero = 1;
        out->source = node;
        return 1;
    }
    if (n->op == MLFF_OP_ADD) {
        const int a = p->tensors[n->inputs[0]].same_as, b = p->tensors[n->inputs[1]].same_as;
        if (p->tensors[a].zero || p->tensors[b].zero) {
            out->same_as = p->tensors[b].zero ? a : b;
            return 1;
        }
    }
    return 0;
}

/* Tensor t is read: the skipped scatter that stands for its zeros runs
 * after all (and so does whatever it reads). */
static void materialize(mlff_plan *p, int t)
{
    plan_tensor *held = &p->tensors[p->tensors[t].same_as];
    if (!held->zero)
        return;
    held->zero = 0;
    p->skip[held->source] = 0;
    const mlff_graph_node *n = &p->g->nodes[held->source];
    for (int j = 0; j < n->n_inputs; j++)
        materialize(p, n->inputs[j]);
}

/* A constant node (with the constant node folded into it, or -1) whose
 * inputs and output are as they were when it last ran: its output buffer
 * holds its result. */
static int reusable(const mlff_plan *p, int node, int folded)
{
    const uint64_t ran = p->ran_at[node];
    if (!ran)
        return 0;
    const int nodes[2] = {node, folded};
    for (int k = 0; k < 2 && nodes[k] >= 0; k++) {
        const mlff_graph_node *n = &p->g->nodes[nodes[k]];
        if (p->tensors[n->output].version > ran)
            return 0;
        for (int j = 0; j < n->n_inputs; j++) {
            const plan_tensor *in = &p->tensors[n->inputs[j]];
            if (k == 1 && n->inputs[j] == p->g->nodes[node].output)
                continue; /* never written: the folded node's output holds both */
            if (in->version > ran || p->tensors[in->same_as].version > ran)
                return 0;
        }
    }
    return 1;
}

/* Whether node k of a list may be reused (reusable()): constant, and so is
 * what was folded into it. */
static int constant_in_list(const mlff_plan *p, const node_list *list, int k)
{
    /* An AEV that makes its vectors reads what they are made of (and
     * reusable() does not look there): it runs every time. */
    return p->constant[list->nodes[k]] && (list->partner[k] < 0 || p->constant[list->partner[k]]) &&
           !makes_vectors(p, list->nodes[k]);
}

void mlff_plan_set_symmetric(mlff_plan *p, int tensor, int symmetric)
{
    p->tensors[tensor].symmetric = symmetric;
}

/* What AEV node n reads to make its pair vectors (vectors_in_aev.h). */
static void vector_sources(const mlff_plan *p, const mlff_graph_node *n, mlff_exec_node *e)
{
    const mlff_graph_node *angular = mlff_aev_vectors_node(p->g, n, 0), *radial = mlff_aev_vectors_node(p->g, n, 6);
    e->makes_vectors = 1;
    e->vector_sources[MLFF_VECTORS_POSITIONS] = exec_tensor(p, angular->inputs[0]);
    e->vector_sources[MLFF_VECTORS_IMAGES] = exec_tensor(p, angular->inputs[2]);
    e->vector_sources[MLFF_VECTORS_CELLS] = exec_tensor(p, angular->inputs[3]);
    e->vector_sources[MLFF_VECTORS_SYSTEM] = exec_tensor(p, angular->inputs[4]);
    e->vector_sources[MLFF_VECTORS_RADIAL_IMAGES] = exec_tensor(p, radial->inputs[2]);
    e->vector_sources[MLFF_VECTORS_POSITIONS_LOW] = exec_tensor(p, angular->inputs[5]);
    e->vector_sources[MLFF_VECTORS_CELLS_LOW] = exec_tensor(p, angular->inputs[6]);
}

mlff_status mlff_plan_run(mlff_plan *p, unsigned outputs, mlff_error *err)
{
    const mlff_graph *g = p->g;
    outputs &= (1u << MLFF_OUTPUT_COUNT) - 1;
    const node_list *list = &p->runs[outputs];
    for (int t = 0; t < g->n_tensors; t++) {
        p->tensors[t].same_as = t;
        p->tensors[t].zero = 0;
    }
    for (int k = 0; k < list->n; k++)
        p->skip[list->nodes[k]] = list->partner[k] < 0 && elide(p, list->nodes[k]);
    for (int k = 0; k < list->n; k++) {
        const mlff_graph_node *n = &g->nodes[list->nodes[k]];
        for (int j = 0; !p->skip[list->nodes[k]] && j < n->n_inputs; j++)
            materialize(p, n->inputs[j]);
        const int y = list->partner[k] >= 0 ? epilogue_operand(n, &g->nodes[list->partner[k]]) : -1;
        if (y >= 0)
            materialize(p, y);
    }
    for (int r = 0; r < MLFF_OUTPUT_COUNT; r++)
        if ((outputs >> r & 1u) && g->outputs[r] >= 0)
            materialize(p, g->outputs[r]);
    /* Constant nodes whose result is in their buffer are not launched;
     * every other node's output changes (an elided node's means something
     * else now), which the nodes after it see. */
    for (int k = 0; k < list->n; k++) {
        const int node = list->nodes[k];
        if (!p->skip[node] && constant_in_list(p, list, k) && reusable(p, node, list->partner[k])) {
            p->skip[node] = 1;
            p->reused++;
            continue;
        }
        p->tensors[g->nodes[node].output].version = ++p->clock;
        if (list->partner[k] >= 0)
            p->tensors[g->nodes[list->partner[k]].output].version = p->clock;
        if (makes_vectors(p, node)) {
            p->tensors[g->nodes[node].inputs[0]].version = p->clock;
            p->tensors[g->nodes[node].inputs[6]].version = p->clock;
        }
    }
    for (int k = 0; k < list->n; k++) {
        const mlff_graph_node *n = &g->nodes[list->nodes[k]];
        mlff_exec_node *e = &p->exec[k];
        memset(e, 0, sizeof *e);
        e->op = n->op;
        e->n_inputs = n->n_inputs;
        e->attrs = n->attrs;
        for (int j = 0; j < n->n_inputs; j++)
            e->inputs[j] = exec_tensor(p, n->inputs[j]);
        e->output = exec_tensor(p, n->output);
        if (list->partner[k] >= 0) {
            /* The folded node's output becomes this node's. */
            const mlff_graph_node *b = &g->nodes[list->partner[k]];
            const int y = epilogue_operand(n, b);
            e->epilogue = epilogue_of(g, n, b);
            e->epilogue_alpha = b->attrs.f[0];
            if (y >= 0)
                e->epilogue_input = exec_tensor(p, y);
            e->output = exec_tensor(p, b->output);
        }
        if (makes_vectors(p, list->nodes[k]))
            vector_sources(p, n, e);
        if ((n->op == MLFF_OP_LINEAR || n->op == MLFF_OP_LINEAR_VJP) && mlff_op_tangents(n->op, &n->attrs) > 1) {
            /* A dense layer's T directions are T times its rows, in the same
             * memory ([n, T*k] is [n*T, k]): every backend runs it as it is. */
            const int64_t t_count = mlff_op_tangents(n->op, &n->attrs);
            e->inputs[0].rows *= t_count;
            e->inputs[0].cols /= t_count;
            e->output.rows *= t_count;
            e->output.cols /= t_count;
            if (mlff_op_stacks(&n->attrs) == 1)
                e->attrs.i[2] = 0; /* a plain layer of more rows; stacks' runs still need to know */
        }
        if (p->skip[list->nodes[k]]) {
            /* An empty node: every backend launches and sorts nothing for it. */
            e->output.buffer = p->tensors[list->partner[k] >= 0 ? g->nodes[list->partner[k]].output : n->output].buffer;
            e->output.rows = 0;
            for (int j = 0; j < n->n_inputs; j++)
                e->inputs[j].rows = 0;
        }
    }
    mlff_status s = p->iface->compute(p->be, p->exec, list->n, err);
    if (s != MLFF_OK) {
        memset(p->ran_at, 0, (size_t)g->n_nodes * sizeof *p->ran_at);
        return s;
    }
    /* Constant nodes remember when they ran (after their inputs changed). */
    for (int k = 0; k < list->n; k++) {
        const int node = list->nodes[k];
        if (!p->skip[node])
            p->ran_at[node] = constant_in_list(p, list, k) ? ++p->clock : 0;
    }
    return MLFF_OK;
}

mlff_status mlff_plan_read_later(mlff_plan *p, int tensor, double *dst, mlff_error *err)
{
    const plan_tensor *pt = &p->tensors[tensor], *held = &p->tensors[pt->same_as];
    size_t n = (size_t)pt->rows * (size_t)p->g->tensors[tensor].cols;
    if (n == 0)
        return MLFF_OK;
    if (held->zero) {
        memset(dst, 0, n * sizeof *dst);
        return MLFF_OK;
    }
    mlff_status s = p->n_reads == PLAN_READS ? mlff_plan_wait(p, err) : MLFF_OK;
    if (s != MLFF_OK)
        return s;
    plan_read *r = &p->reads[p->n_reads];
    const size_t bytes = n * mlff_dtype_size(pt->dtype);
    r->raw = dst;
    if (pt->dtype != MLFF_DTYPE_F64) {
        if (!mlff_grow(&r->staging, &r->staging_size, (int64_t)bytes, 1))
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", bytes);
        r->raw = r->staging;
    }
    s = p->iface->buffer_read_async ? p->iface->buffer_read_async(p->be, held->buffer, 0, r->raw, bytes, err)
                                    : p->iface->buffer_read(p->be, held->buffer, 0, r->raw, bytes, err);
    if (s != MLFF_OK)
        return s;
    r->dst = dst;
    r->n = n;
    r->dtype = pt->dtype;
    p->n_reads++;
    return MLFF_OK;
}

mlff_status mlff_plan_wait(mlff_plan *p, mlff_error *err)
{
    mlff_status s = p->iface->finish ? p->iface->finish(p->be, err) : MLFF_OK;
    for (int k = 0; k < p->n_reads && s == MLFF_OK; k++) {
        const plan_read *r = &p->reads[k];
        if (r->raw != r->dst)
            convert(r->dst, MLFF_DTYPE_F64, r->raw, r->dtype, r->n);
    }
    p->n_reads = 0;
    return s;
}

mlff_status mlff_plan_read(mlff_plan *p, int tensor, double *dst, mlff_error *err)
{
    mlff_status s = mlff_plan_read_later(p, tensor, dst, err);
    return s == MLFF_OK ? mlff_plan_wait(p, err) : s;
}

int64_t mlff_plan_rows(const mlff_plan *p, int tensor)
{
    return p->tensors[tensor].rows;
}

void *mlff_plan_input_to_fill(mlff_plan *p, int tensor)
{
    plan_tensor *pt = &p->tensors[tensor];
    pt->version = ++p->clock;
    pt->last_bytes = 0;
    return pt->buffer;
}

uint64_t mlff_plan_builds(const mlff_plan *p)
{
    return p->builds;
}

uint64_t mlff_plan_reused(const mlff_plan *p)
{
    return p->reused;
}

int mlff_plan_nodes(const mlff_plan *p, unsigned outputs)
{
    return p->runs[outputs & ((1u << MLFF_OUTPUT_COUNT) - 1)].n;
}

int mlff_plan_nodes_of(const mlff_plan *p, unsigned outputs, mlff_op op)
{
    const node_list *run = &p->runs[outputs & ((1u << MLFF_OUTPUT_COUNT) - 1)];
    int n = 0;
    for (int k = 0; k < run->n; k++)
        n += p->g->nodes[run->nodes[k]].op == op;
    return n;
}

void mlff_plan_row_bytes(const mlff_plan *p, int symbol, size_t *total, size_t *widest)
{
    *total = *widest = 0;
    for (int t = 0; t < p->g->n_tensors; t++) {
        const mlff_graph_tensor *gt = &p->g->tensors[t];
        if (gt->kind == MLFF_TENSOR_PARAM || gt->rows_symbol != symbol || p->tensors[t].owner != t)
            continue;
        const size_t row = p->tensors[t].held_row_bytes;
        *total += row;
        if (row > *widest)
            *widest = row;
    }
}

size_t mlff_plan_param_bytes(const mlff_plan *p)
{
    size_t bytes = 0;
    for (int t = 0; t < p->g->n_tensors; t++)
        if (p->g->tensors[t].kind == MLFF_TENSOR_PARAM)
            bytes += p->tensors[t].capacity;
    return bytes;
}
