/* ROW_BLOCK(b, block_rows) in the dense kernels (linear.cl, linear_tiled.cl,
 * celu_mlp.cl, celu_mlp_vjp.cl): declares e, the run of row block b (0
 * without stacks; its weights are group e * GROUPS + g), and m0, m_end, the
 * block's rows; with stacks, a block past the last run returns (the whole
 * work-group, before any barrier). Put before each of them, after its
 * #defines, and undefined after it (backends/opencl/cl_program.c). */
#if STACKS > 1
#define ROW_BLOCK(b, block_rows)                                                    \
    int e = 0;                                                                      \
    long m0 = 0, m_end = 0;                                                         \
    if (!stacked_block(STARTS, STACKS, (b), (block_rows), &e, &m0, &m_end))         \
    return
#else
#define ROW_BLOCK(b, block_rows)                                                    \
    const int e = 0;                                                                \
    const long m0 = (long)(b) * (block_rows), m_end = min(m0 + (block_rows), (long)n_items)
#endif
