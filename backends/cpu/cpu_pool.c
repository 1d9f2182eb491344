#include "cpu_pool.h"

#include <stddef.h>

typedef struct node_job {
    cpu_range_fn fn;
    const struct mlff_exec_node *node;
    void *extra;
} node_job;

static void run_node_job(const void *task, void *unused, int64_t begin, int64_t end)
{
    (void)unused;
    const node_job *job = task;
    job->fn(job->node, job->extra, begin, end);
}

void cpu_pool_for(mlff_thread_pool *pool, int64_t n, int64_t serial_below, cpu_range_fn fn,
                  const struct mlff_exec_node *node, void *extra)
{
    const node_job job = {fn, node, extra};
    mlff_thread_pool_for(pool, n, serial_below, run_node_job, &job, NULL);
}
