/*
 * mlff tune and the records it writes (api/mlff.h, runtime/tune.c,
 * runtime/tuning_record.h), on the CPU or MLFF_TEST_DEVICE's device, in a
 * cache directory of its own: a quick tune writes a record; another
 * process reads it (mlff_get_stats' tuning_record, mlff_get_tuning's text),
 * with the environment and settings.tuning over it; a corrupt record and
 * one measured for another driver are ignored, each with one line on
 * standard error; bad settings.tuning is refused naming the key or value.
 * Usage: test_tune   (re-executes itself as "test_tune child OUT [TUNING]")
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/context.h"
#include "runtime/tuning_record.h"
#include "tests/common/check.h"
#include "tests/common/model.h"
#include "tests/common/skip.h"

static char dir[256], cache_dir[300];

/* A context on the device; its stats and tuning text into out, its stderr into out.err. */
static int child_main(const char *out, const char *tuning)
{
    char err_path[400];
    snprintf(err_path, sizeof err_path, "%s.err", out);
    if (!freopen(err_path, "w", stderr))
        return 1;
    mlff_settings s;
    mlff_default_settings(&s);
    s.device = test_device();
    s.tuning = tuning && *tuning ? tuning : NULL;
    mlff_context *ctx = NULL;
    mlff_status st = mlff_context_create(&s, &ctx);
    FILE *f = fopen(out, "w");
    if (!f)
        return 1;
    if (st != MLFF_OK) {
        fprintf(f, "status %d %s\n", (int)st, mlff_last_error(ctx));
    } else {
        mlff_stats stats;
        mlff_get_stats(ctx, &stats);
        size_t needed = 0;
        mlff_get_tuning(ctx, NULL, 0, &needed);
        char *text = malloc(needed);
        if (text && mlff_get_tuning(ctx, text, needed, NULL) == MLFF_OK)
            fprintf(f, "status 0\ntuning_record %llu\n%s", (unsigned long long)stats.tuning_record, text);
        free(text);
    }
    fclose(f);
    mlff_context_destroy(ctx);
    return 0;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text) {
        text[fread(text, 1, (size_t)n, f)] = 0;
    }
    fclose(f);
    return text;
}

typedef struct child_result {
    char *out, *err;
    int record; /* its stats' tuning_record */
} child_result;

static child_result run_child(const char *tuning)
{
    static int k;
    char out[400];
    snprintf(out, sizeof out, "%s/child%d.txt", dir, k++);
    const pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_tune", "child", out, tuning ? tuning : "", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    child_result r = {NULL, NULL, -1};
    char err[410];
    snprintf(err, sizeof err, "%s.err", out);
    r.out = read_text(out);
    r.err = read_text(err);
    const char *at = r.out ? strstr(r.out, "tuning_record ") : NULL;
    if (at)
        r.record = atoi(at + strlen("tuning_record "));
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && r.out && r.err, "the child failed (status %d)", status);
    if (!r.out)
        r.out = calloc(1, 1);
    if (!r.err)
        r.err = calloc(1, 1);
    return r;
}

static void child_free(child_result *r)
{
    free(r->out);
    free(r->err);
}

/* How many lines of text hold `what`. */
static int lines_with(const char *text, const char *what)
{
    int n = 0;
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        const size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[2048];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        n += strstr(buf, what) != NULL;
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* The record's one file in the cache directory. */
static int record_file(char *path, size_t size)
{
    DIR *d = opendir(cache_dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, "tuning-", 7)) {
            snprintf(path, size, "%s/%s", cache_dir, e->d_name);
            n++;
        }
    if (d)
        closedir(d);
    return n;
}

static void progress(void *user, const char *line)
{
    (void)user;
    printf("  tune: %s\n", line);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "child"))
        return child_main(argv[2], argc > 3 ? argv[3] : NULL);
    snprintf(dir, sizeof dir, "/tmp/mlff-tune-test-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(cache_dir, sizeof cache_dir, "%s/cache", dir);
    setenv("MLFF_CACHE_DIR", cache_dir, 1);

    /* 1. A quick tune writes a record. */
    mlff_settings settings;
    mlff_default_settings(&settings);
    settings.device = test_device();
    mlff_tune_options options;
    memset(&options, 0, sizeof options);
    options.quick = 1;
    options.progress = progress;
    char text[65536];
    size_t needed = 0;
    mlff_status st = mlff_tune(&settings, &options, text, sizeof text, &needed);
    if (st == MLFF_ERROR_DEVICE)
        test_skip(text);
    CHECK(st == MLFF_OK && needed <= sizeof text, "mlff_tune: %s", text);
    printf("%s", text);
    CHECK(strstr(text, "\ndense_most_atoms=") && strstr(text, "\nelement_networks="),
          "the record holds what was measured");
    char path[600];
    CHECK(record_file(path, sizeof path) == 1, "one record in %s", cache_dir);

    /* 2. Another process reads it: its stats and text say so; the
     * environment and settings.tuning go over it. */
    child_result r = run_child(NULL);
    CHECK(r.record == 1, "a second process does not use the record: %s", r.out);
    CHECK(strstr(r.out, path) != NULL, "mlff_get_tuning does not name the record %s:\n%s", path, r.out);
    CHECK(lines_with(r.out, "# record") >= 3, "mlff_get_tuning marks the measured keys as the record's:\n%s", r.out);
    CHECK(!*r.err, "a good record makes no message: '%s'", r.err);
    printf("a second process: tuning_record %d\n", r.record);
    child_free(&r);
    setenv("MLFF_ELEMENT_NETWORKS", "stacked", 1);
    r = run_child("dense_most_atoms=7");
    unsetenv("MLFF_ELEMENT_NETWORKS");
    CHECK(r.record == 1 && lines_with(r.out, "dense_most_atoms=7") == 1 &&
              lines_with(r.out, "# settings.tuning") == 1 && lines_with(r.out, "element_networks=stacked") == 1 &&
              lines_with(r.out, "# environment, MLFF_ELEMENT_NETWORKS") == 1,
          "the environment and settings.tuning over the record:\n%s", r.out);
    child_free(&r);

    /* 3. A corrupt record: ignored, one line on stderr. */
    size_t size = 0;
    char *good = NULL;
    {
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL, "cannot read %s", path);
        if (f) {
            fseek(f, 0, SEEK_END);
            size = (size_t)ftell(f);
            fseek(f, 0, SEEK_SET);
            good = malloc(size);
            if (good && fread(good, 1, size, f) != size)
                size = 0;
            fclose(f);
        }
    }
    if (good && size > 10) {
        char *bad = malloc(size);
        memcpy(bad, good, size);
        bad[size - 3] ^= 0x20;
        FILE *f = fopen(path, "wb");
        fwrite(bad, 1, size, f);
        fclose(f);
        free(bad);
        r = run_child(NULL);
        CHECK(r.record == 0 && strstr(r.out, "status 0"), "a corrupt record used:\n%s", r.out);
        CHECK(lines_with(r.err, "") == 1 && lines_with(r.err, "is ignored") == 1 && strstr(r.err, path),
              "a corrupt record: want one line on stderr, got '%s'", r.err);
        printf("corrupt record: %s", r.err);
        child_free(&r);
    }

    /* 4. A record measured for another driver, under this device's name. */
    mlff_context *ctx = NULL;
    st = mlff_context_create(&settings, &ctx);
    CHECK(st == MLFF_OK, "context: %s", mlff_last_error(ctx));
    if (st == MLFF_OK) {
        mlff_device_info info;
        ctx->iface->opened_device(ctx->backend, &info);
        snprintf(info.identity, sizeof info.identity, "another driver");
        mlff_error err;
        mlff_error_clear(&err);
        CHECK(mlff_tuning_record_write(cache_dir, &info, "dense_most_atoms=3\n", &err) == MLFF_OK, "%s", err.message);
        char foreign[600];
        CHECK(record_file(foreign, sizeof foreign) == 1 && !strcmp(foreign, path),
              "another driver's record has the same file name");
        r = run_child(NULL);
        CHECK(r.record == 0 && lines_with(r.out, "dense_most_atoms=3") == 0, "a foreign record used:\n%s", r.out);
        CHECK(lines_with(r.err, "") == 1 && strstr(r.err, "another device, driver or library version"),
              "a foreign record: want one line on stderr, got '%s'", r.err);
        printf("foreign record: %s", r.err);
        child_free(&r);
    }
    mlff_context_destroy(ctx);

    /* 5. Bad settings.tuning: refused, naming the key or the value. */
    static const char *const bad[][2] = {{"sum_lanes=5", "sum_lanes=5"}, {"fast=yes", "unknown key 'fast'"}};
    for (int k = 0; k < 2; k++) {
        mlff_settings s = settings;
        s.tuning = bad[k][0];
        ctx = NULL;
        st = mlff_context_create(&s, &ctx);
        CHECK(st == MLFF_ERROR_INVALID_ARGUMENT && strstr(mlff_last_error(ctx), bad[k][1]),
              "settings.tuning '%s': status %d, '%s'", bad[k][0], (int)st, mlff_last_error(ctx));
        printf("settings.tuning '%s': %s\n", bad[k][0], mlff_last_error(ctx));
        mlff_context_destroy(ctx);
    }

    free(good);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
