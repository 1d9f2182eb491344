#include "vectors_in_aev.h"

const mlff_graph_node *mlff_aev_vectors_node(const mlff_graph *g, const mlff_graph_node *aev, int input)
{
    const mlff_graph_node *n = mlff_graph_producer(g, aev->inputs[input]);
    return n && n->op == MLFF_OP_PAIR_VECTORS && n->n_inputs == 7 ? n : NULL;
}

/* Whether every reader of tensor t but the AEV (node a) comes after it,
 * and, for the angular list (`in_triples`), reads only the vectors of the
 * pairs in triples: an angular gradient of pair_triples (core/ops.h). The
 * AEV's group of a center finds its angular pairs through the center's
 * triples, so the vector of a center's only angular pair is not written. */
static int read_after(const mlff_graph *g, int t, int a, int in_triples)
{
    for (int k = 0; k < g->n_nodes; k++) {
        const mlff_graph_node *n = &g->nodes[k];
        for (int j = 0; j < n->n_inputs && k != a; j++) {
            if (n->inputs[j] != t)
                continue;
            const int of_triples = n->op == MLFF_OP_ANI_ANGULAR_VJP && j == 1 && n->attrs.i[1] &&
                                   n->inputs[2] == g->nodes[a].inputs[1];
            if (k < a || (in_triples && !of_triples))
                return 0;
        }
    }
    return 1;
}

void mlff_vectors_made_in_aev(const mlff_graph *g, int *made_in)
{
    for (int k = 0; k < g->n_nodes; k++)
        made_in[k] = -1;
    for (int k = 0; k < g->n_nodes; k++) {
        const mlff_graph_node *a = &g->nodes[k];
        if (a->op != MLFF_OP_ANI_ANGULAR || !mlff_angular_has_radial(a->n_inputs) ||
            !mlff_graph_pair_triples_of(g, a->inputs[2], a->inputs[1]))
            continue;
        const mlff_graph_node *angular = mlff_aev_vectors_node(g, a, 0), *radial = mlff_aev_vectors_node(g, a, 6);
        /* pair_vectors of images: (positions, pairs, images, cells, system, their low parts) */
        if (!angular || !radial || angular == radial || angular->inputs[1] != a->inputs[1] ||
            radial->inputs[1] != a->inputs[7] || angular->inputs[0] != radial->inputs[0] ||
            angular->inputs[3] != radial->inputs[3] || angular->inputs[4] != radial->inputs[4] ||
            angular->inputs[5] != radial->inputs[5] || angular->inputs[6] != radial->inputs[6] ||
            !read_after(g, a->inputs[0], k, 1) || !read_after(g, a->inputs[6], k, 0))
            continue;
        made_in[angular - g->nodes] = made_in[radial - g->nodes] = k;
    }
}
