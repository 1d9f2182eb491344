/* The kernel dialect in GLSL (shaders/README.md: the macros, and how to
 * write a kernel). Put in every shader the backend builds after its
 * #defines, dispatch.glsl and the node's constants, before math.glsl
 * (backends/vulkan/vk_shader.c). Also defined there: MLFF_FP64 (only when
 * the device has shaderFloat64; without it nothing here mentions double),
 * N_INPUTS, SEGMENTS and SEGMENTS2 (sums by segments: seg_off, seg_items,
 * seg2_off, seg2_items), EPI (an epilogue that reads a tensor: epi). */
#define DIALECT_OPENCL 0
#define DIALECT_GLSL 1

/* acc_t: sums and lengths in double where the device has it, else in
 * float. idx_t: an index into a buffer (storage buffers hold at most 2^32
 * bytes). The real constants are double literals where doubles exist, so
 * that TO(MLFF_PI) is pi rounded once to TO. */
#ifdef MLFF_FP64
#define acc_t double
#define MLFF_PI 3.14159265358979323846LF
#define ANI_COS_SCALE 0.95LF
#else
#define acc_t float
#define MLFF_PI 3.14159265358979323846
#define ANI_COS_SCALE 0.95
#endif
#define idx_t uint
#define sidx_t int
#define float3 vec3
#define float4 vec4
#define int3 ivec3
#define int4 ivec4
#define double4 dvec4

/* A kernel (see opencl/dialect.cl): the work-group's size, the shared
 * arrays at file scope, main. Of a program of several kernels, the host
 * compiles one at a time, the one its #define `selector` selects. */
#define ENTRY(name, n) layout(local_size_x = n) in;
#define ENTRY_GROUP(name, n) layout(local_size_x = n) in;
#define KERNEL() ENTRY(main, 64)
#define KERNEL_GROUP(n) ENTRY_GROUP(main, n)
#define KERNEL_BODY void main() {
#define KERNEL_END }
#define SHARED shared
#define ENTRY_WANTED(selector, k) ((selector) == (k))

/* The dispatch's values (dispatch.glsl): n_items, the work-items wanted in
 * all; base, the first one of this dispatch (a launch larger than the
 * device's group count limit is split into several dispatches); lanes, the
 * lanes of sums in lanes, the splits of gemm_splits. */
#define VALUE(name) pc.name
#define GLOBAL_ID() (pc.base + gl_GlobalInvocationID.x)
#define LOCAL_ID() int(gl_LocalInvocationID.x)
#define GROUP_ID() (pc.base / gl_WorkGroupSize.x + gl_WorkGroupID.x)
#define GROUP_SIZE() int(gl_WorkGroupSize.x)
#define BARRIER() barrier()
#define BARRIER_GLOBAL() memoryBarrierBuffer(); barrier()

#define CAST(T, x) T(x)
#define VEC2(T, a, b) T(a, b)
#define VEC3(T, a, b, c) T(a, b, c)
#define VEC4(T, a, b, c, d) T(a, b, c, d)
#define UNROLL [[unroll]]
#define PRECISE precise
#define INLINE
#define STRUCT(name) struct name
#define FLOAT_BITS(x) floatBitsToInt(x)

#define ATOMIC_ADD(x, v) atomicAdd(x, v)
#define ATOMIC_MIN(x, v) atomicMin(x, v)
#define ATOMIC_MAX(x, v) atomicMax(x, v)

/* Buffer lists (see opencl/dialect.cl): bindings, global to helpers. */
#define ACCESS_RO readonly
#define ACCESS_RW
#define ACCESS_COHERENT coherent
#define LIST_ARG(b, access, type, name)
#define LIST_POINTER(b, access, type, name)
#define LIST_PARAM(b, access, type, name)
#define LIST_NAME(b, access, type, name)
#define LIST_BINDING(b, access, type, name) \
    layout(std430, set = 0, binding = b) ACCESS_##access buffer name##_B { type name[]; };
#define SHARED_PARAM(type, name)
#define SHARED_ARG_OF(name)
#define INOUT inout

/* A node's buffers: one descriptor set layout for every shader, each
 * declaring the bindings it reads. */
#ifdef N_INPUTS
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
struct Push {
    uint n_items;
    uint base;
    uint lanes;
};
DISPATCH_VALUES(Push);
#endif
