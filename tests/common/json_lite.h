/* Just enough JSON for the reference files: the numbers of one key's value,
 * flattened (nested arrays row by row). Tests only. */
#ifndef MLFF_TESTS_JSON_LITE_H
#define MLFF_TESTS_JSON_LITE_H

#include <stddef.h>

/* Whole file as a NUL-terminated string, or NULL. Free with free(). */
char *json_read_file(const char *path);

/* Numbers of the first value of "key" (a number, or arrays of numbers;
 * true/false count as 1/0, null gives no number). Returns the count (at
 * most cap stored), or -1 if absent. */
long json_numbers(const char *json, const char *key, double *out, long cap);

#endif
