/*
 * Tuning records on disk: what `mlff tune` measured on a device, in the
 * cache directory beside the device's kernels, in the kernel cache's files
 * (backends/common/kernel_cache.h: magic, format, a key over the device's
 * name and identity, its API and the library version, the payload's length
 * and checksum; written to a temporary file, then renamed). The payload is
 * the measured keys as text, "key=value" a line (core/tuning.h), with
 * comments on what was measured.
 */
#ifndef MLFF_RUNTIME_TUNING_RECORD_H
#define MLFF_RUNTIME_TUNING_RECORD_H

#include "backends/backend.h"
#include "core/tuning.h"

/* Where the record of a device lives (whether or not it is there). */
void mlff_tuning_record_path(const char *dir, const mlff_device_info *info, char *path, size_t size);

/* Applies the device's record in dir over t (changed[k] marks its keys)
 * and returns 1; 0 when there is none, or when it is not usable (corrupt,
 * or made for another device, driver or library version): then `note`
 * says why, and so does one line on stderr. */
int mlff_tuning_record_read(const char *dir, const mlff_device_info *info, mlff_tuning *t, unsigned char *changed,
                            char *note, size_t note_size);

/* Writes text as the device's record in dir (created if needed). */
mlff_status mlff_tuning_record_write(const char *dir, const mlff_device_info *info, const char *text,
                                     mlff_error *err);

#endif
