/*
 * A bounded queue of pointers between two threads: the stages of a
 * streamed run hand batches on through these, and a full queue holds its
 * producer back, which is what bounds the memory in flight.
 */
#ifndef MLFF_TOOLS_QUEUE_H
#define MLFF_TOOLS_QUEUE_H

#include <pthread.h>
#include <stddef.h>

typedef struct queue {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    void **items;
    size_t capacity, head, count;
    int closed;
} queue;

/* 0, or -1 out of memory. */
int queue_init(queue *q, size_t capacity);
void queue_destroy(queue *q);

/* Waits while the queue is full. */
void queue_push(queue *q, void *item);

/* No more pushes: poppers get what is left, then the end. */
void queue_close(queue *q);

/* The next item, waiting for one; NULL once closed and empty. */
void *queue_pop(queue *q);

/* The same, waiting at most seconds: 1 with *item, 0 if none came, -1 at the end. */
int queue_pop_timed(queue *q, void **item, double seconds);

#endif
