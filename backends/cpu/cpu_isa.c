#include "cpu_isa.h"

#include <stdatomic.h>

static cpu_isa detect(void)
{
#if CPU_ISA_X86
    /* libgcc (or compiler-rt) fills these at load, the OS's register saving included. */
    if (__builtin_cpu_supports("avx512f"))
        return CPU_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return CPU_ISA_AVX2;
#endif
    return CPU_ISA_BASELINE;
}

cpu_isa cpu_isa_best(void)
{
    /* A fact about the machine, not state: every thread that finds it
     * unknown finds the same answer. */
    static atomic_int best = -1;
    int isa = atomic_load_explicit(&best, memory_order_relaxed);
    if (isa < 0) {
        isa = (int)detect();
        atomic_store_explicit(&best, isa, memory_order_relaxed);
    }
    return (cpu_isa)isa;
}
