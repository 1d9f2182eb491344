/* How our GEMM kernels (linear.cl, linear_tiled.cl) store output (m, n) of
 * group g, as shaders/vulkan/gemm_store.glsl does: plus the bias for
 * LINEAR (of weight group e * GROUPS + g: e is ROW_BLOCK's run), then the
 * epilogue (EPILOGUE 1: celu; 2: times celu'(y), y = epi).
 * Put before each of them, after its #defines (the macros read them), and
 * undefined after it (backends/opencl/cl_program.c). */
#if VJP
#define GEMM_BIASED(sum, g, n) (sum)
#else
#define GEMM_BIASED(sum, g, n) ((sum) + in2[(e * GROUPS + (g)) * GEMM_N + (n)])
#endif
#if EPILOGUE == 1
#define GEMM_ACTIVATED(v, at) ((v) > 0 ? (v) : (TO)ALPHA * expm1((v) / (TO)ALPHA))
#elif EPILOGUE == 2
#define GEMM_ACTIVATED(v, at) (epi[at] > 0 ? (v) : (v) * (epi[at] / (TO)ALPHA + 1))
#else
#define GEMM_ACTIVATED(v, at) (v)
#endif
#define GEMM_STORE(g, m, n, sum)                                                \
    do {                                                                        \
        const long at_ = (long)(m) * (GROUPS * GEMM_N) + (g) * GEMM_N + (n);    \
        const TO biased_ = GEMM_BIASED(sum, g, n);                              \
        out[at_] = GEMM_ACTIVATED(biased_, at_);                                \
    } while (0)
