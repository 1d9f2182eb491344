#include "peak.h"

#include <immintrin.h>
#include <pthread.h>
#include <time.h>

#define CHAINS 12 /* independent accumulators: enough to hide FMA latency */
#define ITERATIONS 400000000L /* about 0.2 s per thread at peak */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

__attribute__((target("avx512f"))) static float fma_avx512(long n)
{
    __m512 acc[CHAINS], x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
#pragma GCC unroll 16
    for (int c = 0; c < CHAINS; c++)
        acc[c] = _mm512_set1_ps((float)c);
    for (long i = 0; i < n; i++)
#pragma GCC unroll 16
        for (int c = 0; c < CHAINS; c++)
            acc[c] = _mm512_fmadd_ps(acc[c], x, y);
    float s = 0;
    for (int c = 0; c < CHAINS; c++)
        s += _mm512_reduce_add_ps(acc[c]);
    return s;
}

__attribute__((target("avx2,fma"))) static float fma_avx2(long n)
{
    __m256 acc[CHAINS], x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
#pragma GCC unroll 16
    for (int c = 0; c < CHAINS; c++)
        acc[c] = _mm256_set1_ps((float)c);
    for (long i = 0; i < n; i++)
#pragma GCC unroll 16
        for (int c = 0; c < CHAINS; c++)
            acc[c] = _mm256_fmadd_ps(acc[c], x, y);
    float s = 0, lanes[8];
    for (int c = 0; c < CHAINS; c++) {
        _mm256_storeu_ps(lanes, acc[c]);
        for (int l = 0; l < 8; l++)
            s += lanes[l];
    }
    return s;
}

typedef struct peak_job {
    int wide;
    long n;
    volatile float sink;
} peak_job;

static void *run(void *arg)
{
    peak_job *job = arg;
    job->sink = job->wide == 16 ? fma_avx512(job->n) : fma_avx2(job->n);
    return NULL;
}

static double measure(int wide, int n_threads)
{
    pthread_t threads[256];
    peak_job jobs[256];
    double start = now();
    for (int t = 0; t < n_threads; t++) {
        jobs[t].wide = wide;
        jobs[t].n = ITERATIONS / wide / CHAINS;
        pthread_create(&threads[t], NULL, run, &jobs[t]);
    }
    for (int t = 0; t < n_threads; t++)
        pthread_join(threads[t], NULL);
    double seconds = now() - start;
    return (double)n_threads * (double)(ITERATIONS / wide / CHAINS) * CHAINS * wide * 2 / seconds / 1e9;
}

/* Best of three: the peak is what the machine can do when nothing disturbs it. */
double bench_peak_gflops(int n_threads, const char **isa)
{
    int wide = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") ? 8 : 0;
    *isa = wide == 16 ? "AVX-512" : wide == 8 ? "AVX2" : "none";
    if (!wide || n_threads < 1 || n_threads > 256)
        return 0;
    double best = 0;
    for (int k = 0; k < 3; k++) {
        double g = measure(wide, n_threads);
        best = g > best ? g : best;
    }
    return best;
}
