/*
 * The CPU backend's worker threads. A job is a range [0, n) cut into chunks
 * that the caller and the workers take in turn. Idle workers spin only
 * briefly (so the back-to-back ops of one evaluation find them awake) and
 * then sleep on a condition variable: on a shared machine they never burn a
 * core against other processes, which OpenMP's default spinning does.
 */
#ifndef MLFF_BACKENDS_CPU_POOL_H
#define MLFF_BACKENDS_CPU_POOL_H

#include <stdint.h>

struct mlff_exec_node;

/* Does rows [begin, end) of the node's work; `extra` is the kernel's own data. */
typedef void (*cpu_range_fn)(const struct mlff_exec_node *node, void *extra, int64_t begin,
                             int64_t end);

typedef struct cpu_pool cpu_pool;

/* n_threads counts the caller: n_threads - 1 workers are started. NULL on failure. */
cpu_pool *cpu_pool_create(int n_threads);
void cpu_pool_destroy(cpu_pool *pool);

/* Runs fn over [0, n) and returns when all of it is done. Work below
 * `serial_below` items runs on the caller alone (waking threads costs more). */
void cpu_pool_for(cpu_pool *pool, int64_t n, int64_t serial_below, cpu_range_fn fn,
                  const struct mlff_exec_node *node, void *extra);

#endif
