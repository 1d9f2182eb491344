/*
 * The CPU kernels' view of the context's thread pool (core/thread_pool.h):
 * a job over the rows of one node.
 */
#ifndef MLFF_BACKENDS_CPU_POOL_H
#define MLFF_BACKENDS_CPU_POOL_H

#include <stdint.h>

#include "core/thread_pool.h"

struct mlff_exec_node;

/* Does rows [begin, end) of the node's work; `extra` is the kernel's own data. */
typedef void (*cpu_range_fn)(const struct mlff_exec_node *node, void *extra, int64_t begin,
                             int64_t end);

/* Runs fn over [0, n) on the pool; below `serial_below` items on the caller alone. */
void cpu_pool_for(mlff_thread_pool *pool, int64_t n, int64_t serial_below, cpu_range_fn fn,
                  const struct mlff_exec_node *node, void *extra);

#endif
