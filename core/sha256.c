/* SHA-256 through nettle (sha256.h). */
#include "sha256.h"

#include <stdio.h>

void mlff_sha256_init(mlff_sha256_ctx *ctx)
{
    sha256_init(&ctx->nettle);
}

void mlff_sha256_update(mlff_sha256_ctx *ctx, const void *data, size_t n)
{
    if (n)
        sha256_update(&ctx->nettle, n, data);
}

void mlff_sha256_final(mlff_sha256_ctx *ctx, uint8_t out[MLFF_SHA256_DIGEST_SIZE])
{
    sha256_digest(&ctx->nettle, MLFF_SHA256_DIGEST_SIZE, out);
}

void mlff_sha256(const void *data, size_t n, uint8_t out[MLFF_SHA256_DIGEST_SIZE])
{
    mlff_sha256_ctx ctx;
    mlff_sha256_init(&ctx);
    mlff_sha256_update(&ctx, data, n);
    mlff_sha256_final(&ctx, out);
}

void mlff_sha256_hex(const uint8_t digest[MLFF_SHA256_DIGEST_SIZE], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int k = 0; k < MLFF_SHA256_DIGEST_SIZE; k++) {
        hex[2 * k] = digits[digest[k] >> 4];
        hex[2 * k + 1] = digits[digest[k] & 15];
    }
    hex[64] = 0;
}
