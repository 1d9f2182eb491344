/* The kernel dialect in GLSL: what each macro means is in
 * shaders/README.md. Put in every shader after dispatch.glsl, the host's
 * #defines (MLFF_FP64 only where the device has shaderFloat64: without it
 * nothing here mentions double), and for a node its constants, bindings and
 * dispatch values (backends/vulkan/vk_shader.c); math.glsl follows.
 * acc_t: sums and lengths in double where the device has it, else in float;
 * idx_t: a buffer index (a storage buffer holds at most 2^32 bytes). The
 * real constants are double literals with doubles: TO(MLFF_PI) is pi
 * rounded once to TO. */
#define DIALECT_OPENCL 0
#define DIALECT_GLSL 1
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
#define float2 vec2
#define double2 dvec2
/* Kernels: the work-group's size, the shared arrays at file scope, main.
 * Of a file of several kernels the host compiles one at a time, the one its
 * #define `selector` selects. */
#define ENTRY(name, n) layout(local_size_x = n) in;
#define ENTRY_GROUP(name, n) layout(local_size_x = n) in;
#define KERNEL() ENTRY(main, 64)
#define KERNEL_GROUP(n) ENTRY_GROUP(main, n)
#define KERNEL_GROUP_2D(x, y) layout(local_size_x = x, local_size_y = y) in;
#define KERNEL_BODY void main() {
#define KERNEL_END }
#define SHARED shared
#define ENTRY_WANTED(selector, k) ((selector) == (k))
/* The dispatch's values (pc: n_items, base, lanes), ids, barriers. */
#define VALUE(name) pc.name
#define LANES_OUTPUTS() (pc.n_items / pc.lanes) /* pc.n_items counts the work-items */
#define GLOBAL_ID() (pc.base + gl_GlobalInvocationID.x)
#define LOCAL_ID() int(gl_LocalInvocationID.x)
#define LOCAL_ID_Y() int(gl_LocalInvocationID.y)
#define GROUP_ID() (pc.base / gl_WorkGroupSize.x + gl_WorkGroupID.x)
#define GROUP_SIZE() int(gl_WorkGroupSize.x)
#define GROUP_ID_Y() gl_WorkGroupID.y
#define GROUP_ID_Z() gl_WorkGroupID.z
#define GROUP_COUNT_Z() gl_NumWorkGroups.z
#define ROW_GROUP(rows) (pc.base / (rows) + gl_WorkGroupID.x) /* pc.n_items counts rows */
#define BARRIER() barrier()
#define BARRIER_GLOBAL() memoryBarrierBuffer(); barrier()
/* Types, conversions, loops. */
#define CAST(T, x) T(x)
#define VEC2(T, a, b) T(a, b)
#define VEC3(T, a, b, c) T(a, b, c)
#define VEC4(T, a, b, c, d) T(a, b, c, d)
#define UNROLL [[unroll]]
#define PRECISE precise
#define INLINE
#define STRUCT(name) struct name
#define FLOAT_BITS(x) floatBitsToInt(x)
#define WORD_OF4(words, i) words[(i) >> 2][(i) & 3]
#define WORD4_AT(words, word, k) words[word][k]
#define DOT4(a, b, c, d, v) dot(TO4(a, b, c, d), v)
#define VIEW(type, view, buf, at) const idx_t view = (at)
#define VIEWED(view, buf, i) buf[(view) + (i)]
#define ATOMIC_ADD(x, v) atomicAdd(x, v)
#define ATOMIC_MIN(x, v) atomicMin(x, v)
#define ATOMIC_MAX(x, v) atomicMax(x, v)
/* Buffer lists X(binding, access, type, name): bindings, global to helpers. */
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
