/* SIGINT and SIGTERM as a request to stop (interrupt.h). */
#include "interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Signal handlers can reach nothing else: the flag and the pipe are the
 * process's, as signals are. A lock-free atomic int is safe in a handler. */
static atomic_int stop_reason;
static int wake_pipe[2] = {-1, -1};
static struct sigaction previous_int, previous_term;

static void wake(void)
{
    if (wake_pipe[1] >= 0) {
        ssize_t ignored = write(wake_pipe[1], "x", 1);
        (void)ignored; /* full already: readable already */
    }
}

static void on_signal(int sig)
{
    int saved = errno;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&stop_reason, &expected, sig) && expected > 0) {
        /* The second signal: the user means it. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    wake();
    errno = saved;
}

/* A signal the process was started ignoring (SIGINT of a background job
 * of a shell script) stays ignored. */
static int install_one(int sig, const struct sigaction *sa, struct sigaction *previous)
{
    if (sigaction(sig, NULL, previous) != 0)
        return -1;
    if (previous->sa_handler == SIG_IGN)
        return 0;
    return sigaction(sig, sa, NULL);
}

int interrupt_install(void)
{
    if (wake_pipe[0] < 0 && pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_RESTART: the library's own system calls (kernel cache files, drivers)
     * must not fail with EINTR; our reads wait in poll(), which the pipe wakes. */
    sa.sa_flags = SA_RESTART;
    if (install_one(SIGINT, &sa, &previous_int) != 0 || install_one(SIGTERM, &sa, &previous_term) != 0)
        return -1;
    return 0;
}

void interrupt_uninstall(void)
{
    sigaction(SIGINT, &previous_int, NULL);
    sigaction(SIGTERM, &previous_term, NULL);
}

int interrupt_requested(void)
{
    return atomic_load(&stop_reason);
}

void interrupt_stop(void)
{
    int expected = 0;
    atomic_compare_exchange_strong(&stop_reason, &expected, -1);
    wake();
}

int interrupt_wake_fd(void)
{
    return wake_pipe[0];
}
