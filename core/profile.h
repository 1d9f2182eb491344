/*
 * MLFF_LOG=profile: where the time of an evaluation goes. The model times
 * its host phases (checks and pair search, inputs, transfers, the device's
 * work); a GPU backend times every kernel on the device (OpenCL events,
 * Vulkan timestamps) and the host work it does between launches. Each
 * table goes to stderr when its owner closes: the mean per evaluation
 * (per plan execution for a backend), the first, cold one (kernel builds,
 * allocations) left out. Off unless asked for: events cost a little.
 */
#ifndef MLFF_CORE_PROFILE_H
#define MLFF_CORE_PROFILE_H

#include <stdint.h>

#define MLFF_PROFILE_ROWS 96

typedef struct mlff_profile {
    int enabled; /* host timings */
    int events;  /* and device timings (events, timestamps), which cost time of their own */
    const char *title;
    uint64_t evaluations; /* begun, the cold one included */
    const char *names[MLFF_PROFILE_ROWS];
    double seconds[MLFF_PROFILE_ROWS];
    uint64_t counts[MLFF_PROFILE_ROWS];
} mlff_profile;

/* What MLFF_LOG asks for (runtime/environment.c): nothing; "phases": host
 * timings alone, which leave the device's pace as it is; "profile" (or
 * "all"): device timings too. */
enum { MLFF_PROFILE_OFF = 0, MLFF_PROFILE_PHASES = 1, MLFF_PROFILE_EVENTS = 2 };
void mlff_profile_init(mlff_profile *p, const char *title, int mode);
/* An evaluation begins: measurements count from the second one on. */
void mlff_profile_begin(mlff_profile *p);
/* Adds one measurement to row (0 <= row < MLFF_PROFILE_ROWS), named by its first use. */
void mlff_profile_add(mlff_profile *p, int row, const char *name, double seconds);
void mlff_profile_print(const mlff_profile *p);

/* A monotonic clock, in seconds. */
double mlff_seconds(void);

#endif
