/* The kernel dialect in OpenCL C: what each macro means is in
 * shaders/README.md. Put before every program, after arena.cl
 * (backends/opencl/cl_program.c); a node's kernel then follows with KNAME,
 * KARGS, KTENSORS and its constants defined. acc_t: sums and lengths in
 * double where the device has it (as the CPU backend), else in float;
 * idx_t: a buffer index (long: a buffer may hold more than 2^31 words). */
#define DIALECT_OPENCL 1
#define DIALECT_GLSL 0
#ifdef MLFF_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif
typedef long idx_t;
typedef long sidx_t; /* one that may go below zero */
#define MLFF_PI M_PI
#define ANI_COS_SCALE 0.95
/* Kernels. OpenCL's host chooses the work-group size at launch but for
 * KERNEL_GROUP and ENTRY_GROUP; a program holds every kernel of a file. */
#define ENTRY(name, n) kernel void name(KARGS) {
#define ENTRY_GROUP(name, n) kernel __attribute__((reqd_work_group_size(n, 1, 1))) void name(KARGS) {
#define KERNEL() ENTRY(KNAME, 64)
#define KERNEL_GROUP(n) ENTRY_GROUP(KNAME, n)
#define KERNEL_GROUP_2D(x, y) kernel __attribute__((reqd_work_group_size(x, y, 1))) void KNAME(KARGS) {
#define KERNEL_BODY KTENSORS
#define KERNEL_END }
#define SHARED local
#define ENTRY_WANTED(selector, k) 1
/* The launch: its values (KARGS), work-item ids, barriers. */
#define VALUE(name) name
#define LANES_OUTPUTS() n_items /* of sums in lanes (prelude.kernel): n_items counts the outputs */
#define GLOBAL_ID() ((idx_t)get_global_id(0))
#define LOCAL_ID() ((int)get_local_id(0))
#define LOCAL_ID_Y() ((int)get_local_id(1))
#define GROUP_ID() ((idx_t)get_group_id(0))
#define GROUP_SIZE() ((int)get_local_size(0))
#define GROUP_ID_Y() ((idx_t)get_group_id(1))
#define GROUP_ID_Z() ((idx_t)get_group_id(2))
#define GROUP_COUNT_Z() get_num_groups(2)
#define ROW_GROUP(rows) get_group_id(0) /* a dense kernel's row block */
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define BARRIER_GLOBAL() barrier(CLK_GLOBAL_MEM_FENCE)
/* Types, conversions, loops. */
#define CAST(T, x) ((T)(x))
#define VEC2(T, a, b) ((T)(a, b))
#define VEC3(T, a, b, c) ((T)(a, b, c))
#define VEC4(T, a, b, c, d) ((T)(a, b, c, d))
#define UNROLL _Pragma("unroll")
#define PRECISE
#define INLINE inline
#define STRUCT(name) typedef struct name name; struct name
#define FLOAT_BITS(x) as_int(x)
#define WORD_OF4(words, i) (((local TO *)(words))[i])
#define WORD4_AT(words, word, k) WORD_OF4(words, (word) * 4 + (k))
#define DOT4(a, b, c, d, v) ((a) * (v).x + (b) * (v).y + (c) * (v).z + (d) * (v).w)
/* A pointer: int offsets from it take fewer registers than long ones. */
#define VIEW(type, view, buf, at) global const type *view = (buf) + (at)
#define VIEWED(view, buf, i) (view)[i]
#define ATOMIC_ADD(x, v) atomic_add(&(x), (v))
#define ATOMIC_MIN(x, v) atomic_min(&(x), (v))
#define ATOMIC_MAX(x, v) atomic_max(&(x), (v))
/* Buffer lists X(binding, access, type, name): kernel parameters (arena.cl),
 * which helpers take as parameters too, as their shared arrays. */
#define ACCESS_RO const
#define ACCESS_RW
#define ACCESS_COHERENT
#define LIST_ARG(b, access, type, name) BUFFER_ARG(global ACCESS_##access type *, name)
#define LIST_POINTER(b, access, type, name) BUFFER_POINTER(global ACCESS_##access type *, name)
#define LIST_PARAM(b, access, type, name) global ACCESS_##access type *name,
#define LIST_NAME(b, access, type, name) name,
#define LIST_BINDING(b, access, type, name)
#define SHARED_PARAM(type, name) local type *name,
#define SHARED_ARG_OF(name) name,
#define INOUT /* int k[4] is a pointer in C */
/* The math of math.glsl, from OpenCL's built-ins. */
#define exp_ exp
#define expm1_ expm1
#define log_ log
#define pow_ pow
#define sin_ sin
#define cos_ cos
#define acos_ acos
