/* SHA-256 as specified in FIPS 180-4, written for clarity: the compression
 * function works on 64-byte blocks (with the x86 SHA instructions where the
 * CPU has them); update feeds whole blocks straight from the caller's buffer
 * and keeps only a tail in the context. */
#include "sha256.h"

#include <string.h>

/* First 32 bits of the fractional parts of the cube roots of the first 64
 * primes (FIPS 180-4, 4.2.2). */
static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static uint32_t load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void store_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void compress_portable(uint32_t state[8], const uint8_t block[64])
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = load_be32(block + 4 * t);
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        uint32_t sum1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t choose = (e & f) ^ (~e & g);
        uint32_t t1 = h + sum1 + choose + round_constants[t] + w[t];
        uint32_t sum0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = sum0 + majority;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

void mlff_sha256_blocks_portable(uint32_t state[8], const uint8_t *data, size_t blocks)
{
    for (; blocks > 0; blocks--, data += 64)
        compress_portable(state, data);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* CPUID leaf 7, EBX bit 29: clang (14, 15) knows no "sha" for
 * __builtin_cpu_supports, so both compilers ask the processor directly. */
static int cpu_has_sha_ni(void)
{
    unsigned a, b, c, d;
    return __builtin_cpu_supports("sse4.1") && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 29 & 1);
}

/* The same with the x86 SHA extensions (about 5x faster: loading a model
 * hashes 55 MB). The state lives as ABEF and CDGH, the layout the
 * sha256rnds2 instruction works on; each step does four rounds with four
 * message words, and the message schedule runs four words ahead. */
__attribute__((target("sha,sse4.1"))) static void blocks_sha_ni(uint32_t state[8], const uint8_t *data,
                                                                  size_t blocks)
{
    const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xb1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1b);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xf0);
    for (; blocks > 0; blocks--, data += 64) {
        const __m128i abef_in = abef, cdgh_in = cdgh;
        __m128i w[4];
        for (int q = 0; q < 4; q++)
            w[q] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * q)), byte_swap);
        for (int step = 0; step < 16; step++) {
            const __m128i words = w[step & 3];
            __m128i msg = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&round_constants[4 * step]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(msg, 0x0e));
            if (step < 12) {
                /* w[t+16..t+19] from w[t..t+3] (this slot), w[t+4..], w[t+9..], w[t+12..]. */
                __m128i next = _mm_sha256msg1_epu32(words, w[(step + 1) & 3]);
                next = _mm_add_epi32(next, _mm_alignr_epi8(w[(step + 3) & 3], w[(step + 2) & 3], 4));
                w[step & 3] = _mm_sha256msg2_epu32(next, w[(step + 3) & 3]);
            }
        }
        abef = _mm_add_epi32(abef, abef_in);
        cdgh = _mm_add_epi32(cdgh, cdgh_in);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1b);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xb1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xf0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

void mlff_sha256_blocks(uint32_t state[8], const uint8_t *data, size_t blocks)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (cpu_has_sha_ni()) {
        blocks_sha_ni(state, data, blocks);
        return;
    }
#endif
    mlff_sha256_blocks_portable(state, data, blocks);
}

void mlff_sha256_init(mlff_sha256_ctx *ctx)
{
    /* Fractional parts of the square roots of the first 8 primes (4.2.2 / 5.3.3). */
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(ctx->state, initial, sizeof initial);
    ctx->total_bytes = 0;
    ctx->block_used = 0;
}

void mlff_sha256_update(mlff_sha256_ctx *ctx, const void *data, size_t n)
{
    const uint8_t *p = data;
    ctx->total_bytes += n;
    /* Complete a pending partial block first. */
    if (ctx->block_used > 0) {
        size_t take = 64 - ctx->block_used;
        if (take > n)
            take = n;
        memcpy(ctx->block + ctx->block_used, p, take);
        ctx->block_used += take;
        p += take;
        n -= take;
        if (ctx->block_used < 64)
            return;
        mlff_sha256_blocks(ctx->state, ctx->block, 1);
        ctx->block_used = 0;
    }
    mlff_sha256_blocks(ctx->state, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
    if (n > 0) {
        memcpy(ctx->block, p, n);
        ctx->block_used = n;
    }
}

void mlff_sha256_final(mlff_sha256_ctx *ctx, uint8_t out[MLFF_SHA256_DIGEST_SIZE])
{
    /* Padding: a 1 bit, zeros up to 56 mod 64, then the length in bits (64-bit big-endian). */
    uint64_t bit_length = ctx->total_bytes * 8;
    uint8_t pad[72] = {0x80};
    size_t pad_len = (ctx->block_used < 56 ? 56 : 120) - ctx->block_used;
    uint8_t length[8];
    for (int i = 0; i < 8; i++)
        length[i] = (uint8_t)(bit_length >> (56 - 8 * i));
    mlff_sha256_update(ctx, pad, pad_len);
    mlff_sha256_update(ctx, length, sizeof length);
    for (int i = 0; i < 8; i++)
        store_be32(out + 4 * i, ctx->state[i]);
    memset(ctx, 0, sizeof *ctx);
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
    for (int i = 0; i < MLFF_SHA256_DIGEST_SIZE; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = '\0';
}
