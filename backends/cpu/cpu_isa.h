/*
 * Hot CPU kernels compiled for AVX-512, AVX2 and the baseline, one of them
 * chosen by the processor at run time.
 *
 * GCC's target_clones did this, but clang 14 and 15 cannot link a
 * target_clones function called from another file (the caller refers to
 * the plain name, clang emits only the mangled ifunc), and clang's
 * resolver tests "arch=x86-64-v3" as a CPU model, not as features, so an
 * AVX2 machine would run the baseline. Here each kernel's body is an
 * always_inline function that CPU_MULTIVERSION inlines into three copies,
 * each compiled with its own target attribute (the vectoriser runs after
 * inlining, so every copy gets its ISA's vectors), and a dispatcher that
 * picks the copy by cpu_isa_best(): the same three code paths on both
 * compilers.
 */
#ifndef MLFF_BACKENDS_CPU_ISA_H
#define MLFF_BACKENDS_CPU_ISA_H

typedef enum cpu_isa {
    CPU_ISA_BASELINE = 0,
    CPU_ISA_AVX2 = 1,   /* AVX2 and FMA */
    CPU_ISA_AVX512 = 2, /* AVX-512F */
} cpu_isa;

/* The best of the above this processor runs; detected at its first call. */
cpu_isa cpu_isa_best(void);

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define CPU_ISA_X86 1
#define CPU_TARGET_AVX512 __attribute__((target("avx512f")))
/* "arch=x86-64-v3" as target_clones had it would also allow BMI, MOVBE and
 * LZCNT, which float loops never use, and clang cannot test for it. */
#define CPU_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else
#define CPU_ISA_X86 0
#endif

/* GCC's -O2 vectorises only the cheapest loops: these kernels are worth its
 * full vectoriser. Clang's -O2 runs its full loop vectoriser already (and
 * knows neither the attribute nor GCC's ivdep, for which restrict stands). */
#if defined(__clang__)
#define CPU_OPTIMIZE
#define CPU_IVDEP
#else
#define CPU_OPTIMIZE __attribute__((optimize("O3")))
#define CPU_IVDEP _Pragma("GCC ivdep")
#endif

#define CPU_BODY static inline __attribute__((always_inline))

/*
 * NAME##_body (a CPU_BODY function taking PARAMS) compiled per ISA, and
 * NAME (with LINKAGE: static, or empty for an external function) calling
 * the best. ARGS names PARAMS' parameters in order, in parentheses.
 */
#if CPU_ISA_X86
#define CPU_MULTIVERSION(LINKAGE, NAME, PARAMS, ARGS)                                                            \
    CPU_TARGET_AVX512 CPU_OPTIMIZE static void NAME##_avx512 PARAMS { NAME##_body ARGS; }                     \
    CPU_TARGET_AVX2 CPU_OPTIMIZE static void NAME##_avx2 PARAMS { NAME##_body ARGS; }                         \
    CPU_OPTIMIZE static void NAME##_baseline PARAMS { NAME##_body ARGS; }                                     \
    LINKAGE void NAME PARAMS                                                                                  \
    {                                                                                                         \
        switch (cpu_isa_best()) {                                                                             \
        case CPU_ISA_AVX512: NAME##_avx512 ARGS; return;                                                      \
        case CPU_ISA_AVX2: NAME##_avx2 ARGS; return;                                                          \
        case CPU_ISA_BASELINE: break;                                                                         \
        }                                                                                                     \
        NAME##_baseline ARGS;                                                                                 \
    }
#else
#define CPU_MULTIVERSION(LINKAGE, NAME, PARAMS, ARGS)                                                            \
    CPU_OPTIMIZE LINKAGE void NAME PARAMS { NAME##_body ARGS; }
#endif

#endif
