/* Follows dialect.glsl in every node's shader (backends/vulkan/vk_shader.c). */

/* Math for float and double alike (exp_, expm1_, log_, pow_, sin_, cos_,
 * acos_), so that one template serves both types: GLSL has no double exp,
 * log, sin, cos, acos or pow. The float versions are written out too, with
 * the same algorithms: the Vulkan built-ins need only be loosely accurate
 * (acos 4096 ulp; log2 an absolute error near 1, which pow multiplies by the
 * exponent; sin and cos an absolute 2^-11), lavapipe's come near that (acos
 * 3000 ulp, pow 140 ulp for ANI's arguments), and OpenCL's are within a few
 * ulp. These are within about 2.5 ulp (sin and cos near their zeros: 1 ulp
 * of 1) over the ranges the ops use (ANI: exp of -eta u^2, pow of a base in
 * [0, 1] to zeta ~ 14-32, sin and cos within a few pi, acos of 0.95 cos), as
 * measured against libm on lavapipe.
 *
 * Where a value needs more than the type's bits on the way (pow's e log b),
 * it is carried as hi + lo with error-free sums and products. `precise`
 * keeps the compiler from fusing or simplifying those (a + b - a is not b
 * here). Products are split by hand (Dekker) rather than taken from fma():
 * GLSL does not promise a fused fma, and lavapipe rounds it twice. */

/* ---- float ---- */

/* ln2 and pi/2 in parts with trailing zero bits, so that k * part is exact
 * for the k that occur. */
const float LN2_HI_F = 0.693145751953125; /* 16 bits */
const float LN2_LO_F = 1.428606765330187e-06;
const float INV_LN2_F = 1.44269504088896341;
const float PIO2_1_F = 1.5703125; /* 12 bits */
const float PIO2_2_F = 0.0004837512969970703; /* the next 12 bits */
const float PIO2_3_F = 7.549790126404332e-08;
const float TWO_OVER_PI_F = 0.6366197466850281;
const float PIO2_HI_F = 1.5707963705062866; /* pi/2 = PIO2_HI_F + PIO2_LO_F */
const float PIO2_LO_F = -4.371138828673793e-08;
const float PI_HI_F = 3.1415927410125732; /* pi = PI_HI_F + PI_LO_F */
const float PI_LO_F = -8.742277657347586e-08;

float inf_f()
{
    return uintBitsToFloat(0x7f800000u);
}

float nan_f()
{
    return uintBitsToFloat(0x7fc00000u);
}

/* 2^n for n in [-126, 127], from its bits. */
float pow2_f(int n)
{
    return intBitsToFloat((n + 127) << 23);
}

/* Error-free sums and products of T, as pairs T2 (hi, lo); the split into
 * halves of HALF bits (SPLITTER = 2^HALF + 1) makes products of halves
 * exact. fast_two_sum needs |a| >= |b| (or a = 0). */
#define ERROR_FREE(T, T2, SPLITTER)                                                       \
    T2 two_sum(T a, T b)                                                                  \
    {                                                                                     \
        precise const T s = a + b;                                                        \
        precise const T bb = s - a;                                                       \
        precise const T err = (a - (s - bb)) + (b - bb);                                  \
        return T2(s, err);                                                                \
    }                                                                                     \
    T2 fast_two_sum(T a, T b)                                                             \
    {                                                                                     \
        precise const T s = a + b;                                                        \
        precise const T err = b - (s - a);                                                \
        return T2(s, err);                                                                \
    }                                                                                     \
    T2 split(T a)                                                                         \
    {                                                                                     \
        precise const T c = SPLITTER * a;                                                 \
        precise const T hi = c - (c - a);                                                 \
        precise const T lo = a - hi;                                                      \
        return T2(hi, lo);                                                                \
    }                                                                                     \
    T2 two_prod(T a, T b)                                                                 \
    {                                                                                     \
        precise const T p = a * b;                                                        \
        const T2 x = split(a), y = split(b);                                              \
        precise const T err = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;      \
        return T2(p, err);                                                                \
    }
ERROR_FREE(float, vec2, 4097.0) /* 2^12 + 1 */

/* expm1 on |r| <= ln2/2 (Taylor to r^8): r plus a correction, so that small
 * values keep their relative accuracy. */
float expm1_kernel(float r)
{
    const float p = 0.5 + r * (0.16666667 + r * (0.041666668 + r * (0.008333334 + r * (0.0013888889 +
                    r * (0.0001984127 + r * 2.4801588e-05)))));
    return r + r * r * p;
}

/* exp(x + xl) for a small correction xl (the low part of pow's exponent):
 * 2^k exp(r), x = k ln2 + r, |r| <= ln2/2. */
float exp_ext(float x, float xl)
{
    if (x > 88.72284)
        return inf_f();
    if (x < -103.98)
        return 0.0;
    const float k = roundEven(x * INV_LN2_F);
    /* x - k * LN2_HI_F is exact (k * LN2_HI_F is, and lies within a factor 2 of x). */
    precise const float r = (x - k * LN2_HI_F) + (xl - k * LN2_LO_F);
    /* 2^k in two halves: k may pass 127 or -126 while the result does not. */
    const int n = int(k), n1 = n / 2;
    return (1.0 + expm1_kernel(r)) * pow2_f(n1) * pow2_f(n - n1);
}

float exp_(float x)
{
    return exp_ext(x, 0.0);
}

/* exp(x) - 1 = 2^k expm1(r) + (2^k - 1): both terms exact, one rounding. */
float expm1_(float x)
{
    if (abs(x) <= 0.34657359)
        return expm1_kernel(x);
    const float k = roundEven(x * INV_LN2_F);
    if (k < -25.0)
        return -1.0;
    if (k > 25.0)
        return exp_(x);
    precise const float r = (x - k * LN2_HI_F) - k * LN2_LO_F;
    const float s = pow2_f(int(k));
    return s * expm1_kernel(r) + (s - 1.0);
}

/* log(x) = hi + lo, for finite x > 0: x = 2^e m with m in [sqrt(1/2), sqrt(2)],
 * log(m) = 2 atanh(s), s = (m - 1) / (m + 1). */
vec2 log_ext(float x)
{
    uint w = floatBitsToUint(x);
    int e = 0;
    if (w < 0x00800000u) { /* subnormal: scale by 2^25 first */
        w = floatBitsToUint(x * 33554432.0);
        e = -25;
    }
    e += int(w >> 23) - 127;
    float m = uintBitsToFloat((w & 0x007fffffu) | 0x3f800000u);
    if (m > 1.4142135) {
        m *= 0.5;
        e += 1;
    }
    /* f = m - 1 is exact; s = f / (2 + f) as s + s_lo, with 2 + f = den + den_lo. */
    precise const float f = m - 1.0;
    const vec2 den = fast_two_sum(2.0, f);
    precise const float s = f / den.x;
    const vec2 p = two_prod(s, den.x);
    precise const float s_lo = (((f - p.x) - p.y) - s * den.y) / den.x;
    /* 2 atanh(s) = 2s + 2s^3 (1/3 + s^2/5 + ...); the tail is under 1% of it. */
    const float z = s * s;
    const float tail = s * z * (0.6666667 + z * (0.4 + z * (0.2857143 + z * (0.22222222 + z * 0.18181819))));
    const vec2 lm = fast_two_sum(2.0 * s, 2.0 * s_lo + tail);
    /* plus e ln2, e * LN2_HI_F exact */
    const float de = float(e);
    const vec2 h = two_sum(de * LN2_HI_F, lm.x);
    precise const float l = h.y + (lm.y + de * LN2_LO_F);
    return fast_two_sum(h.x, l);
}

float log_(float x)
{
    if (!(x > 0.0) || x >= inf_f())
        return x == 0.0 ? -inf_f() : x > 0.0 ? x : nan_f();
    return log_ext(x).x;
}

/* b^e for b >= 0 (b = 0 as C's pow) as exp(e log b), with log b and the
 * product carried in hi + lo: e log b may be a hundred, and its rounding
 * error would reach the result multiplied by that. */
float pow_(float b, float e)
{
    if (!(b > 0.0))
        return b == 0.0 ? (e > 0.0 ? 0.0 : e == 0.0 ? 1.0 : inf_f()) : nan_f();
    if (e == 0.0 || b == 1.0)
        return 1.0;
    const vec2 l = log_ext(b);
    const vec2 y = two_prod(e, l.x);
    precise const float y_lo = y.y + e * l.y;
    return exp_ext(y.x, y_lo);
}

/* x = k pi/2 + r, |r| about pi/4 at most, for |x| up to a few thousand
 * (three-part reduction); returns k. */
int reduce_pio2(float x, out float r)
{
    const float k = roundEven(x * TWO_OVER_PI_F);
    precise const float v = ((x - k * PIO2_1_F) - k * PIO2_2_F) - k * PIO2_3_F;
    r = v;
    return int(k);
}

/* sin and cos on |r| <= pi/4 (Taylor to r^11 and r^10). */
float sin_kernel(float r)
{
    const float z = r * r;
    return r + r * z * (-0.16666667 + z * (0.008333334 + z * (-0.0001984127 + z * (2.7557319e-06 +
                        z * -2.5052108e-08))));
}

float cos_kernel(float r)
{
    const float z = r * r;
    const float c = 0.041666668 + z * (-0.0013888889 + z * (2.4801588e-05 + z * -2.755732e-07));
    /* 1 - z/2 rounds; its error joins the small terms */
    precise const float hz = 0.5 * z;
    precise const float w = 1.0 - hz;
    precise const float v = w + (((1.0 - w) - hz) + z * z * c);
    return v;
}

float sin_(float x)
{
    float r;
    const int k = reduce_pio2(x, r);
    const float v = (k & 1) == 0 ? sin_kernel(r) : cos_kernel(r);
    return (k & 2) == 0 ? v : -v;
}

float cos_(float x)
{
    float r;
    const int k = reduce_pio2(x, r);
    const float v = (k & 1) == 0 ? cos_kernel(r) : sin_kernel(r);
    return ((k + 1) & 2) == 0 ? v : -v;
}

/* asin(t) - t for |t| <= 1/2, z = t^2: t z R(z), R a polynomial fitted to
 * (asin(t) - t) / t^3 on [0, 1/4]. */
float asin_tail(float t, float z)
{
    return t * z * (0.16666666 + z * (0.07500094 + z * (0.044599403 + z * (0.031100662 + z * (0.017149238 +
                    z * 0.033690847)))));
}

/* acos(x) on [-1, 1]: pi/2 - asin(x) for |x| < 1/2, else from
 * acos(x) = 2 asin(sqrt((1 - x) / 2)) (x > 0) or pi - 2 asin(sqrt((1 + x) / 2)),
 * where (1 -+ x) / 2 is exact and the rounding of the sqrt is corrected. */
float acos_(float x)
{
    const float a = abs(x);
    if (!(a <= 1.0))
        return nan_f();
    if (a < 0.5) {
        precise const float v = PIO2_HI_F - (x - (PIO2_LO_F - asin_tail(x, x * x)));
        return v;
    }
    const float w = (1.0 - a) * 0.5;
    const float t = sqrt(w);
    const vec2 tt = two_prod(t, t);
    precise const float t_lo = t > 0.0 ? ((w - tt.x) - tt.y) / (2.0 * t) : 0.0;
    precise const float as_t = t + (asin_tail(t, w) + t_lo);
    precise const float v = x > 0.0 ? 2.0 * as_t : PI_HI_F - (2.0 * as_t - PI_LO_F);
    return v;
}

/* ---- double: the same algorithms, longer polynomials ---- */

#ifdef MLFF_FP64
const double LN2_HI = 0.6931471803691238LF; /* 32 bits */
const double LN2_LO = 1.9082149292705877e-10LF;
const double INV_LN2 = 1.4426950408889634LF;
const double PIO2_1 = 1.5707963267341256LF; /* 33 bits */
const double PIO2_2 = 6.077100506303966e-11LF; /* the next 33 bits */
const double PIO2_3 = 2.0222662487959506e-21LF; /* the rest */
const double TWO_OVER_PI = 0.6366197723675814LF;
const double PIO2_HI = 1.5707963267948966LF; /* pi/2 = PIO2_HI + PIO2_LO */
const double PIO2_LO = 6.123233995736766e-17LF;
const double PI_HI = 3.141592653589793LF; /* pi = PI_HI + PI_LO */
const double PI_LO = 1.2246467991473532e-16LF;

double inf_d()
{
    return packDouble2x32(uvec2(0u, 0x7ff00000u));
}

double nan_d()
{
    return packDouble2x32(uvec2(0u, 0x7ff80000u));
}

/* 2^n for n in [-1022, 1023], from its bits. */
double pow2_d(int n)
{
    return packDouble2x32(uvec2(0u, uint(n + 1023) << 20));
}

ERROR_FREE(double, dvec2, 134217729.0LF) /* 2^27 + 1 */

/* Taylor to r^15: the next term is below 1e-17 relative. */
double expm1_kernel(double r)
{
    const double p =
        0.5LF + r * (0.16666666666666666LF + r * (0.041666666666666664LF + r * (0.008333333333333333LF +
        r * (0.001388888888888889LF + r * (0.0001984126984126984LF + r * (2.48015873015873e-05LF +
        r * (2.7557319223985893e-06LF + r * (2.755731922398589e-07LF + r * (2.505210838544172e-08LF +
        r * (2.08767569878681e-09LF + r * (1.6059043836821613e-10LF + r * (1.1470745597729725e-11LF +
        r * 7.647163731819816e-13LF))))))))))));
    return r + r * r * p;
}

double exp_ext(double x, double xl)
{
    if (x > 709.782712893384LF)
        return inf_d();
    if (x < -745.2LF)
        return 0.0LF;
    const double k = roundEven(x * INV_LN2);
    precise const double r = (x - k * LN2_HI) + (xl - k * LN2_LO);
    /* k reaches 1024 and -1075, and results may be subnormal */
    const int n = int(k), n1 = n / 2;
    return (1.0LF + expm1_kernel(r)) * pow2_d(n1) * pow2_d(n - n1);
}

double exp_(double x)
{
    return exp_ext(x, 0.0LF);
}

double expm1_(double x)
{
    if (abs(x) <= 0.34657359027997264LF)
        return expm1_kernel(x);
    if (x > 709.782712893384LF)
        return inf_d();
    const double k = roundEven(x * INV_LN2);
    if (k < -56.0LF)
        return -1.0LF;
    if (k > 56.0LF)
        return exp_(x);
    precise const double r = (x - k * LN2_HI) - k * LN2_LO;
    const double s = pow2_d(int(k));
    return s * expm1_kernel(r) + (s - 1.0LF);
}

dvec2 log_ext(double x)
{
    uvec2 w = unpackDouble2x32(x);
    int e = 0;
    if (w.y < 0x00100000u) { /* subnormal: scale by 2^54 first */
        w = unpackDouble2x32(x * 18014398509481984.0LF);
        e = -54;
    }
    e += int(w.y >> 20) - 1023;
    double m = packDouble2x32(uvec2(w.x, (w.y & 0x000fffffu) | 0x3ff00000u));
    if (m > 1.4142135623730951LF) {
        m *= 0.5LF;
        e += 1;
    }
    precise const double f = m - 1.0LF;
    const dvec2 den = fast_two_sum(2.0LF, f);
    precise const double s = f / den.x;
    const dvec2 p = two_prod(s, den.x);
    precise const double s_lo = (((f - p.x) - p.y) - s * den.y) / den.x;
    const double z = s * s;
    const double tail =
        s * z * (0.6666666666666666LF + z * (0.4LF + z * (0.2857142857142857LF + z * (0.2222222222222222LF +
        z * (0.18181818181818182LF + z * (0.15384615384615385LF + z * (0.13333333333333333LF +
        z * (0.11764705882352941LF + z * (0.10526315789473684LF + z * (0.09523809523809523LF +
        z * 0.08695652173913043LF))))))))));
    const dvec2 lm = fast_two_sum(2.0LF * s, 2.0LF * s_lo + tail);
    const double de = double(e);
    const dvec2 h = two_sum(de * LN2_HI, lm.x);
    precise const double l = h.y + (lm.y + de * LN2_LO);
    return fast_two_sum(h.x, l);
}

double log_(double x)
{
    if (!(x > 0.0LF) || x >= inf_d())
        return x == 0.0LF ? -inf_d() : x > 0.0LF ? x : nan_d();
    return log_ext(x).x;
}

double pow_(double b, double e)
{
    if (!(b > 0.0LF))
        return b == 0.0LF ? (e > 0.0LF ? 0.0LF : e == 0.0LF ? 1.0LF : inf_d()) : nan_d();
    if (e == 0.0LF || b == 1.0LF)
        return 1.0LF;
    const dvec2 l = log_ext(b);
    const dvec2 y = two_prod(e, l.x);
    precise const double y_lo = y.y + e * l.y;
    return exp_ext(y.x, y_lo);
}

/* As the float one, but r = r.x + r.y keeps the bits the reduction yields,
 * for |x| up to about 1e5. */
int reduce_pio2(double x, out dvec2 r)
{
    const double k = roundEven(x * TWO_OVER_PI);
    precise const double r1 = x - k * PIO2_1; /* exact, as k * PIO2_1 and k * PIO2_2 are */
    const dvec2 r2 = two_sum(r1, -k * PIO2_2);
    precise const double lo = r2.y - k * PIO2_3;
    r = fast_two_sum(r2.x, lo);
    return int(k);
}

/* Taylor to r^17 and r^16: the next terms are below 1e-17 relative. */
double sin_kernel(dvec2 r)
{
    const double x = r.x, z = x * x;
    const double s =
        -0.16666666666666666LF + z * (0.008333333333333333LF + z * (-0.0001984126984126984LF +
        z * (2.7557319223985893e-06LF + z * (-2.505210838544172e-08LF + z * (1.6059043836821613e-10LF +
        z * (-7.647163731819816e-13LF + z * 2.8114572543455206e-15LF))))));
    /* sin(x + y) ~ sin(x) + y cos(x) */
    precise const double v = x + (x * z * s + r.y * (1.0LF - 0.5LF * z));
    return v;
}

double cos_kernel(dvec2 r)
{
    const double x = r.x, z = x * x;
    const double c =
        0.041666666666666664LF + z * (-0.001388888888888889LF + z * (2.48015873015873e-05LF +
        z * (-2.755731922398589e-07LF + z * (2.08767569878681e-09LF + z * (-1.1470745597729725e-11LF +
        z * 4.779477332387385e-14LF)))));
    /* cos(x + y) ~ cos(x) - y sin(x) */
    precise const double hz = 0.5LF * z;
    precise const double w = 1.0LF - hz;
    precise const double v = w + (((1.0LF - w) - hz) + (z * z * c - x * r.y));
    return v;
}

double sin_(double x)
{
    dvec2 r;
    const int k = reduce_pio2(x, r);
    const double v = (k & 1) == 0 ? sin_kernel(r) : cos_kernel(r);
    return (k & 2) == 0 ? v : -v;
}

double cos_(double x)
{
    dvec2 r;
    const int k = reduce_pio2(x, r);
    const double v = (k & 1) == 0 ? cos_kernel(r) : sin_kernel(r);
    return ((k + 1) & 2) == 0 ? v : -v;
}

/* R fitted with an error under 2e-17. */
double asin_tail(double t, double z)
{
    const double r =
        0.16666666666666669LF + z * (0.07499999999998433LF + z * (0.04464285714635543LF +
        z * (0.030381944138531247LF + z * (0.02237217294214989LF + z * (0.017352392720869973LF +
        z * (0.013971212973552933LF + z * (0.011479177415184906LF + z * (0.01032281435018578LF +
        z * (0.005457506718640358LF + z * (0.01740087944269402LF + z * (-0.014851887071247204LF +
        z * 0.028757851367421566LF)))))))))));
    return t * z * r;
}

double acos_(double x)
{
    const double a = abs(x);
    if (!(a <= 1.0LF))
        return nan_d();
    if (a < 0.5LF) {
        precise const double v = PIO2_HI - (x - (PIO2_LO - asin_tail(x, x * x)));
        return v;
    }
    const double w = (1.0LF - a) * 0.5LF;
    const double t = sqrt(w);
    const dvec2 tt = two_prod(t, t);
    precise const double t_lo = t > 0.0LF ? ((w - tt.x) - tt.y) / (2.0LF * t) : 0.0LF;
    precise const double as_t = t + (asin_tail(t, w) + t_lo);
    precise const double v = x > 0.0LF ? 2.0LF * as_t : PI_HI - (2.0LF * as_t - PI_LO);
    return v;
}
#endif
