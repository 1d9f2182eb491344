/*
 * CPU kernels of the message-passing ops (core/ops.h: UNARY, GATHER_COLS,
 * SCATTER_ADD_COLS, AFFINE_COLS). A template as cpu_kernels_tmpl.h, included
 * from cpu_kernels.c once per real type; the functions are evaluated in
 * double (the reference) and rounded once.
 */

KERNEL(unary)
{
    UNUSED_ARGS;
    const int64_t total = n->output.rows * n->output.cols;
    const mlff_unary_kind kind = (mlff_unary_kind)n->attrs.i[0];
    const double f = n->attrs.f[0], p = n->attrs.f[1];
    const real *x = IN(0);
    real *y = OUT;
    for (int64_t k = 0; k < total; k++)
        y[k] = (real)(f * cpu_unary((double)x[k], kind, p));
    return MLFF_OK;
}

KERNEL(gather_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows, m = n->inputs[1].rows;
    const int64_t k = n->inputs[0].cols / t_count;
    const int32_t *map = IDX(1);
    const real *x = IN(0);
    real *y = OUT;
    for (int64_t r = 0; r < rows * t_count; r++)
        for (int64_t c = 0; c < m; c++)
            y[r * m + c] = x[r * k + map[c]];
    return MLFF_OK;
}

KERNEL(scatter_add_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows, m = n->inputs[1].rows, k = n->attrs.i[1];
    const int32_t *map = IDX(1);
    const real *x = IN(0);
    real *y = OUT;
    for (int64_t r = 0; r < rows * t_count; r++) {
        for (int64_t c = 0; c < k; c++)
            y[r * k + c] = 0;
        for (int64_t c = 0; c < m; c++)
            y[r * k + map[c]] += x[r * m + c];
    }
    return MLFF_OK;
}

KERNEL(affine_cols)
{
    UNUSED_ARGS;
    const int64_t t_count = TANGENTS, rows = n->output.rows, k = n->inputs[1].cols;
    const real *x = IN(0), *s = IN(1), *t = n->n_inputs > 2 ? IN(2) : NULL;
    real *y = OUT;
    for (int64_t r = 0; r < rows * t_count; r++)
        for (int64_t c = 0; c < k; c++)
            y[r * k + c] = t ? x[r * k + c] * s[c] + t[c] : x[r * k + c] * s[c];
    return MLFF_OK;
}
