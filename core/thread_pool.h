/*
 * The context's worker threads: the CPU backend computes on them, and the
 * host side of every evaluation (the neighbour search) uses them on any
 * device. A job is a range [0, n) cut into chunks that the caller and the
 * workers take in turn. Idle workers spin only briefly (so the back-to-back
 * jobs of one evaluation find them awake) and then sleep on a condition
 * variable: on a shared machine they never burn a core against other
 * processes, which OpenMP's default spinning does.
 */
#ifndef MLFF_CORE_THREAD_POOL_H
#define MLFF_CORE_THREAD_POOL_H

#include <stddef.h>
#include <stdint.h>

/* Does [begin, end) of a job; `task` and `extra` are the caller's. */
typedef void (*mlff_range_fn)(const void *task, void *extra, int64_t begin, int64_t end);

typedef struct mlff_thread_pool mlff_thread_pool;

/* n_threads counts the caller: n_threads - 1 workers are started. NULL on failure. */
mlff_thread_pool *mlff_thread_pool_create(int n_threads);
void mlff_thread_pool_destroy(mlff_thread_pool *pool);
/* Threads that take part in a job (1 for a NULL pool). */
int mlff_thread_pool_size(const mlff_thread_pool *pool);

/* Runs fn over [0, n) and returns when all of it is done. Work below
 * `serial_below` items, or a NULL pool, runs on the caller alone. */
void mlff_thread_pool_for(mlff_thread_pool *pool, int64_t n, int64_t serial_below, mlff_range_fn fn,
                          const void *task, void *extra);
/* serial_below for a light loop over atoms (a gather, a key): shorter ones
 * take less time than waking the threads. */
#define MLFF_POOL_ATOMS_SERIAL_BELOW 16384

/* Row k of dst (rows of `bytes`) becomes row index[k] of src, k in [0, n). */
void mlff_thread_pool_gather(mlff_thread_pool *pool, void *dst, const void *src, const int32_t *index, int64_t n,
                             size_t bytes);

/* The CPUs this process may run on (taskset and container limits included). */
int mlff_available_threads(void);

#endif
