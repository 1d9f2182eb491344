/*
 * Lowering a node to a compute pipeline. Every distinct node signature
 * (backends/common/lowering.h) becomes one GLSL shader: generated #defines,
 * shaders/vulkan/dispatch.glsl, the kernel dialect's GLSL header
 * (shaders/vulkan/dialect.glsl), math.glsl, shaders/prelude.kernel, and the
 * op's source (written once in the dialect, shaders/<op>.kernel, or
 * Vulkan's own, shaders/vulkan/<op>.comp). Its SPIR-V comes from the disk
 * cache (kind "spirv", keyed by the source, the options and the shaderc
 * version) or from shaderc, which is started only on the first miss: a
 * warm start never calls it.
 * Pipelines go through the VkPipelineCache (vk_pipeline_cache.c) and live
 * as long as the backend.
 */
#include <shaderc/shaderc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vk_internal.h"
#include "core/ds.h"

#ifndef MLFF_SHADERC_VERSION
#define MLFF_SHADERC_VERSION "unknown"
#endif

#define SPIRV_MAGIC 0x07230203u
_Static_assert(MLFF_TILED_GEMM_TS == 64, "shaders/linear_tiled.kernel's TS");

static const char *template_name(const mlff_node_sig *s)
{
    static const char *const gemm[] = {[VK_GEMM_DIRECT] = "linear", [VK_GEMM_TILED] = "linear_tiled",
                                       [VK_GEMM_SUBGROUP] = "linear_subgroup", [VK_GEMM_ROWS] = "linear_rows"};
    if (mlff_op_is_gemm((mlff_op)s->op))
        return s->variant == VK_VARIANT_SPLIT_SUMS ? "gemm_splits" : gemm[s->variant];
    return mlff_op_get((mlff_op)s->op)->name;
}

/* A node's buffers at their bindings (vk_internal.h), as OpenCL's host
 * writes a kernel's parameters, and the dispatch's values (dispatch.glsl):
 * n_items, the work-items wanted in all; base, the first one of this
 * dispatch (a launch past the device's group count limit takes several);
 * lanes, the lanes of sums in lanes (lowering.h) or gemm_splits' splits. */
static void put_bindings(mlff_text *src, const mlff_node_sig *s, int segments)
{
    static const char layout[] = "layout(std430, set = 0, binding = %d) %sbuffer %s { %s %s[]; };\n";
    mlff_text_put(src, layout, VK_BIND_OUT, "", "OutB", "TO", "outp");
    for (int k = 0; k < s->n_inputs; k++) {
        char block[16], type[16], name[16];
        snprintf(block, sizeof block, "In%dB", k);
        snprintf(type, sizeof type, "T%d", k);
        snprintf(name, sizeof name, "in%d", k);
        mlff_text_put(src, layout, VK_BIND_IN0 + k, "readonly ", block, type, name);
    }
    if (segments) {
        mlff_text_put(src, layout, VK_BIND_SEG_OFF, "readonly ", "SegOffB", "int", "seg_off");
        mlff_text_put(src, layout, VK_BIND_SEG_ITEMS, "readonly ", "SegItemsB", "int", "seg_items");
    }
    if (segments > 1) {
        mlff_text_put(src, layout, VK_BIND_SEG2_OFF, "readonly ", "Seg2OffB", "int", "seg2_off");
        mlff_text_put(src, layout, VK_BIND_SEG2_ITEMS, "readonly ", "Seg2ItemsB", "int", "seg2_items");
    }
    if (mlff_epilogue_reads_input((mlff_epilogue)s->epilogue))
        mlff_text_put(src, layout, VK_BIND_EPI, "readonly ", "EpiB", "TO", "epi");
    mlff_text_put(src, "struct Push {\n    uint n_items;\n    uint base;\n    uint lanes;\n};\nDISPATCH_VALUES(Push);\n");
}

static mlff_status generate(const mlff_backend *be, const mlff_node_sig *s, mlff_text *src, mlff_error *err)
{
    const char *tmpl = mlff_kernel_source(mlff_vulkan_shaders, template_name(s));
    if (!tmpl)
        return mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "vulkan: op %s has no shader", mlff_op_get((mlff_op)s->op)->name);
    const int gemm = mlff_op_is_gemm((mlff_op)s->op), dense = gemm || mlff_op_is_mlp((mlff_op)s->op);
    /* [[unroll]]: loops over private arrays stay in registers only unrolled. */
    mlff_text_put(src, "#version 450\n#extension GL_EXT_control_flow_attributes : require\n%s%s",
                  be->has_fp64 ? "#define MLFF_FP64 1\n" : "", mlff_shader_find(mlff_vulkan_shaders, "dispatch"));
    mlff_text_put(src, "#define SUM_LANES_MAX %d\n", mlff_sum_lanes_max(&be->tuning));
    if (gemm && s->variant == VK_GEMM_SUBGROUP)
        mlff_text_put(src, "#extension GL_KHR_shader_subgroup_basic : require\n"
                           "#extension GL_KHR_shader_subgroup_shuffle : require\n"
                           "#define SG_WG %d\n#define SG_ROWS %d\n#define SG_COLS %d\n",
                      VK_GROUP_1D, VK_SG_ROWS, VK_SG_COLS);
    const int segments = mlff_node_segment_lists((mlff_op)s->op, &s->attrs, s->n_inputs);
    if (mlff_epilogue_reads_input((mlff_epilogue)s->epilogue))
        mlff_text_put(src, "#define EPI 1\n");
    mlff_emit_constants(src, s, MLFF_DIALECT_GLSL, be->has_fp64);
    put_bindings(src, s, segments);
    mlff_text_put(src, "%s%s%s%s%s%s", mlff_shader_find(mlff_vulkan_shaders, "dialect"),
                  mlff_shader_find(mlff_vulkan_shaders, "math"), mlff_kernel_source(mlff_vulkan_shaders, "prelude"),
                  dense ? mlff_kernel_source(mlff_vulkan_shaders, "row_block") : "",
                  gemm ? mlff_kernel_source(mlff_vulkan_shaders, "gemm_store") : "", tmpl);
    return src->failed ? mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory generating a shader")
                       : MLFF_OK;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static mlff_status compile(mlff_backend *be, const char *source, void **spirv, size_t *size, mlff_error *err)
{
    if (!be->compiler && !(be->compiler = shaderc_compiler_initialize()))
        return mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: shaderc failed to start");
    shaderc_compile_options_t options = shaderc_compile_options_initialize();
    if (!options)
        return mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
    shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_1);
    shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_performance);
    const double t0 = now_ms();
    shaderc_compilation_result_t result = shaderc_compile_into_spv(be->compiler, source, strlen(source),
                                                                   shaderc_compute_shader, "mlff.comp", "main", options);
    shaderc_compile_options_release(options);
    mlff_status s = MLFF_OK;
    if (!result || shaderc_result_get_compilation_status(result) != shaderc_compilation_status_success) {
        s = mlff_fail(err, MLFF_ERROR_DEVICE, "vulkan: shaderc failed: %s\n--- source ---\n%.2000s",
                      result ? shaderc_result_get_error_message(result) : "no result", source);
    } else {
        *size = shaderc_result_get_length(result);
        if (!(*spirv = malloc(*size)))
            s = mlff_fail(err, MLFF_ERROR_OUT_OF_MEMORY, "vulkan: out of memory");
        else
            memcpy(*spirv, shaderc_result_get_bytes(result), *size);
        be->builds++;
        if (be->cache.log)
            fprintf(stderr, "mlff cache: compiled %zu bytes of GLSL in %.1f ms\n", strlen(source), now_ms() - t0);
    }
    shaderc_result_release(result);
    return s;
}

static int looks_like_spirv(const void *code, size_t size)
{
    uint32_t magic;
    if (size < 20 || size % 4)
        return 0;
    memcpy(&magic, code, sizeof magic);
    return magic == SPIRV_MAGIC;
}

static VkResult create_pipeline(mlff_backend *be, const void *code, size_t size, VkPipeline *out)
{
    const VkShaderModuleCreateInfo module_info = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = size,
        .pCode = code,
    };
    VkShaderModule module;
    VkResult r = vkCreateShaderModule(be->device, &module_info, NULL, &module);
    if (r != VK_SUCCESS)
        return r;
    const VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module,
                  .pName = "main"},
        .layout = be->pipeline_layout,
    };
    r = vkCreateComputePipelines(be->device, be->pipeline_cache, 1, &info, NULL, out);
    vkDestroyShaderModule(be->device, module, NULL);
    be->pipeline_cache_dirty = 1;
    return r;
}

/* SPIR-V from the cache when it is there and the driver takes it, else
 * compiled (and stored), then the pipeline. */
mlff_status vk_pipeline_from_source(mlff_backend *be, const char *source, VkPipeline *out, mlff_error *err)
{
    static const char options[] = "vulkan1.1 -O";
    const mlff_cache_entry_id id = {"spirv", "any", "shaderc " MLFF_SHADERC_VERSION, options, source};
    size_t size = 0;
    void *spirv = mlff_kernel_cache_load(&be->cache, &id, &size);
    if (spirv) {
        if (looks_like_spirv(spirv, size) && create_pipeline(be, spirv, size, out) == VK_SUCCESS) {
            free(spirv);
            return MLFF_OK;
        }
        free(spirv);
        spirv = NULL;
        mlff_kernel_cache_reject(&be->cache, &id);
    }
    mlff_status s = compile(be, source, &spirv, &size, err);
    if (s == MLFF_OK) {
        const VkResult r = create_pipeline(be, spirv, size, out);
        if (r == VK_SUCCESS)
            mlff_kernel_cache_store(&be->cache, &id, spirv, size);
        else
            s = vk_fail(err, r, "creating a compute pipeline");
    }
    free(spirv);
    return s;
}

static mlff_status build(mlff_backend *be, const mlff_node_sig *sig, VkPipeline *out, mlff_error *err)
{
    mlff_text src = {0};
    mlff_status s = generate(be, sig, &src, err);
    if (s == MLFF_OK)
        s = vk_pipeline_from_source(be, src.s, out, err);
    free(src.s);
    return s;
}

/* The pipeline of a signature: built once, then kept with the backend. */
static mlff_status pipeline_for_sig(mlff_backend *be, const mlff_node_sig *sig, VkPipeline *out,
                                    mlff_error *err)
{
    const uint64_t hash = mlff_hash(sig, sizeof *sig);
    const int lanes_max = mlff_sum_lanes_max(&be->tuning);
    const uint64_t key = hash ^ (uint64_t)lanes_max * 0x9e3779b97f4a7c15ULL;
    const ptrdiff_t at = hmgeti(be->kernel_index, key);
    if (at >= 0) {
        const vk_kernel *k = &be->kernels[be->kernel_index[at].value];
        if (k->sum_lanes_max == lanes_max && memcmp(&k->sig, sig, sizeof *sig) == 0) {
            *out = k->pipeline;
            return MLFF_OK;
        }
    }
    vk_kernel made = {.sig = *sig, .sum_lanes_max = lanes_max, .hash = hash};
    mlff_status s = build(be, sig, &made.pipeline, err);
    if (s != MLFF_OK)
        return s;
    arrput(be->kernels, made);
    hmput(be->kernel_index, key, (int)arrlen(be->kernels) - 1); /* (one of another signature stays in kernels) */
    *out = made.pipeline;
    return MLFF_OK;
}

mlff_status vk_kernel_for(mlff_backend *be, const mlff_exec_node *n, VkPipeline *out, mlff_error *err)
{
    if (vk_mlp_layered(be, n)) {
        *out = VK_NULL_HANDLE; /* its layers' pipelines come with their dispatches (vk_mlp_layers.c) */
        return MLFF_OK;
    }
    mlff_node_sig sig;
    mlff_node_signature(n, &sig);
    if (mlff_op_is_gemm(n->op))
        sig.variant = (int32_t)vk_gemm_for(be, n);
    if (mlff_op_is_mlp(n->op))
        sig.variant = (int32_t)vk_mlp_kernel(be, n);
    return pipeline_for_sig(be, &sig, out, err);
}

mlff_status vk_split_sums_kernel(mlff_backend *be, const mlff_exec_node *n, VkPipeline *out, mlff_error *err)
{
    mlff_node_sig sig;
    mlff_node_signature(n, &sig);
    sig.variant = VK_VARIANT_SPLIT_SUMS;
    return pipeline_for_sig(be, &sig, out, err);
}

void vk_kernels_free(mlff_backend *be)
{
    for (int k = 0; k < (int)arrlen(be->kernels); k++)
        vkDestroyPipeline(be->device, be->kernels[k].pipeline, NULL);
    arrfree(be->kernels);
    hmfree(be->kernel_index);
    if (be->compiler)
        shaderc_compiler_release(be->compiler);
    be->compiler = NULL;
}
