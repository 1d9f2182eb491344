/* How every GEMM shader (linear.comp, linear_subgroup.comp) stores output
 * (m, n) of group g: plus the bias for LINEAR (of the weights' group wg),
 * then the epilogue (EPILOGUE 1: celu; 2: times celu'(y), y = epi). Rows
 * are C_LD words apart from column C_COL, epi's EPI_LD from EPI_COL:
 * packed (GROUPS * GEMM_N and 0) but for the layers of a CELU_MLP
 * (lowering.h). */
#if EPILOGUE == 2 && !defined(EPI)
#error "EPILOGUE 2 reads epi: define EPI"
#endif

void gemm_store(uint g, uint wg, uint m, uint n, TO sum)
{
    const uint at = m * C_LD + C_COL + g * GEMM_N + n;
#if !VJP
    sum += TO(in2[wg * GEMM_N + n]);
#endif
#if EPILOGUE == 1
    sum = sum > 0 ? sum : TO(ALPHA) * expm1_(sum / TO(ALPHA));
#elif EPILOGUE == 2
    const TO y = epi[m * EPI_LD + EPI_COL + g * GEMM_N + n];
    sum = y > 0 ? sum : sum * (y / TO(ALPHA) + 1);
#endif
    outp[at] = sum;
}
