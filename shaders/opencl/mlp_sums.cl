/* The sums of celu_mlp.cl and celu_mlp_vjp.cl (backends/common/lowering.h),
 * put after the kernel's #define CHUNK and undefined after it
 * (backends/opencl/cl_program.c).
 * MLP_SUM: acc[r] += the sum over this item's slice of c < K of M[c * N] *
 * V[r * MLP_STRIDE + c], for the rows r < rows. M points at this item's
 * column of a [K, N] matrix in global memory (neighbouring items,
 * neighbouring words; int offsets from it, which take fewer registers than
 * long ones), V at MLP_ROWS rows in local memory, read four words at a
 * time. Lane `lane` of LANES takes the slice from lane * MLP_SLICE(K, LANES)
 * (whole TO4 words); CHUNK loads are issued before any is used. Words past
 * the slice meet zero weights. */
#define MLP_SLICE(K, LANES) ((((K) + (LANES)-1) / (LANES) + 3) / 4 * 4)
#define MLP_SUM(M, K, N, LANES, V, lane, acc)                                                         \
    {                                                                                                 \
        const int c_begin = (lane)*MLP_SLICE(K, LANES), c_end = min(c_begin + MLP_SLICE(K, LANES), (K)); \
        for (int c0 = c_begin; c0 < c_end; c0 += CHUNK) {                                             \
            TO wv[CHUNK];                                                                             \
            _Pragma("unroll") for (int j = 0; j < CHUNK; j++)                                         \
                wv[j] = c0 + j < c_end ? (M)[(c0 + j) * (N)] : (TO)0;                                 \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                if (r < rows)                                                                         \
                    _Pragma("unroll") for (int j = 0; j < CHUNK; j += 4)                              \
                        if (c0 + j < c_end) {                                                         \
                            const TO4 v = *(local const TO4 *)((V) + r * MLP_STRIDE + c0 + j);        \
                            acc[r] += wv[j] * v.x + wv[j + 1] * v.y + wv[j + 2] * v.z + wv[j + 3] * v.w; \
                        }                                                                             \
        }                                                                                             \
    }
/* Partial sum i of row r: in part, or without it (MLP_PARTS 0: the last
 * layer of the forward pass in the narrow and half forms, lowering.c) in
 * the rows of the layer's input V, which nothing reads after that layer,
 * once every item is done with them (LANES * N <= MLP_STRIDE). */
#if MLP_PARTS
#define MLP_PART(V, r, i) part[(r)*MLP_THREADS + (i)]
#else
#define MLP_PART(V, r, i) (V)[(r)*MLP_STRIDE + (i)]
#endif
/* The N sums of a layer for every row: sum s over column s of M (K
 * terms), by LANES items each (items t = lane * N + s; LANES * N <= MLP_THREADS
 * where LANES > 1, whose partial sums are added in lane order), each total
 * handed to FINISH(r, s, total, N, P, BLOCK, HIDDEN) (no variadic macros:
 * OpenCL C 1.2 has none, and NVIDIA's compiler holds to it). */
#define MLP_SUMS(M, K, N, LANES, V, FINISH, P, BLOCK, HIDDEN)                                         \
    if ((LANES) == 1) {                                                                               \
        for (int s = t; s < (N); s += MLP_THREADS) {                                                  \
            TO acc[MLP_ROWS];                                                                         \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                acc[r] = 0;                                                                           \
            MLP_SUM((M) + s, K, N, 1, V, 0, acc)                                                      \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                FINISH(r, s, acc[r], N, P, BLOCK, HIDDEN)                                             \
        }                                                                                             \
    } else {                                                                                          \
        const int lane = t / (N);                                                                     \
        TO acc[MLP_ROWS];                                                                             \
        for (int r = 0; r < MLP_ROWS; r++)                                                            \
            acc[r] = 0;                                                                               \
        if (lane < (LANES))                                                                           \
            MLP_SUM((M) + t % (N), K, N, LANES, V, lane, acc)                                         \
        if (!MLP_PARTS)                                                                               \
            barrier(CLK_LOCAL_MEM_FENCE); /* every item done with V, where the sums go */              \
        if (t < (LANES) * (N))                                                                        \
            for (int r = 0; r < MLP_ROWS; r++)                                                        \
                MLP_PART(V, r, t) = acc[r];                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        for (int k = t; k < MLP_ROWS * (N); k += MLP_THREADS) {                                       \
            const int r = k / (N), s = k % (N);                                                       \
            TO total = 0;                                                                             \
            for (int l = 0; l < (LANES); l++)                                                         \
                total += MLP_PART(V, r, l * (N) + s);                                                 \
            FINISH(r, s, total, N, P, BLOCK, HIDDEN)                                                  \
        }                                                                                             \
    }
