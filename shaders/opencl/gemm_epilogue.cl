/* What follows a CLBlast GEMM (which computes out = A B only), in place:
 * LINEAR adds the bias in0 [GROUPS * GEMM_N] and applies EPILOGUE 1 (celu);
 * LINEAR_VJP with EPILOGUE 2 multiplies by celu'(y), y = in0 shaped like out. */
kernel void KNAME(KARGS)
{
    KTENSORS
    ITEM();
    TO v = outp[item];
#if VJP
    v *= CELU_DERIVATIVE(in0[item], (TO)ALPHA, ALPHA_K);
#else
    v += in0[item % (GROUPS * GEMM_N)];
#if EPILOGUE == 1
    v = v > 0 ? v : (TO)ALPHA * expm1(v / (TO)ALPHA);
#endif
#endif
    outp[item] = v;
}
