/* XYZ / extended XYZ reader and writer (see xyz.h for the rules). */
#include "xyz.h"

#include "mlff.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
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

typedef struct c_locale_scope {
    locale_t c;
    locale_t previous;
} c_locale_scope;

static void c_locale_enter(c_locale_scope *scope)
{
    scope->c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    scope->previous = scope->c ? uselocale(scope->c) : (locale_t)0;
}

static void c_locale_leave(c_locale_scope *scope)
{
    if (scope->c) {
        uselocale(scope->previous);
        freelocale(scope->c);
    }
}

/* ------------------------------------------------------------------------ */
/* Small text helpers                                                       */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int is_blank(const char *s)
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
static int parse_number(const char *s, size_t n, double *value)
{
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

typedef struct reader {
    const char *name;
    char *err;
    size_t err_size;
} reader;

static int report(reader *r, int code, long line, size_t frame, int64_t atom, const char *format,
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

__attribute__((format(printf, 3, 4))) static int fail_file(reader *r, int code, const char *format,
                                                           ...)
{
    va_list ap;
    va_start(ap, format);
    report(r, code, 0, 0, 0, format, ap);
    va_end(ap);
    return code;
}

__attribute__((format(printf, 4, 5))) static int fail_frame(reader *r, long line, size_t frame,
                                                            const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    report(r, XYZ_ERROR_FORMAT, line, frame, 0, format, ap);
    va_end(ap);
    return XYZ_ERROR_FORMAT;
}

__attribute__((format(printf, 5, 6))) static int fail_atom(reader *r, long line, size_t frame,
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

static void frame_free(xyz_frame *f)
{
    free(f->numbers);
    free(f->positions);
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
        frame_free(&file->frames[i]);
    free(file->frames);
    free(file->name);
    memset(file, 0, sizeof *file);
}

/* Where the needed columns are in an atom line. */
typedef struct layout {
    int total;       /* columns declared */
    int species;     /* column of the species (symbol or atomic number) */
    int pos;         /* first of the three position columns */
} layout;

/* Everything the comment-line parser needs about its frame. */
typedef struct comment_ctx {
    reader *r;
    long line;
    size_t frame_no;
    xyz_frame *f;
    layout *lay;
    size_t info_capacity;
} comment_ctx;

static int parse_lattice(comment_ctx *c, const char *value)
{
    char s1[SHOW_SIZE], s2[SHOW_SIZE];
    if (!value)
        return fail_frame(c->r, c->line, c->frame_no,
                          "malformed Lattice: expected Lattice=\"a1 a2 a3 b1 b2 b3 c1 c2 c3\"");
    const char *p = value, *tok;
    size_t n;
    int count = 0;
    double cell[9];
    while ((tok = next_list_token(&p, &n))) {
        double v;
        if (count < 9 && parse_number(tok, n, &v) != 0)
            return fail_frame(c->r, c->line, c->frame_no,
                              "malformed Lattice %s: %s is not a finite number",
                              show_str(value, s1), show(tok, n, s2));
        if (count < 9)
            cell[count] = v;
        count++;
    }
    if (count != 9)
        return fail_frame(c->r, c->line, c->frame_no,
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
        return fail_frame(c->r, c->line, c->frame_no,
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
    layout lay = {0, -1, -1};
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
                return fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: empty column name", show_str(v, s1));
            name = start;
            name_len = n;
        } else if (field == 1) {
            type = start;
            if (n != 1 || !strchr("SRIL", type[0]))
                return fail_frame(c->r, c->line, c->frame_no,
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
                return fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: column count %s is not a positive "
                                  "integer",
                                  show_str(v, s1), show(start, n, s2));
            if (lay.total > 10000000)
                return fail_frame(c->r, c->line, c->frame_no,
                                  "malformed Properties %s: too many columns", show_str(v, s1));
            if (lay.species < 0 && name_is(name, name_len, "species", "symbols")) {
                if (count != 1)
                    return fail_frame(c->r, c->line, c->frame_no,
                                      "malformed Properties %s: the species column must have "
                                      "count 1",
                                      show_str(v, s1));
                lay.species = lay.total;
            } else if (z_column < 0 && name_is(name, name_len, "Z", "numbers")) {
                if (count == 1)
                    z_column = lay.total;
            } else if (lay.pos < 0 && name_is(name, name_len, "pos", "positions")) {
                if (count != 3 || (type[0] != 'R' && type[0] != 'I'))
                    return fail_frame(c->r, c->line, c->frame_no,
                                      "malformed Properties %s: the pos column must be R:3",
                                      show_str(v, s1));
                lay.pos = lay.total;
            }
            lay.total += (int)count;
        }
        field = (field + 1) % 3;
        if (!*p)
            break;
        p++; /* past ':' */
    }
    if (field != 0)
        return fail_frame(c->r, c->line, c->frame_no,
                          "malformed Properties %s: expected NAME:TYPE:COUNT triples",
                          show_str(v, s1));
    if (lay.species < 0)
        lay.species = z_column;
    if (lay.species < 0)
        return fail_frame(c->r, c->line, c->frame_no,
                          "malformed Properties %s: no species column", show_str(v, s1));
    if (lay.pos < 0)
        return fail_frame(c->r, c->line, c->frame_no, "malformed Properties %s: no pos column",
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

/* Whether s must be quoted to read back as one word. */
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

static int add_info(comment_ctx *c, const char *key, const char *value, const char *raw_key,
                    size_t raw_key_len, const char *raw_value, size_t raw_value_len,
                    int unterminated)
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
    if (!unterminated) {
        /* verbatim: key=value as written (without spaces around '=') */
        size_t n = raw_key_len + (value ? 1 + raw_value_len : 0);
        in->text = malloc(n + 1);
        if (in->text) {
            memcpy(in->text, raw_key, raw_key_len);
            if (value) {
                in->text[raw_key_len] = '=';
                memcpy(in->text + raw_key_len + 1, raw_value, raw_value_len);
            }
            in->text[n] = '\0';
        }
    } else {
        /* a quote never closed: write it anew, properly quoted */
        int quote_key = needs_quotes(key);
        size_t n = (quote_key ? quoted_length(key) : strlen(key)) +
                   (value ? 1 + quoted_length(value) : 0);
        in->text = malloc(n + 1);
        if (in->text) {
            char *d = in->text;
            if (quote_key) {
                d = write_quoted(d, key);
            } else {
                memcpy(d, key, strlen(key));
                d += strlen(key);
            }
            if (value) {
                *d++ = '=';
                d = write_quoted(d, value);
            }
            *d = '\0';
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
        int key_open = 0, value_open = 0, has_value = 0;
        const char *key_start = p;
        p = scan_word(p, 1, key, &key_open);
        const char *key_end = p, *value_start = NULL, *value_end = NULL;
        const char *q = p;
        while (is_space(*q))
            q++;
        if (*q == '=' && !key_open) {
            q++;
            while (is_space(*q))
                q++;
            value_start = q;
            p = scan_word(q, 0, value, &value_open);
            value_end = p;
            has_value = 1;
        }
        const char *v = has_value ? value : NULL;
        if (strcmp(key, "Lattice") == 0)
            status = parse_lattice(c, v);
        else if (strcmp(key, "pbc") == 0)
            status = parse_pbc(c, v);
        else if (strcmp(key, "Properties") == 0)
            status = parse_properties(c, v);
        else
            status = add_info(c, key, v, key_start, (size_t)(key_end - key_start), value_start,
                              has_value ? (size_t)(value_end - value_start) : 0,
                              key_open || value_open);
        if (status != XYZ_OK)
            break;
    }
done:
    free(key);
    free(value);
    if (status == XYZ_ERROR_MEMORY)
        return fail_file(c->r, XYZ_ERROR_MEMORY, "out of memory");
    return status;
}

/* Parse the atom count s; 0 on success (*n > 0), else an error already reported. */
static int parse_count(reader *r, const char *s, long line, size_t frame_no, int64_t *n,
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
        return fail_frame(r, line, frame_no, "expected the number of atoms, found %s",
                          show_str(s, s1));
    if (v == 0 && !*huge)
        return fail_frame(r, line, frame_no, "the number of atoms must be positive, found %s",
                          show_str(s, s1));
    *n = v;
    return XYZ_OK;
}

/* Parse one frame whose count line is lines[*pos]; n_lines excludes trailing blank lines. */
static int parse_frame(reader *r, char **lines, size_t n_lines, size_t *pos, size_t frame_no,
                       xyz_frame *f)
{
    char s1[SHOW_SIZE];
    size_t i = *pos;
    f->count_line = (long)i + 1;
    f->comment_line = (long)i + 2;
    int64_t n = 0;
    int huge = 0;
    int status = parse_count(r, lines[i], f->count_line, frame_no, &n, &huge);
    if (status != XYZ_OK)
        return status;
    char count_text[32];
    if (huge)
        snprintf(count_text, sizeof count_text, "too many atoms");
    else
        snprintf(count_text, sizeof count_text, "%lld atom%s", (long long)n, n == 1 ? "" : "s");
    if (i + 1 >= n_lines)
        return fail_frame(r, f->count_line, frame_no,
                          "truncated: %s declared but the file ends after the atom count",
                          count_text);
    size_t available = n_lines - (i + 2);
    if (huge || (uint64_t)n > (uint64_t)available)
        return fail_frame(r, f->count_line, frame_no,
                          "truncated: %s declared but the file ends after %zu atom line%s",
                          count_text, available, available == 1 ? "" : "s");

    layout lay = {4, 0, 1}; /* species:S:1:pos:R:3 */
    comment_ctx c = {r, f->comment_line, frame_no, f, &lay, 0};
    status = parse_comment(&c, lines[i + 1]);
    if (status != XYZ_OK)
        return status;
    if (!f->has_pbc)
        f->pbc[0] = f->pbc[1] = f->pbc[2] = f->has_cell ? 1 : 0;

    f->n_atoms = n;
    f->numbers = malloc((size_t)n * sizeof *f->numbers);
    f->positions = malloc((size_t)n * 3 * sizeof *f->positions);
    if (!f->numbers || !f->positions)
        return fail_file(r, XYZ_ERROR_MEMORY, "out of memory (%lld atoms)", (long long)n);

    for (int64_t a = 0; a < n; a++) {
        const char *line = lines[i + 2 + (size_t)a];
        long lineno = xyz_atom_line(f, a);
        const char *species = NULL, *coord[3] = {NULL, NULL, NULL};
        size_t species_len = 0, coord_len[3] = {0, 0, 0};
        int column = 0;
        const char *p = line;
        while (column < lay.total) {
            while (is_space(*p))
                p++;
            if (!*p)
                break;
            const char *start = p;
            while (*p && !is_space(*p))
                p++;
            if (column == lay.species) {
                species = start;
                species_len = (size_t)(p - start);
            } else if (column >= lay.pos && column < lay.pos + 3) {
                coord[column - lay.pos] = start;
                coord_len[column - lay.pos] = (size_t)(p - start);
            }
            column++;
        }
        if (column < lay.total)
            return fail_atom(r, lineno, frame_no, a + 1, "expected %d columns, found %d",
                             lay.total, column);

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
            return fail_atom(r, lineno, frame_no, a + 1, "unknown element %s",
                             show(species, species_len, s1));
        f->numbers[a] = z;

        for (int k = 0; k < 3; k++) {
            int bad = parse_number(coord[k], coord_len[k], &f->positions[3 * a + k]);
            if (bad == 1)
                return fail_atom(r, lineno, frame_no, a + 1, "coordinate %s is not a number",
                                 show(coord[k], coord_len[k], s1));
            if (bad == 2)
                return fail_atom(r, lineno, frame_no, a + 1,
                                 "coordinate %s is not a finite number",
                                 show(coord[k], coord_len[k], s1));
        }
    }
    *pos = i + 2 + (size_t)n;
    return XYZ_OK;
}

/* Parse data[0..size) (data has room for size + 1 bytes and is ours to change). */
static int parse_all(reader *r, char *data, size_t size, xyz_file *file)
{
    const char *nul = memchr(data, '\0', size);
    if (nul) {
        long line = 1;
        for (const char *s = data; s < nul; s++)
            line += *s == '\n';
        return fail_file(r, XYZ_ERROR_FORMAT, "not a text file (a NUL byte on line %ld)", line);
    }
    data[size] = '\0';
    if (size == 0)
        return fail_file(r, XYZ_ERROR_FORMAT, "file is empty");

    size_t n_lines = 1;
    for (size_t k = 0; k < size; k++)
        n_lines += data[k] == '\n';
    if (data[size - 1] == '\n')
        n_lines--;
    char **lines = malloc(n_lines * sizeof *lines);
    if (!lines)
        return fail_file(r, XYZ_ERROR_MEMORY, "out of memory");
    char *s = data;
    for (size_t k = 0; k < n_lines; k++) {
        lines[k] = s;
        char *e = strchr(s, '\n');
        if (!e)
            e = data + size;
        if (e > s && e[-1] == '\r')
            e[-1] = '\0';
        *e = '\0';
        s = e + 1;
    }
    while (n_lines > 0 && is_blank(lines[n_lines - 1]))
        n_lines--;
    if (n_lines == 0) {
        free(lines);
        return fail_file(r, XYZ_ERROR_FORMAT, "file is empty (only blank lines)");
    }

    int status = XYZ_OK;
    size_t capacity = 0, pos = 0;
    while (pos < n_lines) {
        if (is_blank(lines[pos])) {
            pos++;
            continue;
        }
        if (file->n_frames == capacity) {
            size_t cap = capacity ? 2 * capacity : 4;
            xyz_frame *grown = realloc(file->frames, cap * sizeof *grown);
            if (!grown) {
                status = fail_file(r, XYZ_ERROR_MEMORY, "out of memory");
                break;
            }
            file->frames = grown;
            capacity = cap;
        }
        xyz_frame *f = &file->frames[file->n_frames];
        memset(f, 0, sizeof *f);
        file->n_frames++;
        status = parse_frame(r, lines, n_lines, &pos, file->n_frames, f);
        if (status != XYZ_OK)
            break;
    }
    free(lines);
    return status;
}

/* Takes ownership of data (size + 1 bytes allocated). */
static int read_owned(const char *name, char *data, size_t size, xyz_file *file, char *err,
                      size_t err_size)
{
    reader r = {name, err, err_size};
    int status;
    if (err && err_size)
        err[0] = '\0';
    memset(file, 0, sizeof *file);
    file->name = strdup(name);
    if (!file->name) {
        free(data);
        return fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
    }
    c_locale_scope scope;
    c_locale_enter(&scope);
    status = parse_all(&r, data, size, file);
    c_locale_leave(&scope);
    free(data);
    if (status != XYZ_OK)
        xyz_file_free(file);
    return status;
}

int xyz_read_memory(const char *name, const char *data, size_t size, xyz_file *file, char *err,
                    size_t err_size)
{
    reader r = {name, err, err_size};
    memset(file, 0, sizeof *file);
    char *copy = size + 1 > size ? malloc(size + 1) : NULL;
    if (!copy)
        return fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
    if (size)
        memcpy(copy, data, size);
    return read_owned(name, copy, size, file, err, err_size);
}

int xyz_read_file(const char *path, xyz_file *file, char *err, size_t err_size)
{
    int from_stdin = strcmp(path, "-") == 0;
    const char *name = from_stdin ? "<stdin>" : path;
    reader r = {name, err, err_size};
    memset(file, 0, sizeof *file);
    FILE *fp = from_stdin ? stdin : fopen(path, "rb");
    if (!fp)
        return fail_file(&r, XYZ_ERROR_IO, "cannot open: %s", strerror(errno));
    size_t size = 0, capacity = 1 << 16;
    char *data = malloc(capacity);
    if (!data) {
        if (!from_stdin)
            fclose(fp);
        return fail_file(&r, XYZ_ERROR_MEMORY, "out of memory");
    }
    for (;;) {
        if (capacity - size < 2) {
            char *grown = capacity < SIZE_MAX / 2 ? realloc(data, capacity * 2) : NULL;
            if (!grown) {
                free(data);
                if (!from_stdin)
                    fclose(fp);
                return fail_file(&r, XYZ_ERROR_MEMORY, "out of memory reading the file");
            }
            data = grown;
            capacity *= 2;
        }
        size_t got = fread(data + size, 1, capacity - size - 1, fp);
        size += got;
        if (got == 0)
            break;
    }
    int failed = ferror(fp), read_error = errno;
    if (!from_stdin)
        fclose(fp);
    if (failed) {
        free(data);
        return fail_file(&r, XYZ_ERROR_IO, "cannot read: %s",
                         read_error ? strerror(read_error) : "read error");
    }
    return read_owned(name, data, size, file, err, err_size);
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */

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

static int write_frame_c(xyz_buffer *b, const xyz_frame *f, const double *energy,
                         const double *forces, const double *stress)
{
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
        if (!xyz_key_is_result(f->info[i].key))
            xyz_buffer_printf(b, " %s", f->info[i].text);
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
    for (int64_t a = 0; a < f->n_atoms; a++) {
        const char *symbol = xyz_element_symbol(f->numbers[a]);
        const double *r = f->positions + 3 * a;
        if (symbol)
            xyz_buffer_printf(b, "%-2s", symbol);
        else
            xyz_buffer_printf(b, "%d", f->numbers[a]);
        xyz_buffer_printf(b, " %24.16e %24.16e %24.16e", r[0], r[1], r[2]);
        if (forces) {
            const double *g = forces + 3 * a;
            xyz_buffer_printf(b, " %18.10e %18.10e %18.10e", g[0], g[1], g[2]);
        }
        if (xyz_buffer_append(b, "\n", 1) != 0)
            return -1;
    }
    return b->failed ? -1 : 0;
}

int xyz_write_frame(xyz_buffer *out, const xyz_frame *frame, const double *energy,
                    const double *forces, const double *stress)
{
    c_locale_scope scope;
    c_locale_enter(&scope);
    int status = write_frame_c(out, frame, energy, forces, stress);
    c_locale_leave(&scope);
    return status;
}
