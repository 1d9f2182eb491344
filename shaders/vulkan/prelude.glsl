/* Put before every generated Vulkan compute shader. The host writes, per
 * node, "#version 450", dispatch.glsl, the #defines below, this file,
 * math.glsl (exp_, log_, pow_, sin_, cos_, acos_, expm1_ for float and
 * double) and the op's .comp, and compiles that as one shader:
 *   MLFF_FP64        defined (1) only when the device has shaderFloat64;
 *                    without it nothing here mentions double
 *   TO, T0..T8       element types (float, double or int) of the output and
 *                    of each of the N_INPUTS inputs
 *   OUT_COLS, IN0_COLS, ...  column counts; F0..F4 (real literals: LF suffix
 *                    under MLFF_FP64, so always used through a cast such as
 *                    TO(F0)) and I0..I3 the op's attributes
 *   SEGMENTS         for ops that sum by segments (a CSR built from an index
 *                    input: seg_off, seg_items); SEGMENTS2 for a second
 *                    (seg2_off, seg2_items)
 *   EPI              for an epilogue that reads a tensor (epi): a dense-layer
 *                    VJP's CELU gradient, an add folded into a sum;
 *                    PLUS_EPI(v, at) stores v plus epi[at] if it is an add
 *   GEMM_N, ...      for linear.comp (see there); N_SHIFTS, N_Z, N_RA for ANI
 *                    (ANGULAR_CHUNK, ANGULAR_SUMS_LOCAL, RADIAL_SPLIT and,
 *                    with the radial features, N_SHIFTS: ani_angular.comp)
 *   GROUP_LANES      for ops that need work-groups of this size (lowering.h)
 * The op semantics are in core/ops.h; the CPU kernels are the reference, and
 * shaders/opencl/ holds the same kernels for OpenCL. */

/* acc_t: sums and lengths in double where the device has it (as the CPU
 * backend does), else in float. The real constants are double literals where
 * doubles exist, so that TO(MLFF_PI) is pi rounded once to TO (a float
 * literal would carry float's error into a double TO); constants that float
 * holds exactly (0.5, 0.25) are written plainly in the templates.
 * ANI_COS_SCALE: the ANI angle is acos(0.95 cos), which keeps its derivative
 * finite. */
#ifdef MLFF_FP64
#define acc_t double
#define MLFF_PI 3.14159265358979323846LF
#define ANI_COS_SCALE 0.95LF
#else
#define acc_t float
#define MLFF_PI 3.14159265358979323846
#define ANI_COS_SCALE 0.95
#endif

/* One descriptor set layout for every shader; each declares the bindings it reads. */
layout(std430, set = 0, binding = 0) buffer OutB { TO outp[]; };
#if N_INPUTS > 0
layout(std430, set = 0, binding = 1) readonly buffer In0B { T0 in0[]; };
#endif
#if N_INPUTS > 1
layout(std430, set = 0, binding = 2) readonly buffer In1B { T1 in1[]; };
#endif
#if N_INPUTS > 2
layout(std430, set = 0, binding = 3) readonly buffer In2B { T2 in2[]; };
#endif
#if N_INPUTS > 3
layout(std430, set = 0, binding = 4) readonly buffer In3B { T3 in3[]; };
#endif
#if N_INPUTS > 4
layout(std430, set = 0, binding = 5) readonly buffer In4B { T4 in4[]; };
#endif
#if N_INPUTS > 5
layout(std430, set = 0, binding = 6) readonly buffer In5B { T5 in5[]; };
#endif
#if N_INPUTS > 6
layout(std430, set = 0, binding = 7) readonly buffer In6B { T6 in6[]; };
#endif
#if N_INPUTS > 7
layout(std430, set = 0, binding = 8) readonly buffer In7B { T7 in7[]; };
#endif
#if N_INPUTS > 8
layout(std430, set = 0, binding = 9) readonly buffer In8B { T8 in8[]; };
#endif
#ifdef SEGMENTS
layout(std430, set = 0, binding = 10) readonly buffer SegOffB { int seg_off[]; };
layout(std430, set = 0, binding = 11) readonly buffer SegItemsB { int seg_items[]; };
#endif
#ifdef SEGMENTS2
layout(std430, set = 0, binding = 13) readonly buffer Seg2OffB { int seg2_off[]; };
layout(std430, set = 0, binding = 14) readonly buffer Seg2ItemsB { int seg2_items[]; };
#endif
#ifdef EPI
layout(std430, set = 0, binding = 12) readonly buffer EpiB { TO epi[]; };
#endif

/* The dispatch's values (dispatch.glsl). n_items: the work-items wanted in
 * all; base: the first one of this dispatch (a launch larger than the
 * device's group count limit is split into several dispatches); lanes:
 * linear_rows.comp's invocations per output, the lanes of sums in lanes,
 * gemm_splits.comp's splits. */
struct Push {
    uint n_items;
    uint base;
    uint lanes;
};
DISPATCH_VALUES(Push);

#if !defined(GEMM_N) && !defined(MLP_THREADS)
#ifdef GROUP_LANES
layout(local_size_x = GROUP_LANES) in; /* ops that need work-groups of this size (lowering.h) */
#elif defined(SUM_GROUP)
layout(local_size_x = SUM_GROUP) in;
#else
layout(local_size_x = 64) in;
#endif
#define ITEM()                                              \
    const uint item = pc.base + gl_GlobalInvocationID.x;    \
    if (item >= pc.n_items)                                 \
    return
#endif

/* Sums in lanes (lowering.h): pc.lanes consecutive invocations share output
 * `item` of n_outputs (pc.n_items counts the invocations), each walking
 * every lanes-th entry from `lane`. Invocations past the outputs are not
 * `live`: they walk nothing, but stay for the barriers.
 * LANES_SUM(part, n, v) adds v[0..n) over the lanes in a fixed tree through
 * part (shared, n * SUM_GROUP entries); lane 0 ends with the sums in v.
 * Nothing where the device never has more than one lane (SUM_LANES_MAX). */
#ifdef SUM_GROUP
#define LANES_ITEM()                                                                \
    const uint item = (pc.base + gl_GlobalInvocationID.x) / pc.lanes;              \
    const uint lane = (pc.base + gl_GlobalInvocationID.x) % pc.lanes;              \
    const uint n_outputs = pc.n_items / pc.lanes;                                  \
    const bool live = item < n_outputs
#if SUM_LANES_MAX > 1
#define LANES_SUM(part, n, v)                                                       \
    if (pc.lanes > 1) {                                                             \
        const uint me_ = gl_LocalInvocationID.x;                                    \
        for (uint k_ = 0; k_ < (n); k_++)                                           \
            part[k_ * SUM_GROUP + me_] = (v)[k_];                                   \
        for (uint w_ = pc.lanes / 2; w_ > 0; w_ /= 2) {                             \
            barrier();                                                              \
            if (lane < w_)                                                          \
                for (uint k_ = 0; k_ < (n); k_++) {                                 \
                    (v)[k_] += part[k_ * SUM_GROUP + me_ + w_];                     \
                    part[k_ * SUM_GROUP + me_] = (v)[k_];                           \
                }                                                                   \
        }                                                                           \
    }
#else
#define LANES_SUM(part, n, v)
#endif
#endif

/* The cosine cutoff and its derivative, in type T. */
#define CUTOFF_FN(T, d, rc) ((d) < (rc) ? T(0.5) * cos_(T(MLFF_PI) * (d) / (rc)) + T(0.5) : T(0))
#define CUTOFF_GRAD(T, d, rc) ((d) < (rc) ? T(-0.5) * T(MLFF_PI) / (rc) * sin_(T(MLFF_PI) * (d) / (rc)) : T(0))

/* Axis 0, 1 or 2 of a pair's packed image offsets (mlff_image_pack in core/ops.h). */
#define IMAGE_OFFSET(packed, axis) ((((packed) >> (10 * (axis))) & 1023) - 512)
/* Component b of a pair's shift n . cell, in TO; the cell's rows (its
 * lattice vectors) at cells[at ..]: pair_shifts, and pair_vectors of images. */
#define IMAGE_SHIFT(packed, cells, at, b)                                                          \
    (TO(IMAGE_OFFSET(packed, 0)) * TO(cells[(at) + (b)]) + TO(IMAGE_OFFSET(packed, 1)) * TO(cells[(at) + 3 + (b)]) + \
     TO(IMAGE_OFFSET(packed, 2)) * TO(cells[(at) + 6 + (b)]))

/* |v| of the three entries buf[at], buf[at + 1], buf[at + 2], in acc_t
 * (buffers cannot be passed to functions, so this takes the buffer's name). */
#define SQ_(buf, i) (acc_t(buf[i]) * acc_t(buf[i]))
#define LENGTH3(buf, at) sqrt(SQ_(buf, (at)) + SQ_(buf, (at) + 1) + SQ_(buf, (at) + 2))

/* The radial features' gradient with respect to pair p's vector into
 * grad[3] (ANI_RADIAL_VJP, core/ops.h): G the AEV's gradient, rows of
 * G_COLS whose first N_SHIFTS * species columns are the radial features';
 * F0 = eta, F1 = rc. */
#define RADIAL_PAIR_GRADIENT(G, G_COLS, VEC, PAIRS, SPECIES, SHIFTS, p, grad)                              \
    {                                                                                                     \
        const TO eta_ = TO(F0), rc_ = TO(F1), d_ = TO(LENGTH3(VEC, 3 * (p)));                             \
        const TO fc_ = CUTOFF_FN(TO, d_, rc_), dfc_ = CUTOFF_GRAD(TO, d_, rc_);                           \
        TO de_dd_ = TO(0);                                                                                \
        if (fc_ != 0 || dfc_ != 0) {                                                                      \
            const uint g_ = uint(PAIRS[2 * (p)]) * G_COLS + uint(SPECIES[PAIRS[2 * (p) + 1]]) * N_SHIFTS; \
            for (uint r_ = 0; r_ < N_SHIFTS; r_++) {                                                      \
                const TO t_ = d_ - TO(SHIFTS[r_]);                                                        \
                de_dd_ += TO(G[g_ + r_]) * TO(0.25) * exp_(-eta_ * t_ * t_) * (dfc_ - 2 * eta_ * t_ * fc_); \
            }                                                                                             \
        }                                                                                                 \
        for (uint k_ = 0; k_ < 3; k_++)                                                                   \
            grad[k_] = d_ > 0 ? de_dd_ * TO(VEC[3 * (p) + k_]) / d_ : TO(0);                              \
    }

/* Slot of the unordered species pair (a, b) in upper-triangle order. */
int species_pair(int a, int b, int n_species)
{
    if (a > b) {
        const int t = a;
        a = b;
        b = t;
    }
    return a * n_species - a * (a - 1) / 2 + (b - a);
}

#ifdef STACKS
/* The dense shaders' row block b (of block_rows rows): its run e (0 without
 * stacks; its weights are group e * GROUPS + g) and rows [m0, m_end). With
 * stacks (core/ops.h) each run of STARTS begins a block and a block past
 * the last run gives false (the whole work group returns, before any
 * barrier); without, block b of the pc.n_items rows. */
bool row_block(uint b, uint block_rows, out uint e, out uint m0, out uint m_end)
{
    e = 0;
#if STACKS > 1
    uint first = 0;
    for (uint s = 0; s < uint(STACKS); s++) {
        const uint begin = uint(STARTS[s]), end = uint(STARTS[s + 1]);
        const uint blocks = (end - begin + block_rows - 1) / block_rows;
        if (b < first + blocks) {
            e = s;
            m0 = begin + (b - first) * block_rows;
            m_end = min(end, m0 + block_rows);
            return true;
        }
        first += blocks;
    }
    m0 = m_end = 0;
    return false;
#else
    m0 = b * block_rows;
    m_end = min(pc.n_items, m0 + block_rows);
    return true;
#endif
}
#endif
