/* Weights transposed per group, as words of 4 or 8 bytes (no fp64 needed
 * to move doubles): in [groups * k_rows, n_cols] row-major becomes out
 * [groups * n_cols, k_rows], block g of out being block g of in transposed.
 * Our GEMMs' reverse pass (linear_rows.kernel, linear_tiled.kernel) and
 * CELU_MLP (celu_mlp.cl) read W this way, along its rows. */
#define TRANSPOSE(NAME, WORD)                                                                     \
    kernel void NAME(global WORD *out, global const WORD *in, const int k_rows, const int n_cols, \
                     const long total)                                                           \
    {                                                                                             \
        const long e = get_global_id(0);                                                          \
        if (e >= total)                                                                           \
            return;                                                                               \
        const long block = (long)k_rows * n_cols, g = e / block, n = e % block / k_rows,          \
                   k = e % k_rows;                                                                \
        out[e] = in[(g * k_rows + k) * n_cols + n];                                               \
    }
TRANSPOSE(transpose_words4, uint)
TRANSPOSE(transpose_words8, ulong)
