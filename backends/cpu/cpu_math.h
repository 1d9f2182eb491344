/* Vectorisable float32 math shared by the CPU kernels. */
#ifndef MLFF_BACKENDS_CPU_MATH_H
#define MLFF_BACKENDS_CPU_MATH_H

#include <stdint.h>
#include <string.h>

/*
 * exp(x) for x <= 0 (what CELU needs), as 2^k e^r with |r| <= ln2/2 and a
 * degree-6 polynomial: relative error about 2e-7, like expf, but plain
 * arithmetic that vectorises (libm's expf is one call per element).
 */
static inline float cpu_exp_nonpositive(float x)
{
    /* Written so that a NaN fails the test too and becomes -87: a NaN
     * converted to int below would be undefined. No NaN gets here from a
     * checked batch and model (finite coordinates within 1e10 A, positive
     * widths and alphas, models/ani.c), nor a positive x (whose exponent
     * would overflow the shift); the clamp costs nothing more. */
    x = x >= -87.0f ? x : -87.0f;
    /* Round to nearest by adding and removing 1.5 * 2^23 (vectorises, unlike roundf). */
    const float k = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
    const float r = (x - k * 0.693145752f) - k * 1.42860677e-06f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = ((int32_t)k + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* CELU; near zero exp(x) - 1 loses only absolute precision (about 1e-8 alpha). */
static inline float cpu_celu(float x, float alpha, float inv_alpha)
{
    const float e = cpu_exp_nonpositive(x < 0 ? x * inv_alpha : 0.0f);
    return x > 0 ? x : alpha * (e - 1.0f);
}

/* CELU's derivative from its output y: 1 where y > 0, else y / alpha + 1. */
static inline float cpu_celu_grad(float y, float inv_alpha)
{
    return y > 0 ? 1.0f : y * inv_alpha + 1.0f;
}

/* cos and sin of x in [0, pi] through y = x - pi/2 in [-pi/2, pi/2]:
 * cos x = -sin y and sin x = cos y, Taylor to y^11 / y^12 (error < 4e-8). */
static inline float cpu_cos_0_pi(float x)
{
    const float y = x - 1.57079633f, y2 = y * y;
    const float s = y * (1 + y2 * (-1.0f / 6 + y2 * (1.0f / 120 + y2 * (-1.0f / 5040 +
                                   y2 * (1.0f / 362880 + y2 * (-1.0f / 39916800))))));
    return -s;
}

static inline float cpu_sin_0_pi(float x)
{
    const float y = x - 1.57079633f, y2 = y * y;
    return 1 + y2 * (-0.5f + y2 * (1.0f / 24 + y2 * (-1.0f / 720 + y2 * (1.0f / 40320 +
                 y2 * (-1.0f / 3628800 + y2 * (1.0f / 479001600))))));
}

/* The ANI cosine cutoff and its derivative for d >= 0. */
static inline float cpu_cutoff(float d, float rc)
{
    return d < rc ? 0.5f * cpu_cos_0_pi(3.14159265f * d / rc) + 0.5f : 0.0f;
}

static inline float cpu_cutoff_grad(float d, float rc)
{
    return d < rc ? -0.5f * 3.14159265f / rc * cpu_sin_0_pi(3.14159265f * d / rc) : 0.0f;
}

#endif
