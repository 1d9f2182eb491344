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
        for (int r = 0; r < MLP_ROWS; r++)                                                            \
            part[r * MLP_THREADS + t] = acc[r];                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                 \
        for (int k = t; k < MLP_ROWS * (N); k += MLP_THREADS) {                                       \
            const int r = k / (N), s = k % (N);                                                       \
            TO total = 0;                                                                             \
            for (int l = 0; l < (LANES); l++)                                                         \
                total += part[r * MLP_THREADS + l * (N) + s];                                         \
            FINISH(r, s, total, N, P, BLOCK, HIDDEN)                                                  \
        }                                                                                             \
    }
