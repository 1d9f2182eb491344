/* SHA-256, for the model file's trailer and for tests that pin converted
 * files to a committed checksum: nettle's (Debian's nettle-dev), which uses
 * the CPU's SHA instructions where it has them. Incremental: init, update
 * any number of times, final. No global state. */
#ifndef MLFF_CORE_SHA256_H
#define MLFF_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include <nettle/sha2.h>

#define MLFF_SHA256_DIGEST_SIZE 32

typedef struct mlff_sha256_ctx {
    struct sha256_ctx nettle;
} mlff_sha256_ctx;

void mlff_sha256_init(mlff_sha256_ctx *ctx);
void mlff_sha256_update(mlff_sha256_ctx *ctx, const void *data, size_t n);
/* Writes the digest; the context must be initialised again before reuse. */
void mlff_sha256_final(mlff_sha256_ctx *ctx, uint8_t out[MLFF_SHA256_DIGEST_SIZE]);

/* One-shot digest of n bytes. */
void mlff_sha256(const void *data, size_t n, uint8_t out[MLFF_SHA256_DIGEST_SIZE]);

/* Lower-case hex of a digest into hex (65 bytes with the NUL). */
void mlff_sha256_hex(const uint8_t digest[MLFF_SHA256_DIGEST_SIZE], char hex[65]);

#endif
