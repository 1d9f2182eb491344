/*
 * The mlff model file: one self-describing file per model.
 *
 * Layout (all integers little-endian):
 *   header   "MLFFMODL" (8 bytes), u32 format version, u32 reserved (0),
 *            u64 number of metadata entries, u64 number of tensors
 *   metadata entries: u32 key length, key bytes, u32 value length, value bytes (UTF-8)
 *   tensor directory: u32 name length, name, u32 dtype (1 = f32, 2 = f64, 3 = i32),
 *            u64 rows, u64 cols, u64 data offset (from file start, 64-byte aligned)
 *   tensor data, each zero-padded to 64 bytes (the first at the first 64-byte
 *            boundary after the directory, then in directory order, nothing
 *            else in between: readers accept only this layout)
 *   trailer  SHA-256 of every byte before it (32 bytes)
 *
 * Writers emit entries in the order given, so conversion is deterministic.
 * Readers check magic, version, bounds, and the checksum before trusting
 * anything.
 */
#ifndef MLFF_MODELS_MODEL_FILE_H
#define MLFF_MODELS_MODEL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/error.h"

#define MLFF_MODEL_FILE_VERSION 1

typedef struct mlff_model_tensor {
    char *name;
    mlff_dtype dtype; /* F32, F64 or I32 */
    int64_t rows, cols;
    void *data;       /* rows * cols elements, owned by the model file */
    int borrowed;     /* data points into the file's mapping (not freed alone) */
} mlff_model_tensor;

typedef struct mlff_model_meta {
    char *key;
    char *value;
} mlff_model_meta;

typedef struct mlff_model_file {
    mlff_model_meta *meta;
    size_t n_meta, cap_meta;
    mlff_model_tensor *tensors;
    size_t n_tensors, cap_tensors;
    void *mapping;    /* the file read, mapped, when tensors borrow from it */
    size_t mapping_size;
} mlff_model_file;

mlff_model_file *mlff_model_file_create(void);
void mlff_model_file_destroy(mlff_model_file *mf);

/* Add entries (copied). Keys and names must be unique. */
mlff_status mlff_model_file_set_meta(mlff_model_file *mf, const char *key, const char *value,
                                     mlff_error *err);
mlff_status mlff_model_file_add_tensor(mlff_model_file *mf, const char *name, mlff_dtype dtype,
                                       int64_t rows, int64_t cols, const void *data,
                                       mlff_error *err);

/* Lookups: NULL when absent. */
const char *mlff_model_file_meta(const mlff_model_file *mf, const char *key);
const mlff_model_tensor *mlff_model_file_tensor(const mlff_model_file *mf, const char *name);

mlff_status mlff_model_file_write(const mlff_model_file *mf, const char *path, mlff_error *err);

/* The checksum trailer: writes into the last MLFF_MODEL_FILE_TRAILER_SIZE
 * bytes of a file image of `size` bytes the checksum of those before them,
 * as the writer does (for tests and fuzzers that make files by hand; a
 * smaller image is left as it is). */
#define MLFF_MODEL_FILE_TRAILER_SIZE 32
void mlff_model_file_seal(uint8_t *bytes, size_t size);
mlff_status mlff_model_file_read(const char *path, mlff_model_file **out, mlff_error *err);

#endif
