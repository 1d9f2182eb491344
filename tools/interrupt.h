/*
 * Stopping a streamed run cleanly. The first SIGINT or SIGTERM asks the run
 * to stop: the batch being evaluated is finished and written, nothing more
 * is read, and the command exits with EXIT_INTERRUPTED. A second one kills
 * the process at once (the output may then end in a torn frame, which
 * --resume cuts off). The run itself stops the same way after an error that
 * ends it. Threads that wait for input poll interrupt_wake_fd() beside it.
 */
#ifndef MLFF_TOOLS_INTERRUPT_H
#define MLFF_TOOLS_INTERRUPT_H

/* Installs the handlers; 0, or -1 with errno set. */
int interrupt_install(void);

/* Puts the default handlers back. */
void interrupt_uninstall(void);

/* 0 while running; else the signal that asked to stop, or -1 if the run itself did. */
int interrupt_requested(void);

/* Ask to stop from inside (an error that ends the run). */
void interrupt_stop(void);

/* Becomes readable once a stop was asked for; -1 before interrupt_install. */
int interrupt_wake_fd(void);

#endif
