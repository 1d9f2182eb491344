/* Bounded queues between threads (queue.h). */
#include "queue.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int queue_init(queue *q, size_t capacity)
{
    q->items = calloc(capacity, sizeof *q->items);
    if (!q->items)
        return -1;
    q->capacity = capacity;
    q->head = q->count = 0;
    q->closed = 0;
    pthread_mutex_init(&q->lock, NULL);
    /* Timed waits measure the monotonic clock: a changed wall clock does not stall them. */
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->not_empty, &attr);
    pthread_condattr_destroy(&attr);
    pthread_cond_init(&q->not_full, NULL);
    return 0;
}

void queue_destroy(queue *q)
{
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_empty);
    pthread_cond_destroy(&q->not_full);
    free(q->items);
    q->items = NULL;
}

void queue_push(queue *q, void *item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity)
        pthread_cond_wait(&q->not_full, &q->lock);
    q->items[(q->head + q->count) % q->capacity] = item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

void queue_close(queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

static void *take(queue *q)
{
    void *item = q->items[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    pthread_cond_signal(&q->not_full);
    return item;
}

void *queue_pop(queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->lock);
    void *item = q->count ? take(q) : NULL;
    pthread_mutex_unlock(&q->lock);
    return item;
}

int queue_pop_timed(queue *q, void **item, double seconds)
{
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    long long ns = deadline.tv_nsec + (long long)(seconds * 1e9);
    deadline.tv_sec += (time_t)(ns / 1000000000);
    deadline.tv_nsec = (long)(ns % 1000000000);
    pthread_mutex_lock(&q->lock);
    int r = 0;
    while (q->count == 0 && !q->closed && r != ETIMEDOUT)
        r = pthread_cond_timedwait(&q->not_empty, &q->lock, &deadline);
    int status;
    if (q->count) {
        *item = take(q);
        status = 1;
    } else {
        status = q->closed ? -1 : 0;
    }
    pthread_mutex_unlock(&q->lock);
    return status;
}
