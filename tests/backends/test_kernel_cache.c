/*
 * The on-disk kernel cache (backends/common/kernel_cache.c).
 *
 * Unit part, on any machine: store and load; a corrupted, a truncated and a
 * foreign file, and a changed driver identity are each rejected (and the
 * file deleted); MLFF_CACHE=off disables it.
 *
 * Vulkan unit part: pipeline-cache data whose header names another vendor,
 * device or pipelineCacheUUID is refused before the driver sees it.
 *
 * End to end on OpenCL (PoCL on CI) or Vulkan (lavapipe on CI), each step a
 * separate process on a fresh cache directory: the first compiles, the
 * second starts from the cache with no compilation (no clBuildProgram from
 * source, no shaderc call); a corrupted file and a truncated file are
 * rebuilt with correct results; four processes started at once on an empty
 * cache all succeed and leave a valid cache. On Vulkan the VkPipelineCache
 * data saved by one process must be loaded by the next; lavapipe returns
 * only a header, so MLFF_TEST_EXPECT_PIPELINE_CACHE=1 (set on the GPU
 * machine) makes an empty one a failure.
 * Usage: test_kernel_cache [opencl|vulkan]   (runs everything)
 *        test_kernel_cache child OUT DEVICE  (one evaluation; writes energy and counters)
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/common/kernel_cache.h"
#ifdef MLFF_HAVE_VULKAN
#include "backends/vulkan/vk_internal.h"
#endif
#include "runtime/environment.h"
#include "tests/common/check.h"
#include "tests/common/skip.h"
#include "mlff.h"

static char cache_dir[256];
static const char *device_name = "opencl";

/* ---- unit part ---- */

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n, "cannot write %s", path);
    if (f)
        fclose(f);
}

static void *read_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = malloc(*n + 1);
    if (data && fread(data, 1, *n, f) != *n) {
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A cache as a context would make it. */
static void init_from_environment(mlff_kernel_cache *cache)
{
    mlff_environment env;
    mlff_environment_read(&env);
    mlff_backend_options opts = {0};
    mlff_environment_backend_options(&env, &opts);
    mlff_kernel_cache_init(cache, opts.cache_dir, opts.log_cache);
}

/*
 * What is not a cache file at an entry's path (issue 57): a FIFO (an open
 * for reading once waited for a writer forever), a symbolic link to a
 * device, a directory, a sparse file of 3 GB (once read whole before it was
 * rejected). Each is a miss at once, said on stderr once per cache; the
 * file too large is deleted, the others left to their owner; then the
 * entry works again. alarm() turns a hang into a failure.
 */
static void unusable_files(mlff_kernel_cache *cache, const mlff_cache_entry_id *id, const char *path)
{
    const char payload[] = "another program";
    size_t n = 0;
    alarm(60);
    CHECK(!cache->warned, "a warning before anything went wrong");
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    CHECK(mlff_kernel_cache_load(cache, id, &n) == NULL && file_exists(path), "a FIFO at the entry's path");
    CHECK(cache->warned, "nothing said about the FIFO");
    unlink(path);
    CHECK(symlink("/dev/zero", path) == 0, "symlink %s", path);
    CHECK(mlff_kernel_cache_load(cache, id, &n) == NULL, "a link to /dev/zero at the entry's path");
    unlink(path);
    CHECK(mkdir(path, 0700) == 0, "mkdir %s", path);
    CHECK(mlff_kernel_cache_load(cache, id, &n) == NULL && file_exists(path), "a directory at the entry's path");
    const uint64_t stores = cache->stores;
    mlff_kernel_cache_store(cache, id, payload, sizeof payload);
    CHECK(cache->stores == stores, "a store over a directory");
    rmdir(path);
    FILE *f = fopen(path, "wb");
    CHECK(f && ftruncate(fileno(f), (off_t)3 << 30) == 0, "a sparse file of 3 GB at %s", path);
    if (f)
        fclose(f);
    CHECK(mlff_kernel_cache_load(cache, id, &n) == NULL && !file_exists(path), "a file of 3 GB: not deleted");
    mlff_kernel_cache_store(cache, id, payload, sizeof payload);
    char *got = mlff_kernel_cache_load(cache, id, &n);
    CHECK(got && n == sizeof payload && !memcmp(got, payload, n), "the entry after them");
    free(got);
    alarm(0);
}

static void unit_tests(void)
{
    setenv("MLFF_CACHE_DIR", cache_dir, 1);
    mlff_kernel_cache cache;
    init_from_environment(&cache);
    CHECK(cache.enabled, "cache not enabled in %s", cache_dir);
    struct stat st;
    CHECK(stat(cache_dir, &st) == 0 && (st.st_mode & 0777) == 0700, "cache directory is not 0700");

    const char payload[] = "a compiled program, or so";
    mlff_cache_entry_id id = {"opencl", "device A", "driver=1.0", "-O2", "kernel void k() {}"};
    char path[1200];
    mlff_kernel_cache_path(&cache, &id, path, sizeof path);
    size_t n = 0;
    CHECK(mlff_kernel_cache_load(&cache, &id, &n) == NULL && cache.misses == 1, "miss on an empty cache");
    mlff_kernel_cache_store(&cache, &id, payload, sizeof payload);
    char *got = mlff_kernel_cache_load(&cache, &id, &n);
    CHECK(got && n == sizeof payload && !memcmp(got, payload, n) && cache.hits == 1, "round trip");
    free(got);

    /* Every kind of bad file: rejected, deleted, and the next store works. */
    size_t size = 0;
    char *good = read_bytes(path, &size);
    CHECK(good && size > sizeof payload, "cannot read back %s", path);
    const char *names[] = {"corrupted payload", "truncated", "corrupted header"};
    for (int k = 0; good && k < 3; k++) {
        char *bad = malloc(size);
        memcpy(bad, good, size);
        size_t bad_size = size;
        if (k == 0)
            bad[size - 3] ^= 0x40;
        else if (k == 1)
            bad_size = size - 7;
        else
            bad[2] ^= 1;
        write_bytes(path, bad, bad_size);
        const uint64_t rejects = cache.rejects;
        CHECK(mlff_kernel_cache_load(&cache, &id, &n) == NULL && cache.rejects == rejects + 1,
              "%s file accepted", names[k]);
        CHECK(!file_exists(path), "%s file not deleted", names[k]);
        free(bad);
    }
    /* A valid file for another entry, under this entry's name. */
    mlff_cache_entry_id other = id;
    other.source = "kernel void other() {}";
    char other_path[1200];
    mlff_kernel_cache_path(&cache, &other, other_path, sizeof other_path);
    mlff_kernel_cache_store(&cache, &other, payload, sizeof payload);
    CHECK(rename(other_path, path) == 0, "rename");
    CHECK(mlff_kernel_cache_load(&cache, &id, &n) == NULL && !file_exists(path), "foreign key accepted");
    /* A driver update: same file name, other key. */
    mlff_kernel_cache_store(&cache, &id, payload, sizeof payload);
    mlff_cache_entry_id updated = id;
    updated.identity = "driver=1.1";
    char updated_path[1200];
    mlff_kernel_cache_path(&cache, &updated, updated_path, sizeof updated_path);
    CHECK(!strcmp(updated_path, path), "the driver version must not change the file name");
    CHECK(mlff_kernel_cache_load(&cache, &updated, &n) == NULL && !file_exists(path),
          "a binary of another driver version accepted");
    free(good);

    unusable_files(&cache, &id, path);

    setenv("MLFF_CACHE", "off", 1);
    init_from_environment(&cache);
    CHECK(!cache.enabled, "MLFF_CACHE=off ignored");
    unsetenv("MLFF_CACHE");
    printf("unit: store, load, corrupt, truncated, foreign, driver update, FIFO, link, directory, 3 GB, off: %s\n",
           failures ? "FAILED" : "ok");
}

#ifdef MLFF_HAVE_VULKAN
static void pipeline_cache_header_tests(void)
{
    VkPhysicalDeviceProperties props = {.vendorID = 0x10de, .deviceID = 0x2335};
    for (unsigned k = 0; k < VK_UUID_SIZE; k++)
        props.pipelineCacheUUID[k] = (uint8_t)(17 * k);
    unsigned char data[64] = {0};
    VkPipelineCacheHeaderVersionOne h = {
        .headerSize = sizeof h,
        .headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE,
        .vendorID = props.vendorID,
        .deviceID = props.deviceID,
    };
    memcpy(h.pipelineCacheUUID, props.pipelineCacheUUID, VK_UUID_SIZE);
    memcpy(data, &h, sizeof h);
    CHECK(vk_pipeline_cache_data_matches(&props, data, sizeof data), "a matching header refused");
    CHECK(!vk_pipeline_cache_data_matches(&props, data, sizeof h - 1), "a truncated header accepted");
    VkPhysicalDeviceProperties other = props;
    other.pipelineCacheUUID[5] ^= 1;
    CHECK(!vk_pipeline_cache_data_matches(&other, data, sizeof data), "another pipelineCacheUUID accepted");
    other = props;
    other.deviceID++;
    CHECK(!vk_pipeline_cache_data_matches(&other, data, sizeof data), "another device ID accepted");
    other = props;
    other.vendorID++;
    CHECK(!vk_pipeline_cache_data_matches(&other, data, sizeof data), "another vendor accepted");
    printf("unit: pipeline-cache headers of another UUID, device or vendor refused: %s\n",
           failures ? "FAILED" : "ok");
}
#endif

/* ---- end to end ---- */

typedef struct child_result {
    int ok;
    double energy;
    unsigned long long builds, hits, rejects;
} child_result;

/* One evaluation of a molecule in float64; returns the exit code. */
static int child_main(const char *out_path, const char *device)
{
    mlff_settings s;
    mlff_default_settings(&s);
    s.device = !strcmp(device, "vulkan") ? MLFF_DEVICE_VULKAN : MLFF_DEVICE_OPENCL;
    s.precision = MLFF_PRECISION_FLOAT64;
    mlff_context *ctx = NULL;
    mlff_model *model = NULL;
    mlff_status st = mlff_context_create(&s, &ctx);
    if (st == MLFF_ERROR_DEVICE)
        return 77;
    if (st != MLFF_OK || mlff_model_load(ctx, NULL, &model) != MLFF_OK) {
        fprintf(stderr, "child: %s\n", mlff_last_error(ctx));
        return 1;
    }
    /* Methanol */
    const int32_t z[6] = {6, 8, 1, 1, 1, 1};
    const double pos[18] = {-0.047, 0.665, 0, -0.047, -0.763, 0, -1.09, 0.941, 0,
                            0.437, 1.08, 0.891, 0.437, 1.08, -0.891, 0.897, -1.05, 0};
    const int64_t offsets[2] = {0, 6};
    mlff_batch b = {.n_systems = 1, .system_offsets = offsets, .atomic_numbers = z, .positions = pos};
    double energy = 0, forces[18];
    st = mlff_evaluate(model, &b, &energy, forces);
    mlff_stats stats;
    mlff_get_stats(ctx, &stats);
    FILE *f = fopen(out_path, "w");
    if (f) {
        fprintf(f, "%d %.15g %llu %llu %llu\n", st == MLFF_OK, energy, (unsigned long long)stats.kernel_builds,
                (unsigned long long)stats.kernel_cache_hits, (unsigned long long)stats.kernel_cache_rejects);
        fclose(f);
    }
    if (st != MLFF_OK)
        fprintf(stderr, "child: %s\n", mlff_last_error(ctx));
    mlff_context_destroy(ctx);
    return st == MLFF_OK ? 0 : 1;
}

static pid_t start_child(int k)
{
    char out[300];
    snprintf(out, sizeof out, "%s/../child%d.txt", cache_dir, k);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_kernel_cache", "child", out, device_name, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static child_result finish_child(pid_t pid, int k)
{
    child_result r = {0};
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        test_skip(device_name);
    char path[300];
    snprintf(path, sizeof path, "%s/../child%d.txt", cache_dir, k);
    FILE *f = fopen(path, "r");
    if (f) {
        r.ok = fscanf(f, "%d %lf %llu %llu %llu", &r.ok, &r.energy, &r.builds, &r.hits, &r.rejects) == 5 && r.ok &&
               WIFEXITED(status) && WEXITSTATUS(status) == 0;
        fclose(f);
    }
    return r;
}

static child_result run_child(int k)
{
    return finish_child(start_child(k), k);
}

/* The size of the first file of a kind in the cache, or 0. */
static size_t cache_file_size(const char *kind)
{
    DIR *d = opendir(cache_dir);
    size_t size = 0;
    for (struct dirent *e; d && (e = readdir(d)) && !size;) {
        if (strncmp(e->d_name, kind, strlen(kind)) != 0)
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0)
            size = (size_t)st.st_size;
    }
    if (d)
        closedir(d);
    return size;
}

/* Applies damage to every cache file (they are what the children wrote). */
static int damage_cache(int truncate_files)
{
    DIR *d = opendir(cache_dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        size_t size = 0;
        char *data = read_bytes(path, &size);
        if (!data || size < 200) {
            free(data);
            continue;
        }
        if (truncate_files)
            size /= 2;
        else
            data[size / 2] ^= 0x5a;
        write_bytes(path, data, size);
        free(data);
        n++;
    }
    if (d)
        closedir(d);
    return n;
}

static void clear_cache(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
    CHECK(system(cmd) == 0, "cannot clear %s", cache_dir);
}

static void end_to_end(void)
{
    clear_cache();
    setenv("MLFF_CACHE_DIR", cache_dir, 1);
    child_result cold = run_child(0);
    CHECK(cold.ok && cold.builds >= 1 && cold.hits == 0, "cold start: ok %d, builds %llu, hits %llu", cold.ok,
          cold.builds, cold.hits);
    child_result warm = run_child(1);
    CHECK(warm.ok && warm.builds == 0 && warm.hits >= 1, "warm start compiled: builds %llu, hits %llu",
          warm.builds, warm.hits);
    CHECK(warm.energy == cold.energy, "warm energy %.15g vs cold %.15g", warm.energy, cold.energy);
    printf("cold start: %llu program(s) compiled; warm start: %llu compiled, %llu loaded\n", cold.builds,
           warm.builds, warm.hits);
    if (!strcmp(device_name, "vulkan")) {
        /* The file holds about 150 bytes of our header around the driver's data. */
        const size_t size = cache_file_size("vkpipeline-");
        const char *expect = getenv("MLFF_TEST_EXPECT_PIPELINE_CACHE");
        const int has_data = size > 200;
        CHECK(size > 0 && warm.rejects == 0, "pipeline cache not saved or refused (file %zu bytes)", size);
        if (expect && !strcmp(expect, "1"))
            CHECK(has_data, "the driver's pipeline cache came back empty (%zu bytes)", size);
        printf("pipeline cache: %zu bytes on disk, loaded by the warm start%s\n", size,
               has_data ? "" : " (only a header: this driver keeps no pipeline cache)");
    }

    for (int truncate_files = 0; truncate_files < 2; truncate_files++) {
        const int damaged = damage_cache(truncate_files);
        child_result r = run_child(2);
        CHECK(damaged >= 1 && r.ok && r.rejects >= 1 && r.builds >= 1 && fabs(r.energy - cold.energy) < 1e-9,
              "%s cache: damaged %d, ok %d, rejects %llu, builds %llu, energy %.15g",
              truncate_files ? "truncated" : "corrupted", damaged, r.ok, r.rejects, r.builds, r.energy);
        child_result again = run_child(3);
        CHECK(again.ok && again.builds == 0, "after the rebuild the cache is valid again");
        printf("%s cache file: rejected, rebuilt, energy error %.1e\n", truncate_files ? "truncated" : "corrupted",
               fabs(r.energy - cold.energy));
    }

    clear_cache();
    pid_t pids[4];
    for (int k = 0; k < 4; k++)
        pids[k] = start_child(10 + k);
    int all_ok = 1;
    for (int k = 0; k < 4; k++) {
        child_result r = finish_child(pids[k], 10 + k);
        all_ok &= r.ok && fabs(r.energy - cold.energy) < 1e-9;
    }
    CHECK(all_ok, "4 concurrent cold starts did not all succeed");
    child_result after = run_child(4);
    CHECK(after.ok && after.builds == 0 && after.rejects == 0,
          "cache after concurrent starts: builds %llu, rejects %llu", after.builds, after.rejects);
    printf("4 concurrent cold starts: %s; then a warm start compiled %llu\n", all_ok ? "all ok" : "FAILED",
           after.builds);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "child"))
        return child_main(argv[2], argv[3]);
    if (argc == 2)
        device_name = argv[1];
    char base[] = "/tmp/mlff-cache-test-XXXXXX";
    if (!mkdtemp(base))
        return 1;
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", base);
    unit_tests();
#ifdef MLFF_HAVE_VULKAN
    pipeline_cache_header_tests();
#endif
    end_to_end();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", base);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
