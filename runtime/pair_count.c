#include "pair_count.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

/* 4 lanes as GCC's and Clang's vector extensions have them: SIMD on any
 * x86-64 or ARMv8 (8 lanes without AVX ran 10 times slower), plain code
 * elsewhere, the same bits either way where floats are computed in float
 * (FLT_EVAL_METHOD 0: not x87). */
#define LANES 4
typedef float lanes_f __attribute__((vector_size(LANES * sizeof(float))));
typedef int32_t lanes_i __attribute__((vector_size(LANES * sizeof(int32_t))));

/* Padding atoms are nowhere: every comparison with NaN is false, whatever
 * the positions and cutoffs (a finite far value could meet either). */
#define NOWHERE NAN

int mlff_count_pairs(const float *xyzw, int64_t n, const float cutoff2[2], int32_t *const counts[2], float *least2,
                     mlff_pair_count_scratch *scratch)
{
    /* A whole number of lanes past every atom's last partner. */
    const int64_t rows = n + LANES;
    void **const columns[] = {(void **)&scratch->coords, (void **)&scratch->counts};
    const size_t sizes[] = {3 * sizeof(float), 2 * sizeof(int32_t)};
    if (!mlff_grow_columns(columns, sizes, 2, &scratch->capacity, rows))
        return 0;
    float *x = scratch->coords, *y = x + rows, *z = y + rows;
    int32_t *within[2] = {scratch->counts, scratch->counts + rows};
    for (int64_t a = 0; a < rows; a++) {
        const int real = a < n;
        x[a] = real ? xyzw[4 * a] : NOWHERE;
        y[a] = real ? xyzw[4 * a + 1] : NOWHERE;
        z[a] = real ? xyzw[4 * a + 2] : NOWHERE;
    }
    memset(scratch->counts, 0, (size_t)(2 * rows) * sizeof(int32_t));
    const lanes_f c0 = cutoff2[0] - (lanes_f){0}, c1 = cutoff2[1] - (lanes_f){0};
    lanes_f least = *least2 - (lanes_f){0};
    for (int64_t a = 0; a < n; a++) {
        const lanes_f xa = x[a] - (lanes_f){0}, ya = y[a] - (lanes_f){0}, za = z[a] - (lanes_f){0};
        lanes_i own0 = {0}, own1 = {0};
        for (int64_t b = a + 1; b < n; b += LANES) {
            lanes_f xb, yb, zb;
            lanes_i w0, w1;
            memcpy(&xb, x + b, sizeof xb);
            memcpy(&yb, y + b, sizeof yb);
            memcpy(&zb, z + b, sizeof zb);
            const lanes_f dx = xb - xa, dy = yb - ya, dz = zb - za;
            const lanes_f r2 = dx * dx + dy * dy + dz * dz;
            /* Comparisons give -1 where true. */
            const lanes_i in0 = r2 <= c0, in1 = r2 <= c1;
            const lanes_i lower = r2 < least; /* never for padding's NaN */
            least = (lanes_f)((lower & (lanes_i)r2) | (~lower & (lanes_i)least));
            own0 -= in0;
            own1 -= in1;
            memcpy(&w0, within[0] + b, sizeof w0);
            memcpy(&w1, within[1] + b, sizeof w1);
            w0 -= in0;
            w1 -= in1;
            memcpy(within[0] + b, &w0, sizeof w0);
            memcpy(within[1] + b, &w1, sizeof w1);
        }
        for (int k = 0; k < LANES; k++) {
            within[0][a] += own0[k];
            within[1][a] += own1[k];
        }
    }
    for (int k = 0; k < LANES; k++)
        *least2 = fminf(*least2, least[k]);
    for (int l = 0; l < 2; l++)
        memcpy(counts[l], within[l], (size_t)n * sizeof(int32_t));
    return 1;
}

void mlff_pair_count_scratch_free(mlff_pair_count_scratch *scratch)
{
    free(scratch->coords);
    free(scratch->counts);
    memset(scratch, 0, sizeof *scratch);
}
