/* Extended XYZ writer and its growing buffer (see xyz.h). */
#include "xyz.h"

#include "xyz_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xyz_buffer_free(xyz_buffer *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

static int buffer_reserve(xyz_buffer *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (extra < b->capacity - b->size)
        return 0;
    size_t cap = b->capacity ? b->capacity : 4096;
    while (cap - b->size <= extra) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        cap *= 2;
    }
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = 1;
        return -1;
    }
    b->data = grown;
    b->capacity = cap;
    return 0;
}

int xyz_buffer_append(xyz_buffer *b, const char *bytes, size_t n)
{
    if (buffer_reserve(b, n) != 0)
        return -1;
    memcpy(b->data + b->size, bytes, n);
    b->size += n;
    b->data[b->size] = '\0';
    return 0;
}

int xyz_buffer_printf(xyz_buffer *b, const char *format, ...)
{
    if (buffer_reserve(b, 256) != 0)
        return -1;
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(b->data + b->size, b->capacity - b->size, format, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return -1;
    }
    if ((size_t)n >= b->capacity - b->size) {
        if (buffer_reserve(b, (size_t)n) != 0)
            return -1;
        va_start(ap, format);
        vsnprintf(b->data + b->size, b->capacity - b->size, format, ap);
        va_end(ap);
    }
    b->size += (size_t)n;
    return 0;
}

/* The shortest %.Ng text (N = 15..17) that reads back as exactly x. */
static void shortest(double x, char out[40])
{
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(out, 40, "%.*g", precision, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

/*
 * printf's "%*.*e" for the numbers the writer prints most, exactly and
 * without printf: x = f * 2^-shift with f < 2^53 an integer, so x * 10^q
 * is f * 10^q / 2^shift, whose integer part and remainder 128-bit integers
 * hold while q <= 22 and shift < 128 (|x| from about 10^(precision - 22)
 * to 2^53). Rounded half to even, as printf rounds the exact value;
 * anything else (NaN, infinities, subnormal, the very small or large) goes
 * to snprintf. Five times quicker than printf: a GPU evaluates an atom in
 * less time than printf takes to write its six numbers.
 */
int xyz_format_e(double x, int precision, int width, char *out)
{
    static const uint64_t powers[20] = {1ull,
                                        10ull,
                                        100ull,
                                        1000ull,
                                        10000ull,
                                        100000ull,
                                        1000000ull,
                                        10000000ull,
                                        100000000ull,
                                        1000000000ull,
                                        10000000000ull,
                                        100000000000ull,
                                        1000000000000ull,
                                        10000000000000ull,
                                        100000000000000ull,
                                        1000000000000000ull,
                                        10000000000000000ull,
                                        100000000000000000ull,
                                        1000000000000000000ull,
                                        10000000000000000000ull};
    char digits[40];
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int negative = (int)(bits >> 63), exponent10 = 0, n_digits = precision + 1;
    int biased = (int)(bits >> 52 & 0x7ff);
    uint64_t rounded = 0;
    /* Zero, and normal numbers below 2^53; the rest goes to printf. */
    int exact = precision >= 1 && precision <= 17 && biased < 0x7ff;
    if (exact && (bits << 1) == 0) {
        rounded = 0;
    } else if (exact && biased == 0) {
        exact = 0; /* subnormal */
    } else if (exact) {
        uint64_t f = (bits & (((uint64_t)1 << 52) - 1)) | ((uint64_t)1 << 52);
        int shift = 1075 - biased; /* |x| = f / 2^shift */
        /* floor(log10(2^(e2 - 1))) with |x| in [2^(e2-1), 2^e2): the decimal exponent or one less. */
        int e2 = biased - 1022;
        exponent10 = (int)(((int64_t)(e2 - 1) * 78913) >> 18);
        exact = 0;
        for (int attempt = 0; attempt < 2 && shift > 0 && shift < 128; attempt++) {
            int q = precision - exponent10;
            if (q < 0 || q > 22)
                break;
            /* f * 10^q in 128 bits (10^q = 10^19 * 10^(q - 19) above 19) */
            unsigned __int128 scaled = (unsigned __int128)f * (q > 19 ? powers[19] : powers[q]);
            if (q > 19)
                scaled *= powers[q - 19];
            unsigned __int128 whole = scaled >> shift;
            if (whole >= powers[precision + 1]) { /* the estimate was one low */
                exponent10++;
                continue;
            }
            unsigned __int128 rest = scaled - (whole << shift), half = (unsigned __int128)1 << (shift - 1);
            rounded = (uint64_t)whole;
            if (rest > half || (rest == half && (rounded & 1)))
                rounded++;
            if (rounded == powers[precision + 1]) { /* 9.99...5 rounds up to 10.00... */
                rounded = powers[precision];
                exponent10++;
            }
            exact = rounded >= powers[precision];
            break;
        }
    }
    if (!exact)
        return snprintf(out, (size_t)width + 32, "%*.*e", width, precision, x);
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    int k = n_digits;
    while (k >= 2) {
        unsigned two = (unsigned)(rounded % 100);
        rounded /= 100;
        digits[--k] = pairs[2 * two + 1];
        digits[--k] = pairs[2 * two];
    }
    if (k == 1)
        digits[0] = (char)('0' + rounded % 10);
    char body[48];
    int n = 0;
    if (negative)
        body[n++] = '-';
    body[n++] = digits[0];
    body[n++] = '.';
    memcpy(body + n, digits + 1, (size_t)precision);
    n += precision;
    body[n++] = 'e';
    body[n++] = exponent10 < 0 ? '-' : '+';
    int e = exponent10 < 0 ? -exponent10 : exponent10;
    if (e >= 100)
        body[n++] = (char)('0' + e / 100);
    body[n++] = (char)('0' + e / 10 % 10);
    body[n++] = (char)('0' + e % 10);
    int pad = width > n ? width - n : 0;
    memset(out, ' ', (size_t)pad);
    memcpy(out + pad, body, (size_t)n);
    out[pad + n] = '\0';
    return pad + n;
}

/* A kept pair: its text where that reads back (as the reader's always do),
 * else the text that does. */
static void write_pair(xyz_buffer *b, const xyz_info *in)
{
    if (in->text && xyz_pair_text_reads_back(in->text, in->key, in->value)) {
        xyz_buffer_printf(b, " %s", in->text);
        return;
    }
    char *text = xyz_pair_text(in->key, in->value);
    if (!text) {
        b->failed = 1;
        return;
    }
    xyz_buffer_printf(b, " %s", text);
    free(text);
}

static int write_frame_c(xyz_buffer *b, const xyz_frame *f, const xyz_results *results)
{
    const double *energy = results->energy, *forces = results->forces, *stress = results->stress;
    xyz_buffer_printf(b, "%lld\n", (long long)f->n_atoms);
    if (f->has_cell) {
        xyz_buffer_append(b, "Lattice=\"", 9);
        for (int k = 0; k < 9; k++) {
            char num[40];
            shortest(f->cell[k], num);
            if (k)
                xyz_buffer_append(b, " ", 1);
            xyz_buffer_append(b, num, strlen(num));
        }
        xyz_buffer_append(b, "\" ", 2);
    }
    xyz_buffer_printf(b, "Properties=species:S:1:pos:R:3%s", forces ? ":forces:R:3" : "");
    for (size_t i = 0; i < f->n_info; i++)
        if (!xyz_key_is_result(f->info[i].key) &&
            !(results->input_frame > 0 && strcmp(f->info[i].key, "input_frame") == 0))
            write_pair(b, &f->info[i]);
    if (results->input_frame > 0)
        xyz_buffer_printf(b, " input_frame=%lld", (long long)results->input_frame);
    if (energy)
        xyz_buffer_printf(b, " energy=%.17g", *energy);
    if (stress) {
        xyz_buffer_printf(b, " stress=\"");
        for (int k = 0; k < 9; k++)
            xyz_buffer_printf(b, k ? " %.10e" : "%.10e", stress[k]);
        xyz_buffer_printf(b, "\"");
    }
    xyz_buffer_printf(b, " pbc=\"%c %c %c\"\n", f->pbc[0] ? 'T' : 'F', f->pbc[1] ? 'T' : 'F',
                      f->pbc[2] ? 'T' : 'F');
    /* An atom line is at most 2 + 3 * 25 + 3 * 19 + 1 bytes (element numbers: 3 digits). */
    enum { LINE_MAX_BYTES = 2 + 3 * 25 + 3 * 19 + 1 + 8 };
    for (int64_t a = 0; a < f->n_atoms; a++) {
        if (buffer_reserve(b, LINE_MAX_BYTES + 64) != 0)
            return -1;
        char *d = b->data + b->size;
        const char *symbol = xyz_element_symbol(f->numbers[a]);
        const double *r = f->positions + 3 * a;
        if (symbol) {
            *d++ = symbol[0];
            *d++ = symbol[1] ? symbol[1] : ' ';
        } else {
            d += snprintf(d, 16, "%d", (int)f->numbers[a]);
        }
        for (int k = 0; k < 3; k++) {
            *d++ = ' ';
            d += xyz_format_e(r[k], 16, 24, d);
        }
        if (forces) {
            const double *g = forces + 3 * a;
            for (int k = 0; k < 3; k++) {
                *d++ = ' ';
                d += xyz_format_e(g[k], 10, 18, d);
            }
        }
        *d++ = '\n';
        *d = '\0';
        b->size = (size_t)(d - b->data);
    }
    return b->failed ? -1 : 0;
}

int xyz_write_frame_with(xyz_buffer *out, const xyz_frame *frame, const xyz_results *results)
{
    xyz_c_locale_scope scope;
    xyz_c_locale_enter(&scope);
    int status = write_frame_c(out, frame, results);
    xyz_c_locale_leave(&scope);
    return status;
}

int xyz_write_frame(xyz_buffer *out, const xyz_frame *frame, const double *energy,
                    const double *forces, const double *stress)
{
    xyz_results results = {energy, forces, stress, 0};
    return xyz_write_frame_with(out, frame, &results);
}
