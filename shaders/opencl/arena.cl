/* Buffer parameters in either form of a program (backends/opencl/cl_arena.c),
 * put before every program the backend builds. With ARENA defined, the
 * kernel's first parameter is the arena and each buffer parameter is a
 * byte offset into it, NAME_at, turned into the pointer NAME by the
 * kernel's first line (BUFFER_POINTER, gathered in KTENSORS, CELL_POINTERS,
 * SORT_POINTERS); else each buffer parameter is the pointer itself and the
 * first line is empty. Buffer parameters come first, then the scalars:
 *   kernel void k(ARENA_FIRST BUFFER_ARG(global float *, x) const long n)
 *   { BUFFER_POINTER(global float *, x) ... } */
#ifdef ARENA
#define ARENA_FIRST global uchar *arena_,
#define BUFFER_ARG(type, name) const long name##_at,
#define BUFFER_POINTER(type, name) type name = (type)(arena_ + name##_at);
#else
#define ARENA_FIRST
#define BUFFER_ARG(type, name) type name,
#define BUFFER_POINTER(type, name)
#endif
