/* SHA-256 (FIPS 180-4), for the model file trailer and for tests that pin
 * converted files to a committed checksum. Incremental: init, update any
 * number of times, final. No global state. */
#ifndef MLFF_CORE_SHA256_H
#define MLFF_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define MLFF_SHA256_DIGEST_SIZE 32

typedef struct mlff_sha256_ctx {
    uint32_t state[8];
    uint64_t total_bytes;  /* bytes hashed so far */
    uint8_t block[64];     /* a partial block waiting for more input */
    size_t block_used;
} mlff_sha256_ctx;

void mlff_sha256_init(mlff_sha256_ctx *ctx);
void mlff_sha256_update(mlff_sha256_ctx *ctx, const void *data, size_t n);
/* Writes the digest; the context must be initialised again before reuse. */
void mlff_sha256_final(mlff_sha256_ctx *ctx, uint8_t out[MLFF_SHA256_DIGEST_SIZE]);

/* One-shot digest of n bytes. */
void mlff_sha256(const void *data, size_t n, uint8_t out[MLFF_SHA256_DIGEST_SIZE]);

/* The compression function over whole 64-byte blocks: the fastest the CPU
 * has, and the portable C one (tests check that they agree). */
void mlff_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);
void mlff_sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks);

/* Lower-case hex of a digest into hex (65 bytes with the NUL). */
void mlff_sha256_hex(const uint8_t digest[MLFF_SHA256_DIGEST_SIZE], char hex[65]);

#endif
