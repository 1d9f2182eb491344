/* Put before every generated OpenCL program (after arena.cl). Each kernel
 * below it is a template instantiated with #defines (see
 * backends/opencl/cl_program.c):
 *   KNAME            the kernel's name
 *   KARGS            its parameter list: the buffers out, in0, in1, ...,
 *                    seg_off/seg_items where the op sums by segments (a CSR
 *                    built from its index input), epi where an epilogue
 *                    reads one; then n_items (the work-items wanted) and
 *                    lanes where the op sums in lanes
 *   KTENSORS         the first line of the kernel's body (arena.cl)
 *   TO, T0, T1, ...  element types of the output and of each input
 *   OUT_COLS, IN0_COLS, ...  column counts; F0..F4, I0..I3 the op's attributes
 * The op semantics are in core/ops.h; the CPU kernels are the reference. */
/* acc_t: sums and lengths in double where the device has it (as the CPU
 * backend does), else in float. */
#ifdef MLFF_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif

#define ITEM() const long item = (long)get_global_id(0); if (item >= n_items) return

/* Sums in lanes (lowering.h): `lanes` (a kernel argument) consecutive
 * work-items share output `item`, each walking every lanes-th entry from
 * `lane`. Items past the outputs are not `live`: they walk nothing, but
 * stay for the barriers. LANES_SUM(part, n, v) adds v[0..n) over the lanes
 * in a fixed tree through part (local, n * SUM_GROUP entries); lane 0 ends
 * with the sums in v. Nothing where the device never has more than one lane
 * (SUM_LANES_MAX). */
#define LANES_ITEM()                                                                \
    const long item = (long)get_global_id(0) / lanes;                              \
    const int lane = (int)(get_global_id(0) % lanes), live = item < n_items
#if SUM_LANES_MAX > 1
#define LANES_SUM(part, n, v)                                                       \
    if (lanes > 1) {                                                                \
        const int me_ = (int)get_local_id(0);                                       \
        for (int k_ = 0; k_ < (n); k_++)                                            \
            part[k_ * SUM_GROUP + me_] = (v)[k_];                                   \
        for (int w_ = lanes / 2; w_ > 0; w_ /= 2) {                                 \
            barrier(CLK_LOCAL_MEM_FENCE);                                           \
            if (lane < w_)                                                          \
                for (int k_ = 0; k_ < (n); k_++)                                    \
                    part[k_ * SUM_GROUP + me_] = (v)[k_] += part[k_ * SUM_GROUP + me_ + w_]; \
        }                                                                           \
    }
#else
#define LANES_SUM(part, n, v)
#endif

/* The cosine cutoff and its derivative. */
#define CUTOFF_FN(T, d, rc) ((d) < (rc) ? (T)0.5 * cos((T)M_PI * (d) / (rc)) + (T)0.5 : (T)0)
#define CUTOFF_GRAD(T, d, rc) ((d) < (rc) ? (T)-0.5 * (T)M_PI / (rc) * sin((T)M_PI * (d) / (rc)) : (T)0)

/* Axis 0, 1 or 2 of a pair's packed image offsets (mlff_image_pack in core/ops.h). */
#define IMAGE_OFFSET(packed, axis) ((((packed) >> (10 * (axis))) & 1023) - 512)
/* Component b of a pair's shift n . cell, in TO; the cell's rows (its
 * lattice vectors) at cells[at ..]: pair_shifts, and pair_vectors of images. */
#define IMAGE_SHIFT(packed, cells, at, b)                                                          \
    ((TO)IMAGE_OFFSET(packed, 0) * (cells)[(at) + (b)] + (TO)IMAGE_OFFSET(packed, 1) * (cells)[(at) + 3 + (b)] + \
     (TO)IMAGE_OFFSET(packed, 2) * (cells)[(at) + 6 + (b)])

/* Pair p's vector r_j - r_i + n . cell into VEC (PAIR_VECTORS of images,
 * and an AEV that makes its pair vectors). */
#define PAIR_VECTOR_OF_IMAGES(VEC, POSITIONS, PAIRS, IMAGES, CELLS, SYSTEM, p)                          \
    do {                                                                                               \
        const long i_ = (PAIRS)[2 * (p)], j_ = (PAIRS)[2 * (p) + 1];                                   \
        for (int d_ = 0; d_ < 3; d_++)                                                                 \
            (VEC)[3 * (p) + d_] = (POSITIONS)[3 * j_ + d_] - (POSITIONS)[3 * i_ + d_] +                \
                                  IMAGE_SHIFT((IMAGES)[p], CELLS, 9 * (long)(SYSTEM)[i_], d_);         \
    } while (0)

/* |v| of three consecutive entries, in acc_t. */
#define LENGTH3(v) sqrt((acc_t)(v)[0] * (v)[0] + (acc_t)(v)[1] * (v)[1] + (acc_t)(v)[2] * (v)[2])

/* The radial features' gradient with respect to pair p's vector into
 * grad[3] (ANI_RADIAL_VJP, core/ops.h): G the AEV's gradient, rows of
 * G_COLS whose first N_SHIFTS * species columns are the radial features';
 * F0 = eta, F1 = rc. */
#define RADIAL_PAIR_GRADIENT(G, G_COLS, VEC, PAIRS, SPECIES, SHIFTS, p, grad)                            \
    do {                                                                                                \
        const TO eta_ = (TO)F0, rc_ = (TO)F1, d_ = (TO)LENGTH3((VEC) + 3 * (p));                       \
        const TO fc_ = CUTOFF_FN(TO, d_, rc_), dfc_ = CUTOFF_GRAD(TO, d_, rc_);                       \
        TO de_dd_ = 0;                                                                                  \
        if (fc_ != 0 || dfc_ != 0) {                                                                    \
            const long g_ = (long)(PAIRS)[2 * (p)] * (G_COLS) + (long)(SPECIES)[(PAIRS)[2 * (p) + 1]] * N_SHIFTS; \
            for (int r_ = 0; r_ < N_SHIFTS; r_++) {                                                     \
                const TO t_ = d_ - (SHIFTS)[r_];                                                        \
                de_dd_ += (G)[g_ + r_] * (TO)0.25 * exp(-eta_ * t_ * t_) * (dfc_ - 2 * eta_ * t_ * fc_); \
            }                                                                                           \
        }                                                                                               \
        for (int k_ = 0; k_ < 3; k_++)                                                                  \
            (grad)[k_] = d_ > 0 ? de_dd_ * (VEC)[3 * (p) + k_] / d_ : 0;                                \
    } while (0)

/* Slot of the unordered species pair (a, b) in upper-triangle order. */
inline int species_pair(int a, int b, int n_species)
{
    if (a > b) {
        const int t = a;
        a = b;
        b = t;
    }
    return a * n_species - a * (a - 1) / 2 + (b - a);
}

/* Stacks (core/ops.h): row block b of a dense node's launch, in which each
 * run of starts[0..stacks] begins a block of block_rows rows: the block's
 * run *e and its rows [*m0, *m_end); 0 past the last run (ROW_BLOCK in
 * row_block.cl). */
inline int stacked_block(global const int *starts, int stacks, long b, int block_rows, int *e, long *m0,
                         long *m_end)
{
    long first = 0;
    for (int s = 0; s < stacks; s++) {
        const long begin = starts[s], end = starts[s + 1], blocks = (end - begin + block_rows - 1) / block_rows;
        if (b < first + blocks) {
            *e = s;
            *m0 = begin + (b - first) * block_rows;
            *m_end = min(end, *m0 + block_rows);
            return 1;
        }
        first += blocks;
    }
    return 0;
}
