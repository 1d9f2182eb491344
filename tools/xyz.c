/* The XYZ / extended XYZ grammar: elements, numbers, comment lines and their
 * pairs, atom lines (see xyz.h for the rules; xyz_stream.c reads them). */
#include "xyz.h"

#include "mlff.h"
#include "xyz_internal.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Elements                                                                 */

/* The periodic table is the library's (mlff_element_symbol/number); the
 * reader only adds ASE's case-insensitivity ("CL" is Cl). */
const char *xyz_element_symbol(int z)
{
    return mlff_element_symbol(z);
}

static char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive comparison of s[0..n) with the NUL-terminated word. */
static int equal_nocase(const char *s, size_t n, const char *word)
{
    size_t i = 0;
    for (; i < n; i++)
        if (word[i] == '\0' || ascii_lower(s[i]) != ascii_lower(word[i]))
            return 0;
    return word[i] == '\0';
}

int xyz_element_number(const char *symbol, size_t len)
{
    if (!symbol || len == 0 || len > 2)
        return 0;
    char canonical[3] = {0};
    canonical[0] = (char)(ascii_lower(symbol[0]) - 'a' + 'A');
    if (len == 2)
        canonical[1] = ascii_lower(symbol[1]);
    return mlff_element_number(canonical);
}

static int starts_with_nocase(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++)
        if (*s == '\0' || ascii_lower(*s) != ascii_lower(*prefix))
            return 0;
    return 1;
}

int xyz_key_is_result(const char *key)
{
    size_t n = strlen(key);
    return equal_nocase(key, n, "free_energy") || equal_nocase(key, n, "virial") ||
           starts_with_nocase(key, "energy") || starts_with_nocase(key, "forces") ||
           starts_with_nocase(key, "stress");
}

/* ------------------------------------------------------------------------ */
/* C locale for the whole of a read or a write, whatever the process uses   */

/* Made once and never changed: a stream reads a frame at a time, and making
 * a locale per frame would cost more than parsing a small molecule. */
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale_object;

static void make_c_locale(void)
{
    c_locale_object = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

void xyz_c_locale_enter(xyz_c_locale_scope *scope)
{
    pthread_once(&c_locale_once, make_c_locale);
    scope->previous = c_locale_object ? uselocale(c_locale_object) : (locale_t)0;
}

void xyz_c_locale_leave(xyz_c_locale_scope *scope)
{
    if (c_locale_object)
        uselocale(scope->previous);
}

/* ------------------------------------------------------------------------ */
/* Small text helpers                                                       */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int xyz_is_blank(const char *s)
{
    for (; *s; s++)
        if (!is_space(*s))
            return 0;
    return 1;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Quote s[0..n) for a message: "text", shortened, control bytes as '?'. */
#define SHOW_SIZE 80
static const char *show(const char *s, size_t n, char out[SHOW_SIZE])
{
    const size_t max = 48;
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n && i < max; i++)
        out[k++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (n > max) {
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

static const char *show_str(const char *s, char out[SHOW_SIZE])
{
    return show(s, strlen(s), out);
}

/* Parse the number token s[0..n) (n > 0); 0: finite, 1: not a number, 2: not finite. */
/*
 * The common numbers of XYZ files exactly and quickly (Clinger's fast path):
 * at most 15 significant digits make an integer m that a double holds
 * exactly, and 10^k for |k| <= 22 is exact too, so m * 10^k (or m / 10^-k)
 * is one correctly rounded operation: the double strtod gives. 0, or -1 for
 * anything else (more digits, hexadecimal, inf, nan, malformed): strtod.
 */
static int fast_number(const char *s, size_t n, double *value)
{
    static const double powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0;
    int negative = 0, digits = 0, any = 0, scale = 0, exponent = 0;
    uint64_t m = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        negative = s[i++] == '-';
    for (int fraction = 0;; i++) {
        if (i < n && is_digit(s[i])) {
            any = 1;
            if (m || s[i] != '0') {
                if (++digits > 15)
                    return -1;
                m = 10 * m + (uint64_t)(s[i] - '0');
            }
            scale -= fraction;
        } else if (i < n && s[i] == '.' && !fraction) {
            fraction = 1;
        } else {
            break;
        }
    }
    if (!any)
        return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int minus = 0, exponent_digits = 0;
        if (++i < n && (s[i] == '-' || s[i] == '+'))
            minus = s[i++] == '-';
        for (; i < n && is_digit(s[i]); i++) {
            if (++exponent_digits > 4)
                return -1;
            exponent = 10 * exponent + (s[i] - '0');
        }
        if (!exponent_digits)
            return -1;
        if (minus)
            exponent = -exponent;
    }
    if (i != n)
        return -1;
    int k = scale + exponent;
    double v = (double)m;
    if (m != 0 && k < 0) {
        if (k < -22)
            return -1;
        v /= powers[-k];
    } else if (m != 0 && k > 0) {
        if (k > 22)
            return -1;
        v *= powers[k];
    }
    *value = negative ? -v : v;
    return 0;
}

static int parse_number(const char *s, size_t n, double *value)
{
    if (fast_number(s, n, value) == 0)
        return 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s + n || n == 0 || is_space(s[0]))
        return 1;
    *value = v;
    return isfinite(v) ? 0 : 2;
}

/* Split s at whitespace and commas: returns the next token (and its length
 * in *n), or NULL at the end; *p advances past it. */
static const char *next_list_token(const char **p, size_t *n)
{
    const char *s = *p;
    while (*s && (is_space(*s) || *s == ','))
        s++;
    if (!*s) {
        *p = s;
        return NULL;
    }
    const char *start = s;
    while (*s && !is_space(*s) && *s != ',')
        s++;
    *n = (size_t)(s - start);
    *p = s;
    return start;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */

static int report(xyz_reader *r, int code, long line, size_t frame, int64_t atom, const char *format,
                  va_list ap)
{
    if (!r->err || r->err_size == 0)
        return code;
    int n;
    if (line <= 0)
        n = snprintf(r->err, r->err_size, "%s: ", r->name);
    else if (atom <= 0)
        n = snprintf(r->err, r->err_size, "%s:%ld: frame %zu: ", r->name, line, frame);
    else
        n = snprintf(r->err, r->err_size, "%s:%ld: frame %zu, atom %lld: ", r->name, line, frame,
                     (long long)atom);
    if (n < 0)
        n = 0;
    if ((size_t)n < r->err_size)
        vsnprintf(r->err + n, r->err_size - (size_t)n, format, ap);
    return code;
}

__attribute__((format(printf, 3, 4))) int xyz_fail_file(xyz_reader *r, int code, const char *format,
                                                           ...)
{
    va_list ap;
    va_start(ap, format);
    report(r, code, 0, 0, 0, format, ap);
    va_end(ap);
    return code;
}

__attribute__((format(printf, 4, 5))) int xyz_fail_frame(xyz_reader *r, long line, size_t frame,
                                                            const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    report(r, XYZ_ERROR_FORMAT, line, frame, 0, format, ap);
    va_end(ap);
    return XYZ_ERROR_FORMAT;
}

__attribute__((format(printf, 5, 6))) int xyz_fail_atom(xyz_reader *r, long line, size_t frame,
                                                           int64_t atom, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    report(r, XYZ_ERROR_FORMAT, line, frame, atom, format, ap);
    va_end(ap);
    return XYZ_ERROR_FORMAT;
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */

void xyz_frame_free(xyz_frame *f)
{
    if (!f)
        return;
    free(f->numbers);
    free(f->positions);
    free(f->masses);
    for (size_t i = 0; i < f->n_info; i++) {
        free(f->info[i].key);
        free(f->info[i].value);
        free(f->info[i].text);
    }
    free(f->info);
    memset(f, 0, sizeof *f);
}

void xyz_file_free(xyz_file *file)
{
    if (!file)
        return;
    for (size_t i = 0; i < file->n_frames; i++)
        xyz_frame_free(&file->frames[i]);
    free(file->frames);
    free(file->name);
    memset(file, 0, sizeof *file);
}

/* Everything the comment-line parser needs about its frame. */
typedef struct comment_ctx {
    xyz_reader *r;
    long line;
    size_t frame_no;
    xyz_frame *f;
    xyz_layout *lay;
    size_t info_capacity;
} comment_ctx;

static int parse_lattice(comment_ctx *c, const char *value)
{
    char s1[SHOW_SIZE], s2[SHOW_SIZE];
    if (!value)
        return xyz_fail_frame(c->r, c->line, c->frame_no,
                          "malformed Lattice: expected Lattice=\"a1 a2 a3 b1 b2 b3 c1 c2 c3\"");
    const char *p = value, *tok;
    size_t n;
    int count = 0;
    double cell[9];
    while ((tok = next_list_token(&p, &n))) {
        double v;
        if (count < 9 && parse_number(tok, n, &v) != 0)
            return xyz_fail_frame(c->r, c->line, c->frame_no,
                              "malformed Lattice %s: %s is not a finite number",
                              show_str(value, s1), show(tok, n, s2));
        if (count < 9)
            cell[count] = v;
        count++;
    }
    if (count != 9)
        return xyz_fail_frame(c->r, c->line, c->frame_no,
                          "malformed Lattice %s: expected 9 numbers, found %d",
                          show_str(value, s1), count);
    memcpy(c->f->cell, cell, sizeof cell);
    c->f->has_cell = 1;
    return XYZ_OK;
}

static int parse_flag(const char *s, size_t n)
{
    if (equal_nocase(s, n, "t") || equal_nocase(s, n, "true") || equal_nocase(s, n, "1"))
        return 1;
    if (equal_nocase(s, n, "f") || equal_nocase(s, n, "false") || equal_nocase(s, n, "0"))
        return 0;
    return -1;
}

static int parse_pbc(comment_ctx *c, const char *value)
{
    char s1[SHOW_SIZE];
    const char *v = value ? value : "";
    const char *p = v, *tok;
    size_t n;
    int count = 0, flags[3] = {0, 0, 0};
    while ((tok = next_list_token(&p, &n))) {
        int flag = parse_flag(tok, n);
        if (flag < 0 || count >= 3) {
            count = -1;
            break;
        }
        flags[count++] = flag;
    }
    if (count == 1)
        flags[1] = flags[2] = flags[0];
    else if (count != 3)
        return xyz_fail_frame(c->r, c->line, c->frame_no,
                          "malformed pbc %s: expected three flags T or F, as pbc=\"T T F\"",
                          show_str(v, s1));
    for (int k = 0; k < 3; k++)
        c->f->pbc[k] = (uint8_t)flags[k];
    c->f->has_pbc = 1;
    return XYZ_OK;
}

static int name_is(const char *s, size_t n, const char *a, const char *b)
{
    return (strlen(a) == n && memcmp(s, a, n) == 0) || (strlen(b) == n && memcmp(s, b, n) == 0);
}

static int parse_properties(comment_ctx *c, const char *value)
{
    char s1[SHOW_SIZE], s2[SHOW_SIZE];
    const char *v = value ? value : "";
    xyz_layout lay = {0, -1, -1, -1};
    int z_column = -1;
    const char *p = v;
    int field = 0;
    const char *name = NULL, *type = NULL;
    size_t name_len = 0;
    for (;;) {
        const char *start = p;
        while (*p && *p != ':')
            p++;
        size_t n = (size_t)(p - start);
        if (field == 0) {
            if (n == 0)
                return xyz_fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: empty column name", show_str(v, s1));
            name = start;
            name_len = n;
        } else if (field == 1) {
            type = start;
            if (n != 1 || !strchr("SRIL", type[0]))
                return xyz_fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: column type %s is not S, R, I or L",
                                  show_str(v, s1), show(start, n, s2));
        } else {
            long count = 0;
            int ok = n > 0 && n <= 6;
            for (size_t i = 0; ok && i < n; i++) {
                ok = is_digit(start[i]);
                count = count * 10 + (start[i] - '0');
            }
            if (!ok || count < 1)
                return xyz_fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: column count %s is not a positive "
                                  "integer",
                                  show_str(v, s1), show(start, n, s2));
            if (lay.total > 10000000)
                return xyz_fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: too many columns", show_str(v, s1));
            if (lay.species < 0 && name_is(name, name_len, "species", "symbols")) {
                if (count != 1)
                    return xyz_fail_frame(c->r, c->line, c->frame_no,
                                      "malformed Properties %s: the species column must have "
                                      "count 1",
                                      show_str(v, s1));
                lay.species = lay.total;
            } else if (z_column < 0 && name_is(name, name_len, "Z", "numbers")) {
                if (count == 1)
                    z_column = lay.total;
            } else if (lay.pos < 0 && name_is(name, name_len, "pos", "positions")) {
                if (count != 3 || (type[0] != 'R' && type[0] != 'I'))
                    return xyz_fail_frame(c->r, c->line, c->frame_no,
                                      "malformed Properties %s: the pos column must be R:3",
                                      show_str(v, s1));
                lay.pos = lay.total;
            } else if (lay.masses < 0 && name_is(name, name_len, "masses", "masses")) {
                if (count != 1 || (type[0] != 'R' && type[0] != 'I'))
                    return xyz_fail_frame(c->r, c->line, c->frame_no,
                                      "malformed Properties %s: the masses column must be R:1",
                                      show_str(v, s1));
                lay.masses = lay.total;
            }
            lay.total += (int)count;
        }
        field = (field + 1) % 3;
        if (!*p)
            break;
        p++; /* past ':' */
    }
    if (field != 0)
        return xyz_fail_frame(c->r, c->line, c->frame_no,
                          "malformed Properties %s: expected NAME:TYPE:COUNT triples",
                          show_str(v, s1));
    if (lay.species < 0)
        lay.species = z_column;
    if (lay.species < 0)
        return xyz_fail_frame(c->r, c->line, c->frame_no,
                          "malformed Properties %s: no species column", show_str(v, s1));
    if (lay.pos < 0)
        return xyz_fail_frame(c->r, c->line, c->frame_no, "malformed Properties %s: no pos column",
                          show_str(v, s1));
    *c->lay = lay;
    return XYZ_OK;
}

/*
 * Scan one word of the comment line as ASE does: quotes ("..." '...') and
 * brackets ({...} [...]) group text, a backslash escapes the next character.
 * Stops at unquoted whitespace (or '=' in a key). Writes the unescaped text
 * into out; *unterminated is set when a quote or bracket was never closed.
 */
static const char *scan_word(const char *p, int is_key, char *out, int *unterminated)
{
    char close = 0;
    size_t k = 0;
    for (; *p; p++) {
        char ch = *p;
        if (ch == '\\' && p[1]) {
            out[k++] = p[1];
            p++;
        } else if (close) {
            if (ch == close)
                close = 0;
            else
                out[k++] = ch;
        } else if (ch == '"' || ch == '\'') {
            close = ch;
        } else if (ch == '{') {
            close = '}';
        } else if (ch == '[') {
            close = ']';
        } else if (is_space(ch) || (is_key && ch == '=')) {
            break;
        } else {
            out[k++] = ch;
        }
    }
    out[k] = '\0';
    *unterminated = close != 0;
    return p;
}

/* Whether s must be quoted to read back as one word (as a key, or a value). */
static int needs_quotes(const char *s)
{
    if (!*s)
        return 1;
    for (; *s; s++)
        if (is_space(*s) || strchr("=\"'{}[]\\", *s))
            return 1;
    return 0;
}

/* Length of s inside double quotes, with '"' and '\\' escaped. */
static size_t quoted_length(const char *s)
{
    size_t n = 2;
    for (; *s; s++)
        n += (*s == '"' || *s == '\\') ? 2 : 1;
    return n;
}

/* Write s inside double quotes at d, escaping '"' and '\\'; returns the end. */
static char *write_quoted(char *d, const char *s)
{
    *d++ = '"';
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            *d++ = '\\';
        *d++ = *s;
    }
    *d++ = '"';
    return d;
}

char *xyz_pair_text(const char *key, const char *value)
{
    int quote_key = needs_quotes(key), quote_value = value && needs_quotes(value);
    size_t n = (quote_key ? quoted_length(key) : strlen(key)) +
               (value ? 1 + (quote_value ? quoted_length(value) : strlen(value)) : 0);
    char *text = malloc(n + 1), *d = text;
    if (!text)
        return NULL;
    if (quote_key) {
        d = write_quoted(d, key);
    } else {
        memcpy(d, key, strlen(key));
        d += strlen(key);
    }
    if (value) {
        *d++ = '=';
        if (quote_value) {
            d = write_quoted(d, value);
        } else {
            memcpy(d, value, strlen(value));
            d += strlen(value);
        }
    }
    *d = '\0';
    return text;
}

/* One pair of the comment line from p, as the reader splits it: the
 * unescaped key and value (into key and value, each with room for the rest
 * of the line), whether there was a value, and where the key and value text
 * lie. Returns the end of the pair. */
typedef struct scanned_pair {
    const char *key_start, *key_end, *value_start, *value_end;
    int has_value, unterminated;
} scanned_pair;

static const char *scan_pair(const char *p, char *key, char *value, scanned_pair *sp)
{
    int key_open = 0, value_open = 0;
    memset(sp, 0, sizeof *sp);
    sp->key_start = p;
    p = scan_word(p, 1, key, &key_open);
    sp->key_end = p;
    const char *q = p;
    while (is_space(*q))
        q++;
    if (*q == '=' && !key_open) {
        q++;
        while (is_space(*q))
            q++;
        sp->value_start = q;
        p = scan_word(q, 0, value, &value_open);
        sp->value_end = p;
        sp->has_value = 1;
    }
    sp->unterminated = key_open || value_open;
    return p;
}

int xyz_pair_text_reads_back(const char *text, const char *key, const char *value)
{
    /* The text as the writer puts it: a space and another pair after it. */
    static const char next[] = " next=1";
    size_t n = strlen(text);
    char *line = malloc(n + sizeof next), *k = malloc(n + sizeof next), *v = malloc(n + sizeof next);
    int ok = 0;
    if (line && k && v) {
        memcpy(line, text, n);
        memcpy(line + n, next, sizeof next);
        scanned_pair sp;
        const char *p = line;
        while (is_space(*p))
            p++;
        const char *end = scan_pair(p, k, v, &sp);
        /* Never '=' first: after a key alone, " =b" would read as that key's value. */
        ok = n > 0 && text[0] != '=' && p == line && end == line + n && !sp.unterminated &&
             strcmp(k, key) == 0 &&
             (value ? sp.has_value && strcmp(v, value) == 0 : !sp.has_value);
    }
    free(line);
    free(k);
    free(v);
    return ok;
}

static int add_info(comment_ctx *c, const char *key, const char *value, const scanned_pair *sp)
{
    xyz_frame *f = c->f;
    if (f->n_info == c->info_capacity) {
        size_t cap = c->info_capacity ? 2 * c->info_capacity : 8;
        xyz_info *grown = realloc(f->info, cap * sizeof *grown);
        if (!grown)
            return XYZ_ERROR_MEMORY;
        f->info = grown;
        c->info_capacity = cap;
    }
    xyz_info *in = &f->info[f->n_info];
    memset(in, 0, sizeof *in);
    in->key = strdup(key);
    in->value = value ? strdup(value) : NULL;
    /* The input's own spelling (quotes, brackets) where it reads back as the
     * same key and value; else written anew. */
    size_t key_len = (size_t)(sp->key_end - sp->key_start);
    size_t value_len = value ? (size_t)(sp->value_end - sp->value_start) : 0;
    size_t n = key_len + (value ? 1 + value_len : 0);
    in->text = malloc(n + 1);
    if (in->text && in->key && (!value || in->value)) {
        memcpy(in->text, sp->key_start, key_len);
        if (value) {
            in->text[key_len] = '=';
            memcpy(in->text + key_len + 1, sp->value_start, value_len);
        }
        in->text[n] = '\0';
        if (sp->unterminated || !xyz_pair_text_reads_back(in->text, key, value)) {
            free(in->text);
            in->text = xyz_pair_text(key, value);
        }
    }
    if (!in->key || (value && !in->value) || !in->text) {
        free(in->key);
        free(in->value);
        free(in->text);
        return XYZ_ERROR_MEMORY;
    }
    f->n_info++;
    return XYZ_OK;
}

static int parse_comment(comment_ctx *c, const char *line)
{
    size_t len = strlen(line);
    char *key = malloc(len + 1), *value = malloc(len + 1);
    int status = XYZ_OK;
    if (!key || !value) {
        status = XYZ_ERROR_MEMORY;
        goto done;
    }
    const char *p = line;
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        scanned_pair sp;
        p = scan_pair(p, key, value, &sp);
        const char *v = sp.has_value ? value : NULL;
        if (strcmp(key, "Lattice") == 0)
            status = parse_lattice(c, v);
        else if (strcmp(key, "pbc") == 0)
            status = parse_pbc(c, v);
        else if (strcmp(key, "Properties") == 0)
            status = parse_properties(c, v);
        else
            status = add_info(c, key, v, &sp);
        if (status != XYZ_OK)
            break;
    }
done:
    free(key);
    free(value);
    if (status == XYZ_ERROR_MEMORY)
        return xyz_fail_file(c->r, XYZ_ERROR_MEMORY, "out of memory");
    return status;
}
/* Parse the atom count s; 0 on success (*n > 0), else an error already reported. */
int xyz_parse_count(xyz_reader *r, const char *s, long line, size_t frame_no, int64_t *n,
                       int *huge)
{
    char s1[SHOW_SIZE];
    const char *p = s;
    while (is_space(*p))
        p++;
    if (*p == '+')
        p++;
    const char *digits = p;
    int64_t v = 0;
    *huge = 0;
    while (is_digit(*p)) {
        if (v > (INT64_MAX - 9) / 10)
            *huge = 1;
        else
            v = v * 10 + (*p - '0');
        p++;
    }
    const char *end = p;
    while (is_space(*p))
        p++;
    if (end == digits || *p)
        return xyz_fail_frame(r, line, frame_no, "expected the number of atoms, found %s",
                          show_str(s, s1));
    if (v == 0 && !*huge)
        return xyz_fail_frame(r, line, frame_no, "the number of atoms must be positive, found %s",
                          show_str(s, s1));
    *n = *huge ? INT64_MAX : v;
    return XYZ_OK;
}

/* Whether the line is an atom count and nothing else: where a frame starts. */
int xyz_is_count_line(const char *s)
{
    xyz_reader quiet = {"", NULL, 0};
    int64_t n;
    int huge;
    return xyz_parse_count(&quiet, s, 1, 1, &n, &huge) == XYZ_OK;
}

/* Parse atom a (0-based) of f from its line, laid out as lay says. */
int xyz_parse_atom(xyz_reader *r, const char *line, long lineno, size_t frame_no, const xyz_layout *lay,
                      xyz_frame *f, int64_t a)
{
    char s1[SHOW_SIZE];
    const char *species = NULL, *coord[3] = {NULL, NULL, NULL}, *mass = NULL;
    size_t species_len = 0, coord_len[3] = {0, 0, 0}, mass_len = 0;
    int column = 0;
    const char *p = line;
    /* The line ends at a NUL or, where it lies in a split stream's text, a
     * line feed: one look-up a byte tells a word's bytes from the rest. */
    enum { WORD, SPACE, END };
    static const unsigned char kind[256] = {['\0'] = END, ['\n'] = END, [' '] = SPACE, ['\t'] = SPACE,
                                            ['\r'] = SPACE, ['\v'] = SPACE, ['\f'] = SPACE};
    while (column < lay->total) {
        while (kind[(unsigned char)*p] == SPACE)
            p++;
        if (kind[(unsigned char)*p] == END)
            break;
        const char *start = p;
        while (kind[(unsigned char)*p] == WORD)
            p++;
        if (column == lay->species) {
            species = start;
            species_len = (size_t)(p - start);
        } else if (column >= lay->pos && column < lay->pos + 3) {
            coord[column - lay->pos] = start;
            coord_len[column - lay->pos] = (size_t)(p - start);
        } else if (column == lay->masses) {
            mass = start;
            mass_len = (size_t)(p - start);
        }
        column++;
    }
    if (column < lay->total)
        return xyz_fail_atom(r, lineno, frame_no, a + 1, "expected %d columns, found %d", lay->total,
                         column);

    int z = 0;
    if (is_digit(species[0])) {
        int all_digits = species_len <= 3;
        for (size_t k = 0; all_digits && k < species_len; k++)
            all_digits = is_digit(species[k]);
        if (all_digits) {
            for (size_t k = 0; k < species_len; k++)
                z = 10 * z + (species[k] - '0');
            if (z > XYZ_MAX_ATOMIC_NUMBER)
                z = 0;
        }
    } else {
        z = xyz_element_number(species, species_len);
    }
    if (z == 0)
        return xyz_fail_atom(r, lineno, frame_no, a + 1, "unknown element %s",
                         show(species, species_len, s1));
    f->numbers[a] = z;

    for (int k = 0; k < 3; k++) {
        int bad = parse_number(coord[k], coord_len[k], &f->positions[3 * a + k]);
        if (bad == 1)
            return xyz_fail_atom(r, lineno, frame_no, a + 1, "coordinate %s is not a number",
                             show(coord[k], coord_len[k], s1));
        if (bad == 2)
            return xyz_fail_atom(r, lineno, frame_no, a + 1, "coordinate %s is not a finite number",
                             show(coord[k], coord_len[k], s1));
    }
    if (mass && f->masses) {
        int bad = parse_number(mass, mass_len, &f->masses[a]);
        if (bad)
            return xyz_fail_atom(r, lineno, frame_no, a + 1, "mass %s is not a %snumber", show(mass, mass_len, s1),
                                 bad == 2 ? "finite " : "");
    }
    return XYZ_OK;
}

int xyz_parse_comment_line(xyz_reader *r, const char *line, long line_no, size_t frame_no, xyz_frame *f,
                           xyz_layout *lay)
{
    comment_ctx c = {r, line_no, frame_no, f, lay, 0};
    return parse_comment(&c, line);
}
