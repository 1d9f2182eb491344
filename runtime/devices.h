/* `mlff devices`: what each device is and has (api/mlff.h, mlff_describe_devices). */
#ifndef MLFF_RUNTIME_DEVICES_H
#define MLFF_RUNTIME_DEVICES_H

#include <stddef.h>

/* The report, malloc'ed (NULL when out of memory); `records`: each
 * device's tuning record in full too. */
char *mlff_runtime_describe_devices(int records);

#endif
