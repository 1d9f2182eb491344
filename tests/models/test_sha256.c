/* SHA-256 (nettle's, through core/sha256.h) against FIPS 180-4 / NIST
 * vectors and sha256sum, one-shot and fed in pieces of every size (the
 * block-boundary cases are where bugs hide). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"

static int failures;

static void check_hex(const char *what, const uint8_t digest[32], const char *expected)
{
    char hex[65];
    mlff_sha256_hex(digest, hex);
    if (strcmp(hex, expected) != 0) {
        fprintf(stderr, "FAIL %s: got %s, expected %s\n", what, hex, expected);
        failures++;
    }
}

static void check_one_shot(const char *what, const void *data, size_t n, const char *expected)
{
    uint8_t d[32];
    mlff_sha256(data, n, d);
    check_hex(what, d, expected);
}

/* Feeds data in pieces of `piece` bytes (the last may be shorter). */
static void check_pieces(const char *what, const uint8_t *data, size_t n, size_t piece,
                         const char *expected)
{
    mlff_sha256_ctx ctx;
    uint8_t d[32];
    mlff_sha256_init(&ctx);
    for (size_t off = 0; off < n; off += piece)
        mlff_sha256_update(&ctx, data + off, n - off < piece ? n - off : piece);
    mlff_sha256_final(&ctx, d);
    char label[128];
    snprintf(label, sizeof label, "%s in pieces of %zu", what, piece);
    check_hex(label, d, expected);
}

int main(void)
{
    check_one_shot("\"abc\"", "abc", 3,
                   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    check_one_shot("\"\"", "", 0,
                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_one_shot("448-bit message", two_blocks, strlen(two_blocks),
                   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    /* One million 'a', one-shot and through awkward piece sizes. */
    const size_t million = 1000000;
    uint8_t *a = malloc(million);
    if (!a)
        return 1;
    memset(a, 'a', million);
    const char *million_a = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    check_one_shot("10^6 x 'a'", a, million, million_a);
    const size_t pieces[] = {1, 3, 63, 64, 65, 1000, 4096, 999999};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces; i++)
        check_pieces("10^6 x 'a'", a, million, pieces[i], million_a);

    /* Lengths around the padding boundaries (values from sha256sum). */
    static const struct { size_t n; const char *hex; } around[] = {
        {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
        {128, "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e"},
    };
    for (size_t i = 0; i < sizeof around / sizeof *around; i++) {
        char label[64];
        snprintf(label, sizeof label, "%zu x 'a'", around[i].n);
        check_one_shot(label, a, around[i].n, around[i].hex);
        for (size_t piece = 1; piece <= around[i].n; piece++)
            check_pieces(label, a, around[i].n, piece, around[i].hex);
    }
    free(a);

    /* Every byte value, 1024 bytes. */
    uint8_t all[1024];
    for (size_t i = 0; i < sizeof all; i++)
        all[i] = (uint8_t)i;
    const char *all_hex = "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9";
    for (size_t piece = 1; piece <= 130; piece++)
        check_pieces("bytes 0..255 x 4", all, sizeof all, piece, all_hex);

    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("sha256: all vectors pass\n");
    return failures ? 1 : 0;
}
