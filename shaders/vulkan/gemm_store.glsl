/* How every GEMM shader (linear.comp, linear_subgroup.comp) stores output
 * (m, n) of group g: plus the bias for LINEAR (of the weights' group wg),
 * then the epilogue (EPILOGUE 1: celu; 2: times celu'(y), y = epi). */
#if EPILOGUE == 2 && !defined(EPI)
#error "EPILOGUE 2 reads epi: define EPI"
#endif

void gemm_store(uint g, uint wg, uint m, uint n, TO sum)
{
    const uint at = m * (GROUPS * GEMM_N) + g * GEMM_N + n;
#if !VJP
    sum += TO(in2[wg * GEMM_N + n]);
#endif
#if EPILOGUE == 1
    sum = sum > 0 ? sum : TO(ALPHA) * expm1_(sum / TO(ALPHA));
#elif EPILOGUE == 2
    sum = epi[at] > 0 ? sum : sum * (epi[at] / TO(ALPHA) + 1);
#endif
    outp[at] = sum;
}
