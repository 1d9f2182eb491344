/* The kernel dialect in OpenCL C (shaders/README.md: the macros, and how to
 * write a kernel). Put before every program the backend builds, after
 * arena.cl (backends/opencl/cl_program.c); each node's kernel then follows
 * with KNAME, KARGS, KTENSORS and its constants defined. */
#define DIALECT_OPENCL 1
#define DIALECT_GLSL 0

/* acc_t: sums and lengths in double where the device has it (as the CPU
 * backend does), else in float. idx_t: an index into a buffer (long: a
 * buffer may hold more than 2^31 words). */
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

/* A kernel: KERNEL() (work-groups of any size) or KERNEL_GROUP(n) (of n
 * items), its SHARED arrays, KERNEL_BODY, the body, KERNEL_END. A program
 * of several kernels (cell_lists, segment_sort) names them: ENTRY(name, n)
 * for groups of n that OpenCL's host chooses at launch, ENTRY_GROUP(name,
 * n) for a fixed n; every kernel is in the program (ENTRY_WANTED). */
#define ENTRY(name, n) kernel void name(KARGS) {
#define ENTRY_GROUP(name, n) kernel __attribute__((reqd_work_group_size(n, 1, 1))) void name(KARGS) {
#define KERNEL() ENTRY(KNAME, 64)
#define KERNEL_GROUP(n) ENTRY_GROUP(KNAME, n)
#define KERNEL_BODY KTENSORS
#define KERNEL_END }
#define SHARED local
#define ENTRY_WANTED(selector, k) 1

/* The launch's values (KARGS): VALUE(n_items), VALUE(lanes), ... */
#define VALUE(name) name
#define GLOBAL_ID() ((idx_t)get_global_id(0))
#define LOCAL_ID() ((int)get_local_id(0))
#define GROUP_ID() ((idx_t)get_group_id(0))
#define GROUP_SIZE() ((int)get_local_size(0))
#define BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define BARRIER_GLOBAL() barrier(CLK_GLOBAL_MEM_FENCE)

/* Conversions, vectors, loops. */
#define CAST(T, x) ((T)(x))
#define VEC2(T, a, b) ((T)(a, b))
#define VEC3(T, a, b, c) ((T)(a, b, c))
#define VEC4(T, a, b, c, d) ((T)(a, b, c, d))
#define UNROLL _Pragma("unroll")
#define PRECISE
#define INLINE inline
#define STRUCT(name) typedef struct name name; struct name
#define FLOAT_BITS(x) as_int(x)

/* Atomics on int (global or shared); each gives the value before. */
#define ATOMIC_ADD(x, v) atomic_add(&(x), (v))
#define ATOMIC_MIN(x, v) atomic_min(&(x), (v))
#define ATOMIC_MAX(x, v) atomic_max(&(x), (v))

/* Buffer lists of a program of several kernels: X(binding, access, type,
 * name), access RO, RW or COHERENT (GLSL's, for items that read what
 * others of the group wrote). LIST_ARG and LIST_POINTER make KARGS and
 * KTENSORS (arena.cl); helpers take the buffers as parameters here
 * (LIST_PARAM), called with them (LIST_NAME), and their shared arrays
 * likewise (SHARED_PARAM, SHARED_ARG_OF): GLSL's are global. */
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
/* An array parameter a helper writes: int k[4] is a pointer in C. */
#define INOUT

/* The math of math.glsl, from OpenCL's built-ins. */
#define exp_ exp
#define expm1_ expm1
#define log_ log
#define pow_ pow
#define sin_ sin
#define cos_ cos
#define acos_ acos
