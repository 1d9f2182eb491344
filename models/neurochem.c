/*
 * NeuroChem importer (file layout in neurochem.h).
 *
 * Everything read is checked: sizes against the files, layer sizes against
 * each other and against the AEV length that the constants imply, element
 * lists against each other. Text is parsed by a small tokenizer and a
 * recursive-descent parser rather than by pattern matching, so anything
 * unexpected is reported with its file and line instead of being skipped.
 *
 * Numbers: the six AEV constant arrays are rounded to float32 and widened
 * back, the way TorchANI reads them (the reference energies depend on it);
 * cutoffs and self energies stay double. Text numbers go through strtod,
 * which follows LC_NUMERIC: this library never calls setlocale, so that is
 * the "C" locale unless the host program changed it.
 */
#include "neurochem.h"

#include <bzlib.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_ELEMENTS 32
#define MAX_SYMBOL 4          /* "Cl" and a NUL, with room */
#define MAX_MEMBERS 1024
#define MAX_LAYERS 64
#define MAX_FILE_NAME 256
#define MAX_TEXT_FILE (1u << 20)        /* .info, .params, sae: a few hundred bytes in practice */
#define MAX_NETWORK_TEXT (16u << 20)    /* decompressed .nnf text: about 1 KB in practice */
#define MAX_PARAM_FILE ((size_t)1 << 31) /* one weight matrix */

/* ------------------------------------------------------------------------ */
/* Files and paths                                                          */

/* dir + "/" + rel as a new string; rel is kept as is when absolute. */
static char *join_path(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    char *p = malloc(n);
    if (!p)
        return NULL;
    if (rel[0] == '/' || dir[0] == '\0')
        snprintf(p, n, "%s", rel);
    else
        snprintf(p, n, "%s/%s", dir, rel);
    return p;
}

/* The directory part of path ("." when there is none), as a new string. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Reads a whole file into a new buffer with a NUL after the last byte (text
 * or binary alike). Files larger than max_size are refused before reading. */
static mlff_status read_file(const char *path, const char *what, size_t max_size, char **data,
                             size_t *size, mlff_error *err)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return mlff_fail(err, MLFF_ERROR_IO, "cannot open %s %s: %s", what, path, strerror(errno));
    struct stat st;
    mlff_status s = MLFF_OK;
    if (fstat(fileno(f), &st) != 0)
        s = mlff_fail(err, MLFF_ERROR_IO, "cannot read %s %s: %s", what, path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        s = mlff_fail(err, MLFF_ERROR_IO, "cannot read %s %s: not a regular file", what, path);
    else if ((uint64_t)st.st_size > max_size)
        s = mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "%s %s is too large (%lld bytes)", what, path,
                      (long long)st.st_size);
    size_t n = s == MLFF_OK ? (size_t)st.st_size : 0;
    char *buf = NULL;
    if (s == MLFF_OK && !(buf = malloc(n + 1)))
        s = mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory reading %s", path);
    if (s == MLFF_OK && fread(buf, 1, n, f) != n)
        s = mlff_fail(err, MLFF_ERROR_IO, "cannot read %s %s: %s", what, path,
                      ferror(f) ? strerror(errno) : "file shrank while reading");
    fclose(f);
    if (s != MLFF_OK) {
        free(buf);
        return s;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return MLFF_OK;
}

/* ------------------------------------------------------------------------ */
/* Lines and numbers                                                        */

/* Iterates over the lines of a text buffer, trimmed of surrounding blanks
 * (CR included, for files that crossed Windows). */
typedef struct line_reader {
    const char *text, *end;
    int number; /* of the line last returned, from 1 */
} line_reader;

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Trims blanks off both ends of [*start, *end). */
static void trim(const char **start, const char **end)
{
    while (*start < *end && is_blank(**start))
        (*start)++;
    while (*end > *start && is_blank((*end)[-1]))
        (*end)--;
}

static int next_line(line_reader *lr, const char **start, const char **end)
{
    if (lr->text >= lr->end)
        return 0;
    const char *nl = memchr(lr->text, '\n', (size_t)(lr->end - lr->text));
    const char *stop = nl ? nl : lr->end;
    *start = lr->text;
    *end = stop;
    lr->text = nl ? nl + 1 : lr->end;
    lr->number++;
    trim(start, end);
    return 1;
}

/* Copies [start, end) into dst (size cap) as a string; 0 if it does not fit. */
static int copy_span(char *dst, size_t cap, const char *start, const char *end)
{
    size_t n = (size_t)(end - start);
    if (n >= cap)
        return 0;
    memcpy(dst, start, n);
    dst[n] = '\0';
    return 1;
}

/* A finite decimal number spanning exactly [start, end). */
static int parse_double(const char *start, const char *end, double *out)
{
    char buf[64];
    if (start == end || !copy_span(buf, sizeof buf, start, end))
        return 0;
    char *stop;
    errno = 0;
    double v = strtod(buf, &stop);
    if (stop == buf || *stop != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* A decimal integer spanning exactly [start, end), within [lo, hi]. */
static int parse_int(const char *start, const char *end, long long lo, long long hi,
                     long long *out)
{
    char buf[32];
    if (start == end || !copy_span(buf, sizeof buf, start, end))
        return 0;
    const char *digits = buf + (buf[0] == '-' || buf[0] == '+');
    if (!*digits)
        return 0;
    for (const char *p = digits; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    errno = 0;
    long long v = strtoll(buf, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

/* An element symbol as the periodic table spells them: "H", "Cl". Whether
 * the element exists is the model builder's business. */
static int is_symbol(const char *start, const char *end)
{
    size_t n = (size_t)(end - start);
    if (n < 1 || n > 2 || start[0] < 'A' || start[0] > 'Z')
        return 0;
    return n == 1 || (start[1] >= 'a' && start[1] <= 'z');
}

/* ------------------------------------------------------------------------ */
/* The import state                                                         */

typedef struct float_array {
    double *v; /* float32 values, widened */
    int n;
} float_array;

typedef struct importer {
    const char *info_path;
    char *dir;            /* of the .info file */
    mlff_error *err;
    int out_of_memory;    /* set with the error, for callbacks that return only 0 */
    /* from the .info */
    char *params_rel, *sae_rel, *prefix_rel;
    int members;
    /* from the .params */
    int have_rcr, have_rca;
    double rcr, rca;
    float_array etar, shfr, zeta, shfz, etaa, shfa;
    char elements[MAX_ELEMENTS][MAX_SYMBOL];
    int n_elements;
    /* from the sae file */
    double self_energy[MAX_ELEMENTS];
    mlff_model_file *mf;
} importer;

static void importer_free(importer *im)
{
    free(im->dir);
    free(im->params_rel);
    free(im->sae_rel);
    free(im->prefix_rel);
    float_array *arrays[] = {&im->etar, &im->shfr, &im->zeta, &im->shfz, &im->etaa, &im->shfa};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        free(arrays[i]->v);
    mlff_model_file_destroy(im->mf);
}

/* A format error in a text file, at a line (0: the file as a whole). */
static mlff_status text_error(mlff_error *err, mlff_status status, const char *path, int line,
                              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static mlff_status text_error(mlff_error *err, mlff_status status, const char *path, int line,
                              const char *fmt, ...)
{
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line > 0)
        return mlff_fail(err, status, "NeuroChem file %s, line %d: %s", path, line, what);
    return mlff_fail(err, status, "NeuroChem file %s: %s", path, what);
}

static mlff_status out_of_memory(importer *im)
{
    im->out_of_memory = 1;
    return mlff_fail(im->err, MLFF_ERROR_OUT_OF_MEMORY, "out of memory importing %s",
                     im->info_path);
}

/* ------------------------------------------------------------------------ */
/* .info                                                                    */

static char *span_dup(const char *start, const char *end)
{
    return strndup(start, (size_t)(end - start));
}

static mlff_status parse_info(importer *im, const char *text, size_t size)
{
    const char *path = im->info_path;
    line_reader lr = {text, text + size, 0};
    const char *s, *e;
    char **fields[3] = {&im->params_rel, &im->sae_rel, &im->prefix_rel};
    int n = 0;
    while (next_line(&lr, &s, &e)) {
        if (s == e)
            continue;
        if (n < 3) {
            if (memchr(s, '\0', (size_t)(e - s)))
                return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number,
                                  "NUL byte in a path");
            if (!(*fields[n] = span_dup(s, e)))
                return out_of_memory(im);
        } else if (n == 3) {
            long long m;
            if (!parse_int(s, e, 1, MAX_MEMBERS, &m))
                return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number,
                                  "ensemble size '%.*s' is not an integer from 1 to %d",
                                  (int)(e - s), s, MAX_MEMBERS);
            im->members = (int)m;
        } else {
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number,
                              "unexpected extra line (an .info file has 4 lines)");
        }
        n++;
    }
    if (n < 4)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "has %d lines; expected 4 "
                          "(constants file, self-energy file, ensemble prefix, ensemble size)", n);
    return MLFF_OK;
}

/* ------------------------------------------------------------------------ */
/* .params                                                                  */

/* "[a, b, ...]": calls item() on each trimmed item. */
typedef int (*item_fn)(importer *im, void *ctx, const char *s, const char *e);

static int for_each_item(importer *im, const char *s, const char *e, item_fn item, void *ctx)
{
    if (e - s < 2 || s[0] != '[' || e[-1] != ']')
        return 0;
    s++;
    e--;
    while (1) {
        const char *comma = memchr(s, ',', (size_t)(e - s));
        const char *stop = comma ? comma : e;
        const char *is = s, *ie = stop;
        trim(&is, &ie);
        if (!item(im, ctx, is, ie))
            return 0;
        if (!comma)
            return 1;
        s = comma + 1;
    }
}

/* TorchANI reads these arrays as Python floats and stores them as float32:
 * a decimal-to-double-to-float rounding, reproduced here exactly. */
static int float_item(importer *im, void *ctx, const char *s, const char *e)
{
    float_array *a = ctx;
    double d;
    if (!parse_double(s, e, &d))
        return 0;
    float f = (float)d;
    if (!isfinite(f))
        return 0;
    if (a->n == INT_MAX)
        return 0;
    double *v = realloc(a->v, (size_t)(a->n + 1) * sizeof *v);
    if (!v) {
        out_of_memory(im);
        return 0;
    }
    a->v = v;
    a->v[a->n++] = (double)f;
    return 1;
}

static int symbol_item(importer *im, void *ctx, const char *s, const char *e)
{
    (void)ctx;
    if (!is_symbol(s, e) || im->n_elements == MAX_ELEMENTS)
        return 0;
    for (int i = 0; i < im->n_elements; i++)
        if (strlen(im->elements[i]) == (size_t)(e - s) && !memcmp(im->elements[i], s, (size_t)(e - s)))
            return 0;
    copy_span(im->elements[im->n_elements++], MAX_SYMBOL, s, e);
    return 1;
}

static float_array *float_array_for(importer *im, const char *key)
{
    static const char *const names[] = {"EtaR", "ShfR", "Zeta", "ShfZ", "EtaA", "ShfA"};
    float_array *arrays[] = {&im->etar, &im->shfr, &im->zeta, &im->shfz, &im->etaa, &im->shfa};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(key, names[i]) == 0)
            return arrays[i];
    return NULL;
}

static mlff_status params_line(importer *im, const char *path, int line, const char *key,
                               const char *s, const char *e)
{
    float_array *array = float_array_for(im, key);
    int radial = strcmp(key, "Rcr") == 0;
    if (radial || strcmp(key, "Rca") == 0) {
        int *have = radial ? &im->have_rcr : &im->have_rca;
        double *value = radial ? &im->rcr : &im->rca;
        if (*have)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, line, "%s given twice", key);
        if (!parse_double(s, e, value) || *value <= 0)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, line, "%s = '%.*s' is not "
                              "a positive number", key, (int)(e - s), s);
        *have = 1;
        return MLFF_OK;
    }
    if (array) {
        if (array->n > 0)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, line, "%s given twice", key);
        int ok = for_each_item(im, s, e, float_item, array);
        if (im->out_of_memory)
            return MLFF_ERROR_OUT_OF_MEMORY;
        if (!ok)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, line, "%s must be a list "
                              "of finite numbers like [1.0,2.0]", key);
        return MLFF_OK;
    }
    if (strcmp(key, "Atyp") == 0) {
        if (im->n_elements > 0)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, line, "Atyp given twice");
        if (!for_each_item(im, s, e, symbol_item, NULL))
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, line, "Atyp must be a list "
                              "of distinct element symbols like [H,C,N,O] (at most %d)",
                              MAX_ELEMENTS);
        return MLFF_OK;
    }
    /* DESC, TM, CG, RP, AC, ...: NeuroChem training settings that do not
     * change the model; TorchANI ignores them too. */
    return MLFF_OK;
}

static mlff_status check_params(importer *im, const char *path)
{
    const struct { const char *name; float_array *a; int single; } need[] = {
        {"EtaR", &im->etar, 1}, {"ShfR", &im->shfr, 0}, {"Zeta", &im->zeta, 1},
        {"ShfZ", &im->shfz, 0}, {"EtaA", &im->etaa, 1}, {"ShfA", &im->shfa, 0},
    };
    if (!im->have_rcr || !im->have_rca)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "lacks %s",
                          im->have_rcr ? "Rca" : "Rcr");
    for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
        if (need[i].a->n == 0)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "lacks %s", need[i].name);
        if (need[i].single && need[i].a->n != 1)
            return text_error(im->err, MLFF_ERROR_UNSUPPORTED, path, 0, "%s has %d values; mlff "
                              "supports one", need[i].name, need[i].a->n);
    }
    if (im->n_elements == 0)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "lacks Atyp");
    return MLFF_OK;
}

static mlff_status parse_params(importer *im, const char *path, const char *text, size_t size)
{
    line_reader lr = {text, text + size, 0};
    const char *s, *e;
    while (next_line(&lr, &s, &e)) {
        if (s == e)
            continue;
        const char *eq = memchr(s, '=', (size_t)(e - s));
        const char *ks = s, *ke = eq ? eq : s, *vs = eq ? eq + 1 : e, *ve = e;
        trim(&ks, &ke);
        trim(&vs, &ve);
        char key[32];
        if (!eq || ks == ke || !copy_span(key, sizeof key, ks, ke) || vs == ve)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number,
                              "expected 'key = value', found '%.*s'", (int)(e - s > 60 ? 60 : e - s), s);
        mlff_status st = params_line(im, path, lr.number, key, vs, ve);
        if (st != MLFF_OK)
            return st;
    }
    return check_params(im, path);
}

/* ------------------------------------------------------------------------ */
/* Self energies                                                            */

static int element_index(const importer *im, const char *s, const char *e)
{
    for (int i = 0; i < im->n_elements; i++)
        if (strlen(im->elements[i]) == (size_t)(e - s) && !memcmp(im->elements[i], s, (size_t)(e - s)))
            return i;
    return -1;
}

/* Lines "Sym,index=value": index must be the symbol's position in Atyp. */
static mlff_status parse_sae(importer *im, const char *path, const char *text, size_t size)
{
    line_reader lr = {text, text + size, 0};
    const char *s, *e;
    int seen[MAX_ELEMENTS] = {0};
    while (next_line(&lr, &s, &e)) {
        if (s == e)
            continue;
        const char *comma = memchr(s, ',', (size_t)(e - s));
        const char *eq = comma ? memchr(comma, '=', (size_t)(e - comma)) : NULL;
        if (!eq)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number,
                              "expected 'Symbol,index=energy'");
        const char *ss = s, *se = comma, *is = comma + 1, *ie = eq, *vs = eq + 1, *ve = e;
        trim(&ss, &se);
        trim(&is, &ie);
        trim(&vs, &ve);
        int el = element_index(im, ss, se);
        long long index;
        double value;
        if (el < 0)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number, "element '%.*s' "
                              "is not in the constants file's Atyp", (int)(se - ss), ss);
        if (!parse_int(is, ie, 0, MAX_ELEMENTS, &index) || index != el)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number, "index '%.*s' of "
                              "%s should be %d, its position in Atyp", (int)(ie - is), is,
                              im->elements[el], el);
        if (!parse_double(vs, ve, &value))
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number, "energy '%.*s' "
                              "is not a finite number", (int)(ve - vs), vs);
        if (seen[el]++)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, lr.number, "%s given twice",
                              im->elements[el]);
        im->self_energy[el] = value;
    }
    for (int i = 0; i < im->n_elements; i++)
        if (!seen[i])
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "has no self energy for "
                              "%s", im->elements[i]);
    return MLFF_OK;
}

/* ------------------------------------------------------------------------ */
/* Network description (.nnf)                                               */

/* Splits an .nnf file into its declared length and its bzip2 stream, and
 * decompresses it. The text is NUL-terminated (NeuroChem's own text also
 * ends in a NUL, which the parser accepts as trailing padding). */
static mlff_status decompress_nnf(importer *im, const char *path, char *data, size_t size,
                                  char **text, size_t *text_len)
{
    const char *eq = memchr(data, '=', size < 24 ? size : 24);
    long long declared;
    if (!eq || !parse_int(data, eq, 1, MAX_NETWORK_TEXT, &declared) || data[0] == '+' ||
        data[0] == '-' || (size_t)(eq - data) + 1 >= size || eq[1] != '\n')
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "does not start with "
                          "'<length>=' and a newline (not a NeuroChem network file?)");
    char *stream = (char *)eq + 2;
    size_t stream_len = size - (size_t)(stream - data);
    if (stream_len > UINT_MAX)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "is too large");
    /* One spare byte: a longer text than declared then shows as a mismatch. */
    unsigned out_len = (unsigned)declared + 1;
    char *out = malloc((size_t)out_len + 1);
    if (!out)
        return out_of_memory(im);
    int rc = BZ2_bzBuffToBuffDecompress(out, &out_len, stream, (unsigned)stream_len, 0, 0);
    const char *why = NULL;
    switch (rc) {
    case BZ_OK: break;
    case BZ_OUTBUFF_FULL: why = "decompresses to more bytes than its header says"; break;
    case BZ_UNEXPECTED_EOF: why = "its bzip2 stream is truncated"; break;
    case BZ_DATA_ERROR_MAGIC: why = "its payload is not a bzip2 stream"; break;
    case BZ_DATA_ERROR: why = "its bzip2 stream is corrupt"; break;
    case BZ_MEM_ERROR: free(out); return out_of_memory(im);
    default: why = "bzip2 could not decompress it"; break;
    }
    if (!why && out_len != (unsigned)declared)
        why = "decompresses to a length other than its header says";
    if (why) {
        free(out);
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "%s (bzip2 code %d)", why,
                          rc);
    }
    out[out_len] = '\0';
    *text = out;
    *text_len = out_len;
    return MLFF_OK;
}

enum { TOK_END, TOK_WORD, TOK_PUNCT, TOK_VALUE };

typedef struct token {
    int kind;
    const char *s, *e; /* text of a word or value */
    char punct;
    int line;
} token;

/* Tokenizer for the network text. Words: letters, digits, '_', '.', '-',
 * '+'. Punctuation: = ; [ ] $. Values (the right side of '=') are taken raw
 * up to ';' because file references hold ':' and brackets. */
typedef struct lexer {
    const char *text, *end, *pos;
    int line;
    const char *path;
    mlff_error *err;
} lexer;

static int is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-' || c == '+';
}

static void skip_space(lexer *lx)
{
    for (; lx->pos < lx->end && (is_blank(*lx->pos) || *lx->pos == '\n'); lx->pos++)
        if (*lx->pos == '\n')
            lx->line++;
}

static mlff_status lex_error(lexer *lx, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static mlff_status lex_error(lexer *lx, int line, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return mlff_fail(lx->err, MLFF_ERROR_MODEL_FORMAT, "NeuroChem file %s, line %d: %s",
                     lx->path, line, what);
}

static mlff_status next_token(lexer *lx, token *t)
{
    skip_space(lx);
    t->line = lx->line;
    t->s = t->e = lx->pos;
    if (lx->pos == lx->end) {
        t->kind = TOK_END;
        return MLFF_OK;
    }
    char c = *lx->pos;
    if (c != '\0' && strchr("=;[]$", c)) {
        t->kind = TOK_PUNCT;
        t->punct = c;
        t->e = ++lx->pos;
        return MLFF_OK;
    }
    if (!is_word_char(c)) {
        if (c > ' ' && c < 127)
            return lex_error(lx, lx->line, "unexpected character '%c'", c);
        return lex_error(lx, lx->line, "unexpected byte 0x%02x", (unsigned char)c);
    }
    while (lx->pos < lx->end && is_word_char(*lx->pos))
        lx->pos++;
    t->kind = TOK_WORD;
    t->e = lx->pos;
    return MLFF_OK;
}

/* The raw value after '=', up to ';' on the same line (';' consumed). */
static mlff_status next_value(lexer *lx, token *t)
{
    while (lx->pos < lx->end && is_blank(*lx->pos))
        lx->pos++;
    t->kind = TOK_VALUE;
    t->line = lx->line;
    t->s = lx->pos;
    while (lx->pos < lx->end && *lx->pos != ';' && *lx->pos != '\n' && *lx->pos != '\0')
        lx->pos++;
    if (lx->pos == lx->end || *lx->pos != ';')
        return lex_error(lx, t->line, "expected ';' after the value");
    t->e = lx->pos++;
    trim(&t->s, &t->e);
    if (t->s == t->e)
        return lex_error(lx, t->line, "empty value");
    return MLFF_OK;
}

static int is_punct(const token *t, char c)
{
    return t->kind == TOK_PUNCT && t->punct == c;
}

static int is_word(const token *t, const char *w)
{
    return t->kind == TOK_WORD && strlen(w) == (size_t)(t->e - t->s) &&
           !memcmp(t->s, w, (size_t)(t->e - t->s));
}

static const char *describe(const token *t, char *buf, size_t cap)
{
    if (t->kind == TOK_END)
        return "the end of the text";
    snprintf(buf, cap, "'%.*s'", (int)(t->e - t->s > 40 ? 40 : t->e - t->s), t->s);
    return buf;
}

static mlff_status expect_punct(lexer *lx, char c)
{
    token t;
    char buf[64];
    mlff_status s = next_token(lx, &t);
    if (s == MLFF_OK && !is_punct(&t, c))
        s = lex_error(lx, t.line, "expected '%c', found %s", c, describe(&t, buf, sizeof buf));
    return s;
}

/* The next token must be the word w, or any word when w is NULL. */
static mlff_status expect_word(lexer *lx, const char *w, token *t)
{
    char buf[64];
    mlff_status s = next_token(lx, t);
    if (s == MLFF_OK && (w ? !is_word(t, w) : t->kind != TOK_WORD))
        s = lex_error(lx, t->line, "expected %s%s%s, found %s", w ? "'" : "a word", w ? w : "",
                      w ? "'" : "", describe(t, buf, sizeof buf));
    return s;
}

typedef struct nnf_layer {
    long long nodes, blocksize, activation;
    char weights_file[MAX_FILE_NAME], biases_file[MAX_FILE_NAME];
    long long weights_count, biases_count;
    int line; /* of "layer" */
} nnf_layer;

typedef struct nnf_network {
    long long inputsize;
    char symbol[MAX_SYMBOL];
    nnf_layer layers[MAX_LAYERS];
    int n_layers;
} nnf_network;

/* "FILE:name[count]" with a plain file name (no directories). */
static int parse_file_ref(const token *v, char *name, long long *count)
{
    const char *s = v->s, *e = v->e;
    if (e - s < 5 || memcmp(s, "FILE:", 5) != 0)
        return 0;
    s += 5;
    const char *open = memchr(s, '[', (size_t)(e - s));
    if (!open || e[-1] != ']' || open == s)
        return 0;
    for (const char *p = s; p < open; p++)
        if (!is_word_char(*p))
            return 0;
    if ((open - s == 1 && s[0] == '.') || (open - s == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    return copy_span(name, MAX_FILE_NAME, s, open) &&
           parse_int(open + 1, e - 1, 1, LLONG_MAX, count);
}

/* "nan", a number, or an integer: what NeuroChem writes for the settings we
 * do not use. */
static int is_plain_number(const token *v)
{
    double d;
    size_t n = (size_t)(v->e - v->s);
    if ((n == 3 && !memcmp(v->s, "nan", 3)) || (n == 4 && !memcmp(v->s, "-nan", 4)))
        return 1;
    return parse_double(v->s, v->e, &d);
}

enum { HAVE_NODES = 1, HAVE_ACTIVATION = 2, HAVE_BLOCKSIZE = 4, HAVE_WEIGHTS = 8, HAVE_BIASES = 16,
       HAVE_ALL = 31 };

static mlff_status layer_assignment(lexer *lx, const token *key, const token *v, nnf_layer *layer,
                                    int *have)
{
    static const struct { const char *name; int bit; } known[] = {
        {"nodes", HAVE_NODES}, {"activation", HAVE_ACTIVATION}, {"blocksize", HAVE_BLOCKSIZE},
        {"weights", HAVE_WEIGHTS}, {"biases", HAVE_BIASES},
    };
    int bit = 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (is_word(key, known[i].name))
            bit = known[i].bit;
    int klen = (int)(key->e - key->s), vlen = (int)(v->e - v->s);
    if (bit & *have)
        return lex_error(lx, key->line, "'%.*s' given twice in one layer", klen, key->s);
    *have |= bit;
    int ok = 1;
    switch (bit) {
    case HAVE_NODES: ok = parse_int(v->s, v->e, 1, INT32_MAX, &layer->nodes); break;
    case HAVE_BLOCKSIZE: ok = parse_int(v->s, v->e, 1, INT32_MAX, &layer->blocksize); break;
    case HAVE_ACTIVATION: ok = parse_int(v->s, v->e, INT32_MIN, INT32_MAX, &layer->activation); break;
    case HAVE_WEIGHTS: ok = parse_file_ref(v, layer->weights_file, &layer->weights_count); break;
    case HAVE_BIASES: ok = parse_file_ref(v, layer->biases_file, &layer->biases_count); break;
    default:
        if (is_word(key, "type")) {
            long long type;
            if (!parse_int(v->s, v->e, LLONG_MIN, LLONG_MAX, &type))
                ok = 0;
            else if (type != 0)
                return mlff_fail(lx->err, MLFF_ERROR_UNSUPPORTED, "NeuroChem file %s, line %d: "
                                 "layer type %lld is not supported (only dense layers, type 0)",
                                 lx->path, key->line, type);
        } else {
            ok = is_plain_number(v); /* dropout, l2norm, ...: training settings */
        }
    }
    if (!ok)
        return lex_error(lx, v->line, "bad value '%.*s' for '%.*s'", vlen, v->s, klen, key->s);
    return MLFF_OK;
}

/* layer [ key=value; ... ]   ("layer" already read) */
static mlff_status parse_layer(lexer *lx, nnf_layer *layer)
{
    mlff_status s = expect_punct(lx, '[');
    int have = 0;
    char buf[64];
    while (s == MLFF_OK) {
        token key, value;
        if ((s = next_token(lx, &key)) != MLFF_OK)
            break;
        if (is_punct(&key, ']'))
            break;
        if (key.kind != TOK_WORD || key.s[0] < 'a' || key.s[0] > 'z') {
            s = lex_error(lx, key.line, "expected a setting or ']', found %s",
                          describe(&key, buf, sizeof buf));
            break;
        }
        if ((s = expect_punct(lx, '=')) != MLFF_OK || (s = next_value(lx, &value)) != MLFF_OK)
            break;
        s = layer_assignment(lx, &key, &value, layer, &have);
    }
    if (s == MLFF_OK && have != HAVE_ALL)
        s = lex_error(lx, layer->line, "layer lacks one of nodes, activation, blocksize, weights, "
                      "biases");
    return s;
}

/* inputsize=N; atom_net Sym $ layer [...] ... $ */
static mlff_status parse_network(lexer *lx, nnf_network *net)
{
    token t, v;
    char buf[64];
    mlff_status s = expect_word(lx, "inputsize", &t);
    if (s == MLFF_OK && (s = expect_punct(lx, '=')) == MLFF_OK && (s = next_value(lx, &v)) == MLFF_OK &&
        !parse_int(v.s, v.e, 1, INT32_MAX, &net->inputsize))
        s = lex_error(lx, v.line, "bad inputsize '%.*s'", (int)(v.e - v.s), v.s);
    if (s == MLFF_OK)
        s = expect_word(lx, "atom_net", &t);
    if (s == MLFF_OK && (s = expect_word(lx, NULL, &t)) == MLFF_OK &&
        (!is_symbol(t.s, t.e) || !copy_span(net->symbol, sizeof net->symbol, t.s, t.e)))
        s = lex_error(lx, t.line, "'%.*s' is not an element symbol", (int)(t.e - t.s), t.s);
    if (s == MLFF_OK)
        s = expect_punct(lx, '$');
    while (s == MLFF_OK) {
        if ((s = next_token(lx, &t)) != MLFF_OK)
            break;
        if (is_punct(&t, '$'))
            break;
        if (!is_word(&t, "layer")) {
            s = lex_error(lx, t.line, "expected 'layer' or '$', found %s",
                          describe(&t, buf, sizeof buf));
            break;
        }
        if (net->n_layers == MAX_LAYERS) {
            s = lex_error(lx, t.line, "more than %d layers", MAX_LAYERS);
            break;
        }
        nnf_layer *layer = &net->layers[net->n_layers++];
        layer->line = t.line;
        s = parse_layer(lx, layer);
    }
    if (s == MLFF_OK && net->n_layers == 0)
        s = lex_error(lx, t.line, "network has no layers");
    /* After the closing '$' only blanks and NeuroChem's trailing NUL may follow. */
    for (; s == MLFF_OK && lx->pos < lx->end; lx->pos++) {
        if (*lx->pos == '\n')
            lx->line++;
        else if (!is_blank(*lx->pos) && *lx->pos != '\0')
            s = lex_error(lx, lx->line, "unexpected text after the network's closing '$'");
    }
    return s;
}

/* The layer sizes must chain from the AEV length down to one output. */
static mlff_status check_network(importer *im, const char *path, const char *el,
                                 const nnf_network *net, long long aev_length)
{
    if (strcmp(net->symbol, el) != 0)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "describes element %s, "
                          "expected %s", net->symbol, el);
    if (net->inputsize != aev_length)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "inputsize %lld differs "
                          "from the AEV length %lld implied by the constants file",
                          net->inputsize, aev_length);
    long long in = net->inputsize;
    for (int l = 0; l < net->n_layers; l++) {
        const nnf_layer *ly = &net->layers[l];
        if (ly->blocksize != in)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, ly->line, "layer %d has "
                              "blocksize %lld but its input has %lld values", l + 1,
                              ly->blocksize, in);
        if (ly->weights_count != ly->nodes * ly->blocksize || ly->biases_count != ly->nodes)
            return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, ly->line, "layer %d: "
                              "%lld weights and %lld biases do not fit %lld nodes x %lld inputs",
                              l + 1, ly->weights_count, ly->biases_count, ly->nodes, ly->blocksize);
        if (ly->activation != MLFF_NEUROCHEM_ACTIVATION_CELU &&
            ly->activation != MLFF_NEUROCHEM_ACTIVATION_LINEAR)
            return text_error(im->err, MLFF_ERROR_UNSUPPORTED, path, ly->line, "layer %d: "
                              "activation code %lld is not supported (6 = linear, 9 = CELU)",
                              l + 1, ly->activation);
        in = ly->nodes;
    }
    if (in != 1)
        return text_error(im->err, MLFF_ERROR_MODEL_FORMAT, path, 0, "last layer has %lld nodes; "
                          "an atomic network ends in one", in);
    return MLFF_OK;
}

static mlff_status read_network(importer *im, const char *path, const char *el,
                                nnf_network *net)
{
    char *data, *text = NULL;
    size_t size, text_len = 0;
    mlff_status s = read_file(path, "NeuroChem network file", MAX_NETWORK_TEXT, &data, &size,
                              im->err);
    if (s != MLFF_OK)
        return s;
    s = decompress_nnf(im, path, data, size, &text, &text_len);
    free(data);
    if (s != MLFF_OK)
        return s;
    lexer lx = {.text = text, .end = text + text_len, .pos = text, .line = 1, .path = path,
                .err = im->err};
    memset(net, 0, sizeof *net);
    s = parse_network(&lx, net);
    free(text);
    if (s != MLFF_OK)
        return s;
    long long n_species = im->n_elements;
    long long aev_length = n_species * im->shfr.n +
                           n_species * (n_species + 1) / 2 * im->shfa.n * im->shfz.n;
    return check_network(im, path, el, net, aev_length);
}

/* ------------------------------------------------------------------------ */
/* Weights                                                                  */

/* count little-endian float32 values from file into a new array. */
static mlff_status read_floats(importer *im, const char *dir, const char *name, long long count,
                               float **out)
{
    *out = NULL;
    char *path = join_path(dir, name), *data;
    size_t size;
    if (!path)
        return out_of_memory(im);
    if ((unsigned long long)count > MAX_PARAM_FILE / 4) {
        mlff_status s = mlff_fail(im->err, MLFF_ERROR_MODEL_FORMAT, "NeuroChem parameter file %s: "
                                  "%lld values is more than mlff reads", path, count);
        free(path);
        return s;
    }
    mlff_status s = read_file(path, "NeuroChem parameter file", MAX_PARAM_FILE, &data, &size,
                              im->err);
    if (s == MLFF_OK && (uint64_t)size != (uint64_t)count * 4) {
        s = mlff_fail(im->err, MLFF_ERROR_MODEL_FORMAT, "NeuroChem parameter file %s has %zu bytes; "
                      "its network file declares %lld float32 values (%lld bytes)", path, size,
                      count, count * 4);
    }
    float *v = NULL;
    if (s == MLFF_OK && !(v = malloc((size_t)count * sizeof *v)))
        s = out_of_memory(im);
    if (s == MLFF_OK) {
        const unsigned char *b = (const unsigned char *)data;
        for (long long i = 0; i < count; i++, b += 4) {
            uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                            (uint32_t)b[3] << 24;
            memcpy(&v[i], &bits, 4);
        }
    }
    free(data);
    free(path);
    *out = v;
    return s;
}

static mlff_status add_layer(importer *im, const char *net_dir, const char *el, int m, int l,
                             const nnf_layer *ly)
{
    float *w, *b = NULL;
    char name[128];
    mlff_status s = read_floats(im, net_dir, ly->weights_file, ly->weights_count, &w);
    if (s == MLFF_OK)
        s = read_floats(im, net_dir, ly->biases_file, ly->biases_count, &b);
    if (s == MLFF_OK) {
        snprintf(name, sizeof name, "network.%s.%d.%d.weight", el, m, l);
        s = mlff_model_file_add_tensor(im->mf, name, MLFF_DTYPE_F32, ly->nodes, ly->blocksize, w,
                                       im->err);
    }
    if (s == MLFF_OK) {
        snprintf(name, sizeof name, "network.%s.%d.%d.bias", el, m, l);
        s = mlff_model_file_add_tensor(im->mf, name, MLFF_DTYPE_F32, ly->nodes, 1, b, im->err);
    }
    free(w);
    free(b);
    return s;
}

static mlff_status add_activations(importer *im, const char *el, int m, const nnf_network *net)
{
    int32_t codes[MAX_LAYERS];
    double alphas[MAX_LAYERS];
    for (int l = 0; l < net->n_layers; l++) {
        int celu = net->layers[l].activation == MLFF_NEUROCHEM_ACTIVATION_CELU;
        codes[l] = celu ? 1 : 0; /* models/ani.h: 0 = identity, 1 = CELU */
        alphas[l] = celu ? MLFF_NEUROCHEM_CELU_ALPHA : 0.0;
    }
    char name[128];
    snprintf(name, sizeof name, "network.%s.%d.activation", el, m);
    mlff_status s = mlff_model_file_add_tensor(im->mf, name, MLFF_DTYPE_I32, net->n_layers, 1,
                                               codes, im->err);
    if (s == MLFF_OK) {
        snprintf(name, sizeof name, "network.%s.%d.activation_alpha", el, m);
        s = mlff_model_file_add_tensor(im->mf, name, MLFF_DTYPE_F64, net->n_layers, 1, alphas,
                                       im->err);
    }
    return s;
}

/* PREFIX<m>/networks/ANN-<El>.nnf and the parameter files it names. */
static mlff_status import_network(importer *im, const char *el, int m)
{
    size_t n = strlen(im->prefix_rel) + 64;
    char *rel = malloc(n), *net_dir = NULL, *nnf_path = NULL;
    if (rel) {
        snprintf(rel, n, "%s%d/networks", im->prefix_rel, m);
        net_dir = join_path(im->dir, rel);
        snprintf(rel, n, "ANN-%s.nnf", el);
        nnf_path = net_dir ? join_path(net_dir, rel) : NULL;
    }
    nnf_network *net = malloc(sizeof *net);
    mlff_status s = rel && net_dir && nnf_path && net ? MLFF_OK : out_of_memory(im);
    if (s == MLFF_OK)
        s = read_network(im, nnf_path, el, net);
    for (int l = 0; s == MLFF_OK && l < net->n_layers; l++)
        s = add_layer(im, net_dir, el, m, l, &net->layers[l]);
    if (s == MLFF_OK)
        s = add_activations(im, el, m, net);
    free(net);
    free(nnf_path);
    free(net_dir);
    free(rel);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Model file assembly                                                      */

static mlff_status add_f64(importer *im, const char *name, const double *v, int n)
{
    return mlff_model_file_add_tensor(im->mf, name, MLFF_DTYPE_F64, n, 1, v, im->err);
}

static mlff_status add_constants(importer *im)
{
    mlff_status s = add_f64(im, "aev.radial.cutoff", &im->rcr, 1);
    if (s == MLFF_OK) s = add_f64(im, "aev.radial.eta", im->etar.v, 1);
    if (s == MLFF_OK) s = add_f64(im, "aev.radial.shift", im->shfr.v, im->shfr.n);
    if (s == MLFF_OK) s = add_f64(im, "aev.angular.cutoff", &im->rca, 1);
    if (s == MLFF_OK) s = add_f64(im, "aev.angular.zeta", im->zeta.v, 1);
    if (s == MLFF_OK) s = add_f64(im, "aev.angular.shift_theta", im->shfz.v, im->shfz.n);
    if (s == MLFF_OK) s = add_f64(im, "aev.angular.eta", im->etaa.v, 1);
    if (s == MLFF_OK) s = add_f64(im, "aev.angular.shift_r", im->shfa.v, im->shfa.n);
    if (s == MLFF_OK) s = add_f64(im, "self_energy", im->self_energy, im->n_elements);
    return s;
}

static mlff_status add_metadata(importer *im, const char *model_name)
{
    const char *info_name = base_name(im->info_path);
    char derived[256], elements[MAX_ELEMENTS * MAX_SYMBOL + 1] = "", members[16];
    char source[320], provenance[1024];
    /* Without a name: "ani-2x_8x.info" -> "ani-2x_8x" */
    snprintf(derived, sizeof derived, "%s", info_name);
    char *dot = strrchr(derived, '.');
    if (dot && dot != derived)
        *dot = '\0';
    const char *name = model_name && *model_name ? model_name : derived;
    for (int i = 0; i < im->n_elements; i++) {
        if (i)
            strcat(elements, " ");
        strcat(elements, im->elements[i]);
    }
    snprintf(members, sizeof members, "%d", im->members);
    snprintf(source, sizeof source, "NeuroChem model files (%s)", info_name);
    /* Only names relative to the .info: the result must not depend on where
     * the files were when converted. */
    snprintf(provenance, sizeof provenance, "converted from NeuroChem files by mlff-convert: %s "
             "(constants %s, self energies %s, networks %s0..%s%d)", info_name, im->params_rel,
             im->sae_rel, im->prefix_rel, im->prefix_rel, im->members - 1);
    const char *pairs[][2] = {
        {"family", "ani"}, {"name", name}, {"elements", elements}, {"energy_unit", "hartree"},
        {"length_unit", "angstrom"}, {"ensemble_size", members}, {"source", source},
        {"license", "unknown (see the source of the NeuroChem files)"},
        {"provenance", provenance},
    };
    mlff_status s = MLFF_OK;
    for (size_t i = 0; s == MLFF_OK && i < sizeof pairs / sizeof *pairs; i++)
        s = mlff_model_file_set_meta(im->mf, pairs[i][0], pairs[i][1], im->err);
    return s;
}

/* Reads one of the text files the .info names. */
static mlff_status read_text(importer *im, const char *rel, const char *what,
                             mlff_status (*parse)(importer *, const char *, const char *, size_t))
{
    char *path = join_path(im->dir, rel), *text = NULL;
    size_t size;
    if (!path)
        return out_of_memory(im);
    mlff_status s = read_file(path, what, MAX_TEXT_FILE, &text, &size, im->err);
    if (s == MLFF_OK)
        s = parse(im, path, text, size);
    free(text);
    free(path);
    return s;
}

static mlff_status import_all(importer *im, const char *model_name)
{
    char *text = NULL;
    size_t size;
    mlff_status s = read_file(im->info_path, "NeuroChem info file", MAX_TEXT_FILE, &text, &size,
                              im->err);
    if (s == MLFF_OK)
        s = parse_info(im, text, size);
    free(text);
    if (s == MLFF_OK)
        s = read_text(im, im->params_rel, "NeuroChem constants file", parse_params);
    if (s == MLFF_OK)
        s = read_text(im, im->sae_rel, "NeuroChem self-energy file", parse_sae);
    if (s == MLFF_OK && !(im->mf = mlff_model_file_create()))
        s = out_of_memory(im);
    if (s == MLFF_OK)
        s = add_metadata(im, model_name);
    if (s == MLFF_OK)
        s = add_constants(im);
    for (int e = 0; s == MLFF_OK && e < im->n_elements; e++)
        for (int m = 0; s == MLFF_OK && m < im->members; m++)
            s = import_network(im, im->elements[e], m);
    return s;
}

mlff_status mlff_neurochem_import(const char *info_path, const char *model_name,
                                  mlff_model_file **out, mlff_error *err)
{
    if (!out)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "NeuroChem import: NULL output");
    *out = NULL;
    if (!info_path)
        return mlff_fail(err, MLFF_ERROR_INVALID_ARGUMENT, "NeuroChem import: NULL path");
    importer im = {.info_path = info_path, .err = err};
    mlff_status s = (im.dir = directory_of(info_path)) ? MLFF_OK : out_of_memory(&im);
    if (s == MLFF_OK)
        s = import_all(&im, model_name);
    if (s == MLFF_OK) {
        *out = im.mf;
        im.mf = NULL;
    }
    importer_free(&im);
    return s;
}
