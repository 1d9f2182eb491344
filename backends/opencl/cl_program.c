/*
 * Lowering a node list to one OpenCL program. Every distinct node (op,
 * dtypes, column counts, attributes, epilogue, fixed sizes) becomes one
 * kernel: its source (written once in the kernel dialect, shaders/<op>.kernel,
 * or OpenCL's own, shaders/opencl/<op>.cl), preceded by #defines that make
 * those values compile-time constants. A program begins with arena.cl, the
 * dialect's OpenCL header (shaders/opencl/dialect.cl) and prelude.kernel.
 * Row counts stay run-time arguments, so a program serves every system size.
 *
 * Programs are kept per backend for the process (matched by a signature of
 * the node list) and stored in the on-disk kernel cache as binaries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cl_internal.h"
#include "backends/common/lowering.h"
#include "core/ds.h"

static int is_gemm(int32_t op)
{
    return mlff_op_is_gemm((mlff_op)op);
}

/* Whether the record lets our tiled GEMM take some layers without its
 * being forced (a record that never does, as CPU devices' (PoCL), keeps it
 * out of every program). */
static int tiled_by_default(const mlff_tuning *t)
{
    return t->opencl_gemm != MLFF_OPENCL_GEMM_CLBLAST &&
           (t->opencl_tiled_gemm_from_tiles >= 0 || t->opencl_vjp_tiled_from_tiles >= 0);
}

uint64_t cl_program_form(const mlff_backend *be)
{
    const mlff_tuning *t = &be->tuning;
    return (uint64_t)t->opencl_gemm | (uint64_t)tiled_by_default(t) << 4 | (uint64_t)mlff_sum_lanes_max(t) << 5 |
           (uint64_t)mlff_mlp_kernel_possible(t, MLFF_MLP_KERNEL_WIDE, be->mlp_wide_fits) << 12 |
           (uint64_t)mlff_mlp_kernel_possible(t, MLFF_MLP_KERNEL_HALF, be->mlp_wide_fits) << 13 |
           (uint64_t)be->has_fp64 << 14;
}

int cl_gemm_tiled(const mlff_backend *be, const mlff_exec_node *n)
{
    const mlff_tuning *t = &be->tuning;
    const int64_t from = n->op == MLFF_OP_LINEAR_VJP ? t->opencl_vjp_tiled_from_tiles : t->opencl_tiled_gemm_from_tiles;
    return t->opencl_gemm == MLFF_OPENCL_GEMM_TILED ||
           (tiled_by_default(t) && from >= 0 && mlff_tiled_gemm_tiles(n, MLFF_TILED_GEMM_TS) >= from);
}

int cl_node_uses_clblast(const mlff_backend *be, const mlff_exec_node *n)
{
    const mlff_tuning *t = &be->tuning;
    if (!is_gemm(n->op) || t->opencl_gemm == MLFF_OPENCL_GEMM_OWN || cl_gemm_tiled(be, n) ||
        mlff_op_stacks(&n->attrs) > 1)
        return 0; /* CLBlast has no stacks */
    return t->opencl_gemm == MLFF_OPENCL_GEMM_CLBLAST || n->output.rows >= t->opencl_gemm_own_below_rows;
}

/* One kernel: its name and parameters, the constants, the template, the
 * #undefs. Variant 1 of a dense layer is the bias and activation after a
 * CLBlast GEMM: its in0 is the bias (LINEAR) or y (LINEAR_VJP); variant 2
 * our tiled GEMM; variants 3 and 5 of a CELU_MLP node its wide and half
 * forms; variant 4 of a LINEAR_VJP the sums of its split K
 * (gemm_splits.kernel), in0 the partial sums. */
enum {
    VARIANT_OWN,
    VARIANT_EPILOGUE,
    VARIANT_TILED,
    VARIANT_WIDE = MLFF_VARIANT_MLP_WIDE,
    VARIANT_SPLITS = 4,
    VARIANT_HALF = MLFF_VARIANT_MLP_HALF,
    VARIANTS
};
_Static_assert(VARIANT_WIDE == 3 && VARIANT_HALF == 5, "variant_wanted tells the variants apart by number");

/* A kernel's buffer parameter: element type and name. */
typedef struct buffer_param {
    char type[24], name[16];
} buffer_param;

/* The buffers of a node's kernel, in the order of KARGS: out, the inputs,
 * what the pair vectors are made of, the segments, the epilogue's input. */
static int buffer_params(const mlff_node_sig *s, buffer_param *p)
{
    int n = 0;
    p[n++] = (buffer_param){"TO", "outp"};
    if (s->variant == VARIANT_EPILOGUE || s->variant == VARIANT_SPLITS) {
        p[n++] = (buffer_param){"const TO", "in0"};
    } else {
        for (int k = 0; k < s->n_inputs; k++, n++) {
            /* An AEV that makes its pair vectors writes them (inputs 0 and 6). */
            const int written = s->makes_vectors && (k == 0 || k == 6);
            snprintf(p[n].type, sizeof p[n].type, "%sT%d", written ? "" : "const ", k);
            snprintf(p[n].name, sizeof p[n].name, "in%d", k);
        }
        if (s->makes_vectors) { /* mlff_exec_node.vector_sources, in order */
            p[n++] = (buffer_param){"const T0", "positions"};
            p[n++] = (buffer_param){"const T0", "cells"};
            p[n++] = (buffer_param){"const int", "system"};
            p[n++] = (buffer_param){"const int", "images"};
            p[n++] = (buffer_param){"const int", "images2"};
            p[n++] = (buffer_param){"const T0", "positions_low"};
            p[n++] = (buffer_param){"const T0", "cells_low"};
        }
        const int segments = mlff_node_segment_lists((mlff_op)s->op, &s->attrs, s->n_inputs);
        if (segments) {
            p[n++] = (buffer_param){"const int", "seg_off"};
            p[n++] = (buffer_param){"const int", "seg_items"};
        }
        if (segments > 1) {
            p[n++] = (buffer_param){"const int", "seg2_off"};
            p[n++] = (buffer_param){"const int", "seg2_items"};
        }
    }
    if (mlff_epilogue_reads_input((mlff_epilogue)s->epilogue) && s->variant != VARIANT_EPILOGUE)
        p[n++] = (buffer_param){"const TO", "epi"};
    return n;
}

/* KARGS: the buffers (arena.cl: pointers, or offsets into the arena that
 * KTENSORS, the body's first line, makes the pointers), then the scalars. */
static void instantiate(mlff_text *t, const mlff_node_sig *s, int index, const char *template_text)
{
    buffer_param params[2 + MLFF_MAX_OP_INPUTS + MLFF_VECTOR_SOURCES + 2 * MLFF_NODE_SEGMENTS];
    const int n = buffer_params(s, params);
    mlff_text_put(t, "\n#define KNAME mlff_k%d\n#define KARGS ARENA_FIRST", index);
    for (int k = 0; k < n; k++)
        mlff_text_put(t, " BUFFER_ARG(global %s *, %s)", params[k].type, params[k].name);
    const int lanes = s->variant != VARIANT_EPILOGUE && mlff_op_sums_in_lanes((mlff_op)s->op);
    mlff_text_put(t, " const long n_items%s\n#define KTENSORS",
                  s->variant == VARIANT_SPLITS || lanes ? ", const int lanes" : "");
    for (int k = 0; k < n; k++)
        mlff_text_put(t, " BUFFER_POINTER(global %s *, %s)", params[k].type, params[k].name);
    mlff_text_put(t, "\n");
    mlff_emit_constants(t, s, MLFF_DIALECT_OPENCL, 1);
    const int our_gemm = is_gemm(s->op) && s->variant != VARIANT_EPILOGUE;
    const int dense = our_gemm || mlff_op_is_mlp((mlff_op)s->op);
    if (dense)
        mlff_text_put(t, "%s", mlff_kernel_source(mlff_opencl_shaders, "row_block"));
    if (our_gemm)
        mlff_text_put(t, "%s", mlff_kernel_source(mlff_opencl_shaders, "gemm_store"));
    mlff_text_put(t, "%s#undef KNAME\n#undef KARGS\n#undef KTENSORS\n", template_text);
    if (dense)
        mlff_text_put(t, "#undef ROW_BLOCK\n#undef ROWS_PER_START\n");
    if (our_gemm)
        mlff_text_put(t, "#undef GEMM_BIASED\n#undef GEMM_ACTIVATED\n#undef GEMM_STORE\n");
    for (int k = 0; k < mlff_n_constant_names; k++)
        mlff_text_put(t, "#undef %s\n", mlff_constant_names[k]);
}

static const char *template_for(const mlff_node_sig *s)
{
    const char *name = s->variant == VARIANT_EPILOGUE ? "gemm_epilogue"
                       : s->variant == VARIANT_SPLITS ? "gemm_splits"
                       : s->variant == VARIANT_TILED  ? "linear_tiled"
                       : is_gemm(s->op)               ? "linear_rows"
                                                      : mlff_op_get((mlff_op)s->op)->name;
    return mlff_kernel_source(mlff_opencl_shaders, name);
}

/* The kernels a node's program holds: those of every form the record
 * lets the node take at some size (the launch then picks one: the same
 * functions, cl_gemm_tiled, cl_node_uses_clblast, mlff_mlp_kernel_for).
 * The epilogue variant exists only for dense layers that CLBlast may run,
 * and only when there is a bias or an activation to apply after it; our
 * GEMMs only when they may run the layer. */
static int variant_wanted(const mlff_backend *be, const mlff_node_sig *s)
{
    const mlff_tuning *t = &be->tuning;
    const mlff_opencl_gemm gemm = t->opencl_gemm;
    if (s->variant == VARIANT_WIDE) /* beside the narrow form, which larger launches take */
        return mlff_op_is_mlp((mlff_op)s->op) && mlff_mlp_kernel_possible(t, MLFF_MLP_KERNEL_WIDE, be->mlp_wide_fits);
    if (s->variant == VARIANT_HALF) /* likewise (compiled whatever the sizes, as the wide form) */
        return mlff_op_is_mlp((mlff_op)s->op) && mlff_mlp_kernel_possible(t, MLFF_MLP_KERNEL_HALF, be->mlp_wide_fits);
    if (!is_gemm(s->op))
        return s->variant == VARIANT_OWN;
    const int stacked = mlff_op_stacks(&s->attrs) > 1;
    if (s->variant == VARIANT_EPILOGUE)
        return (gemm == MLFF_OPENCL_GEMM_AUTO || gemm == MLFF_OPENCL_GEMM_CLBLAST) && !stacked &&
               (s->op == MLFF_OP_LINEAR || s->epilogue != MLFF_EPILOGUE_NONE);
    if (s->variant == VARIANT_TILED)
        return gemm == MLFF_OPENCL_GEMM_TILED || tiled_by_default(t);
    if (s->variant == VARIANT_SPLITS)
        return s->op == MLFF_OP_LINEAR_VJP && (gemm == MLFF_OPENCL_GEMM_TILED || tiled_by_default(t));
    return gemm != MLFF_OPENCL_GEMM_CLBLAST || stacked;
}

/* Whether the device runs a wide CELU_MLP kernel's groups of
 * MLFF_MLP_WIDE_THREADS items (*most: the kernel's limit it reports).
 * NVIDIA's driver reports 256 for them, though ptxas gives them 50-52
 * registers (1024 items x 52 fit the 65536 of an SM) and they run with 1024
 * items, in the time and with the results expected (H100, driver
 * 580.159.04: bench/RESULTS.md); there the device's limit
 * (mlp_wide_fits, which held for every wide kernel built) decides. */
static int runs_wide(const mlff_backend *be, cl_kernel kernel, size_t *most)
{
    clGetKernelWorkGroupInfo(kernel, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof *most, most, NULL);
    return *most >= MLFF_MLP_WIDE_THREADS || be->vendor_id == MLFF_VENDOR_NVIDIA;
}

/* What comes before every program's source: the form of its buffer
 * parameters (arena.cl) and the kernel dialect's OpenCL header. */
static void put_headers(mlff_text *t, int arena)
{
    mlff_text_put(t, "%s%s%s", arena ? "#define ARENA 1\n" : "", mlff_shader_find(mlff_opencl_shaders, "arena"),
                  mlff_shader_find(mlff_opencl_shaders, "dialect"));
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static mlff_status build_log_error(mlff_backend *be, cl_program program, cl_int code, mlff_error *err)
{
    char log[4096] = "";
    size_t size = 0;
    clGetProgramBuildInfo(program, be->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, &size);
    log[sizeof log - 1] = 0;
    return mlff_fail(err, MLFF_ERROR_DEVICE, "opencl: building the kernels failed: %s (%d); build log:\n%s",
                     cl_error_name(code), (int)code, log);
}

/* The program for a source: from the disk cache when a valid binary is
 * there (and the driver accepts it), else compiled and stored. */
mlff_status cl_build_program(mlff_backend *be, const char *source, cl_program *out, mlff_error *err)
{
    static const char options[] = "-cl-std=CL1.2";
    const mlff_cache_entry_id id = {"opencl", be->name, be->identity, options, source};
    size_t size = 0;
    unsigned char *binary = mlff_kernel_cache_load(&be->cache, &id, &size);
    cl_int rc;
    if (binary) {
        cl_int binary_status = CL_SUCCESS;
        const unsigned char *bin = binary;
        cl_program p = clCreateProgramWithBinary(be->context, 1, &be->device, &size, &bin, &binary_status, &rc);
        free(binary);
        if (rc == CL_SUCCESS && binary_status == CL_SUCCESS &&
            clBuildProgram(p, 1, &be->device, options, NULL, NULL) == CL_SUCCESS) {
            *out = p;
            return MLFF_OK;
        }
        if (p)
            clReleaseProgram(p);
        mlff_kernel_cache_reject(&be->cache, &id);
    }
    const double t0 = now_ms();
    cl_program p = clCreateProgramWithSource(be->context, 1, &source, NULL, &rc);
    if (rc != CL_SUCCESS)
        return cl_fail(err, rc, "clCreateProgramWithSource");
    if ((rc = clBuildProgram(p, 1, &be->device, options, NULL, NULL)) != CL_SUCCESS) {
        mlff_status s = build_log_error(be, p, rc, err);
        clReleaseProgram(p);
        return s;
    }
    be->builds++;
    if (be->cache.log)
        fprintf(stderr, "mlff cache: compiled %zu bytes of OpenCL C in %.0f ms\n", strlen(source),
                now_ms() - t0);
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) == CL_SUCCESS && size > 0 &&
        (binary = malloc(size))) {
        if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL) == CL_SUCCESS)
            mlff_kernel_cache_store(&be->cache, &id, binary, size);
        free(binary);
    }
    *out = p;
    return MLFF_OK;
}

size_t cl_group_size_within(const mlff_backend *be, cl_kernel kernel, size_t most)
{
    size_t allowed = most;
    if (kernel)
        clGetKernelWorkGroupInfo(kernel, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof allowed, &allowed, NULL);
    return allowed >= most ? most : allowed > 0 ? allowed : 1;
}

size_t cl_group_size(const mlff_backend *be, cl_kernel kernel)
{
    return cl_group_size_within(be, kernel, 64);
}

/* A kernel whose op needs work-groups of a fixed size (lowering.h). */
static mlff_status fixed_group(const mlff_backend *be, cl_kernel kernel, mlff_op op, size_t lanes, size_t *group,
                               mlff_error *err)
{
    size_t most = 0;
    if (kernel)
        clGetKernelWorkGroupInfo(kernel, be->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL);
    if (most < lanes)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED,
                         "opencl: the device runs at most %zu work-items in a group of %s; it needs %zu", most,
                         mlff_op_get(op)->name, lanes);
    *group = lanes;
    return MLFF_OK;
}

static void prepared_free(cl_prepared *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->n_unique; k++)
        if (p->unique[k])
            clReleaseKernel(p->unique[k]);
    if (p->program)
        clReleaseProgram(p->program);
    free(p->unique);
    free(p->kernels);
    free(p->tiled);
    free(p->splits);
    free(p->wide);
    free(p->half);
    free(p->epilogue);
    free(p->group);
    free(p->epilogue_group);
    free(p->signature);
    free(p);
}

void cl_prepared_free_all(mlff_backend *be)
{
    for (int k = 0; k < (int)arrlen(be->prepared); k++)
        prepared_free(be->prepared[k]);
    arrfree(be->prepared);
    hmfree(be->by_key);
    be->last_prepared = NULL;
}

/* Generates, builds and wraps the program for a signature (sigs[n_nodes]). */
static mlff_status create_prepared(mlff_backend *be, const mlff_node_sig *sigs, int n_nodes, uint64_t hash,
                                   int arena, cl_prepared **out, mlff_error *err)
{
    cl_prepared *p = calloc(1, sizeof *p);
    int *unique_of = calloc(VARIANTS * (size_t)n_nodes + 1, sizeof *unique_of);
    mlff_text src = {0};
    if (!p || !unique_of || !(p->signature = malloc((size_t)n_nodes * sizeof *sigs + 1)) ||
        !(p->kernels = calloc((size_t)n_nodes + 1, sizeof *p->kernels)) ||
        !(p->tiled = calloc((size_t)n_nodes + 1, sizeof *p->tiled)) ||
        !(p->splits = calloc((size_t)n_nodes + 1, sizeof *p->splits)) ||
        !(p->wide = calloc((size_t)n_nodes + 1, sizeof *p->wide)) ||
        !(p->half = calloc((size_t)n_nodes + 1, sizeof *p->half)) ||
        !(p->epilogue = calloc((size_t)n_nodes + 1, sizeof *p->epilogue)) ||
        !(p->unique = calloc(VARIANTS * (size_t)n_nodes + 1, sizeof *p->unique)) ||
        !(p->group = calloc((size_t)n_nodes + 1, sizeof *p->group)) ||
        !(p->epilogue_group = calloc((size_t)n_nodes + 1, sizeof *p->epilogue_group))) {
        free(unique_of);
        prepared_free(p);
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory preparing kernels");
    }
    p->hash = hash;
    p->program_form = be->program_form;
    p->arena = arena;
    p->n_nodes = n_nodes;
    p->signature_size = (size_t)n_nodes * sizeof *sigs;
    memcpy(p->signature, sigs, p->signature_size);

    mlff_text_put(&src, "%s#define SUM_LANES_MAX %d\n", be->has_fp64 ? "#define MLFF_FP64 1\n" : "",
                  mlff_sum_lanes_max(&be->tuning));
    put_headers(&src, arena);
    mlff_text_put(&src, "%s", mlff_kernel_source(mlff_opencl_shaders, "prelude"));
    /* The kernels of each node, one per variant wanted. */
    mlff_status s = MLFF_OK;
    for (int v = 0; v < VARIANTS; v++)
        for (int k = 0; k < n_nodes && s == MLFF_OK; k++) {
            int *slot = &unique_of[VARIANTS * k + v];
            *slot = -1;
            mlff_node_sig sig = sigs[k];
            sig.variant = v;
            if (!variant_wanted(be, &sig))
                continue;
            for (int j = 0; j < k && *slot < 0; j++)
                if (unique_of[VARIANTS * j + v] >= 0 && memcmp(&sigs[j], &sigs[k], sizeof *sigs) == 0)
                    *slot = unique_of[VARIANTS * j + v];
            if (*slot >= 0)
                continue;
            const char *tmpl = template_for(&sig);
            if (!tmpl)
                s = mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "opencl: op %s has no kernel",
                              mlff_op_get((mlff_op)sig.op)->name);
            else
                instantiate(&src, &sig, *slot = p->n_unique++, tmpl);
        }
    if (s == MLFF_OK && src.failed)
        s = mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory generating kernels");
    if (s == MLFF_OK)
        s = cl_build_program(be, src.s, &p->program, err);
    for (int u = 0; s == MLFF_OK && u < p->n_unique; u++) {
        char name[32];
        snprintf(name, sizeof name, "mlff_k%d", u);
        cl_int rc;
        p->unique[u] = clCreateKernel(p->program, name, &rc);
        if (rc != CL_SUCCESS)
            s = cl_fail(err, rc, "clCreateKernel");
    }
    for (int k = 0; s == MLFF_OK && k < n_nodes; k++) {
        const int *of = &unique_of[VARIANTS * k];
        p->kernels[k] = of[VARIANT_OWN] >= 0 ? p->unique[of[VARIANT_OWN]] : NULL;
        p->epilogue[k] = of[VARIANT_EPILOGUE] >= 0 ? p->unique[of[VARIANT_EPILOGUE]] : NULL;
        p->tiled[k] = of[VARIANT_TILED] >= 0 ? p->unique[of[VARIANT_TILED]] : NULL;
        p->splits[k] = of[VARIANT_SPLITS] >= 0 ? p->unique[of[VARIANT_SPLITS]] : NULL;
        p->wide[k] = of[VARIANT_WIDE] >= 0 ? p->unique[of[VARIANT_WIDE]] : NULL;
        p->half[k] = of[VARIANT_HALF] >= 0 ? p->unique[of[VARIANT_HALF]] : NULL;
        size_t most = 0;
        if (p->wide[k] && !runs_wide(be, p->wide[k], &most)) {
            if (be->tuning.mlp == MLFF_MLP_WIDE)
                s = mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "mlp=wide: the device runs the wide kernels with %zu "
                              "items a group at most", most);
            p->wide[k] = NULL; /* auto: the narrow or half form */
        }
        p->group[k] = cl_group_size(be, p->kernels[k]);
        p->epilogue_group[k] = cl_group_size(be, p->epilogue[k]);
        const int lanes = mlff_op_group_lanes((mlff_op)sigs[k].op, &sigs[k].attrs);
        if (lanes)
            s = fixed_group(be, p->kernels[k], (mlff_op)sigs[k].op, (size_t)lanes, &p->group[k], err);
        if (mlff_op_sums_in_lanes((mlff_op)sigs[k].op))
            s = fixed_group(be, p->kernels[k], (mlff_op)sigs[k].op, MLFF_SUM_GROUP, &p->group[k], err);
    }
    free(src.s);
    free(unique_of);
    if (s != MLFF_OK) {
        prepared_free(p);
        return s;
    }
    *out = p;
    return MLFF_OK;
}

mlff_status cl_prepare(mlff_backend *be, const mlff_exec_node *nodes, int n_nodes, int arena,
                       const cl_prepared **out, mlff_error *err)
{
    const size_t need = ((size_t)n_nodes + 1) * sizeof(mlff_node_sig);
    if (need > be->scratch_size) {
        void *s = realloc(be->scratch, need);
        if (!s)
            return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory");
        be->scratch = s;
        be->scratch_size = need;
    }
    mlff_node_sig *sigs = be->scratch;
    for (int k = 0; k < n_nodes; k++)
        mlff_node_signature(&nodes[k], &sigs[k]);
    const size_t size = (size_t)n_nodes * sizeof *sigs;
    /* An MD loop runs the same list every call: try the last one before hashing. */
    const cl_prepared *last = be->last_prepared;
    if (last && last->arena == arena && last->program_form == be->program_form && last->signature_size == size &&
        memcmp(last->signature, sigs, size) == 0) {
        *out = last;
        return MLFF_OK;
    }
    const uint64_t hash = mlff_hash(sigs, size);
    const uint64_t key = hash ^ (be->program_form * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)arena;
    const ptrdiff_t at = hmgeti(be->by_key, key);
    const cl_prepared *found = at >= 0 ? be->by_key[at].value : NULL;
    if (found && found->hash == hash && found->arena == arena && found->program_form == be->program_form &&
        found->signature_size == size && memcmp(found->signature, sigs, size) == 0) {
        *out = be->last_prepared = found;
        return MLFF_OK;
    }
    cl_prepared *p = NULL;
    mlff_status s = create_prepared(be, sigs, n_nodes, hash, arena, &p, err);
    if (s != MLFF_OK)
        return s;
    arrput(be->prepared, p);
    hmput(be->by_key, key, p); /* (a list of another signature with the same key is still freed with the rest) */
    *out = be->last_prepared = p;
    return MLFF_OK;
}

mlff_status cl_build_kernels(mlff_backend *be, const char *shader, int arena, cl_program *program,
                             const char *const *names, cl_kernel *kernels, int n, mlff_error *err)
{
    const char *source = mlff_kernel_source(mlff_opencl_shaders, shader);
    if (!source)
        return mlff_fail(err, MLFF_ERROR_INTERNAL, "opencl: the kernels %s are missing", shader);
    mlff_status s = MLFF_OK;
    if (!*program) {
        mlff_text text = {0};
        put_headers(&text, arena);
        mlff_text_put(&text, "%s", source);
        s = text.failed ? mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "opencl: out of memory")
                        : cl_build_program(be, text.s, program, err);
        free(text.s);
    }
    for (int k = 0; k < n && s == MLFF_OK; k++) {
        cl_int rc = CL_SUCCESS;
        if (!kernels[k])
            kernels[k] = clCreateKernel(*program, names[k], &rc);
        if (rc != CL_SUCCESS)
            s = cl_fail(err, rc, "clCreateKernel");
    }
    return s;
}

void cl_release_kernels(cl_program *program, cl_kernel *kernels, int n)
{
    for (int k = 0; k < n; k++) {
        if (kernels[k])
            clReleaseKernel(kernels[k]);
        kernels[k] = NULL;
    }
    if (*program)
        clReleaseProgram(*program);
    *program = NULL;
}
