/* The environment (environment.h): the library's one caller of getenv. */
#include "environment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/profile.h"

static const char *variable(const char *name)
{
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

int mlff_environment_profile(void)
{
    const char *log = variable("MLFF_LOG");
    if (log && (strstr(log, "profile") || strstr(log, "all")))
        return MLFF_PROFILE_EVENTS;
    return log && strstr(log, "phases") ? MLFF_PROFILE_PHASES : MLFF_PROFILE_OFF;
}

void mlff_environment_read(mlff_environment *env)
{
    memset(env, 0, sizeof *env);
    const char *log = variable("MLFF_LOG");
    env->log_cache = log && (strstr(log, "cache") || strstr(log, "all"));
    env->profile = mlff_environment_profile();
    const char *mode = variable("MLFF_CACHE");
    env->cache_off = mode && (!strcmp(mode, "off") || !strcmp(mode, "0"));
    const char *dir = variable("MLFF_CACHE_DIR"), *xdg = variable("XDG_CACHE_HOME"), *home = variable("HOME");
    int n = 0;
    if (dir)
        n = snprintf(env->cache_dir, sizeof env->cache_dir, "%s", dir);
    else if (xdg)
        n = snprintf(env->cache_dir, sizeof env->cache_dir, "%s/mlff", xdg);
    else if (home)
        n = snprintf(env->cache_dir, sizeof env->cache_dir, "%s/.cache/mlff", home);
    if (n < 0 || n >= (int)sizeof env->cache_dir)
        env->cache_dir[0] = 0;
    const char *validation = variable("MLFF_VULKAN_VALIDATION");
    env->vulkan_validation = validation && strcmp(validation, "0") != 0;
}

void mlff_environment_backend_options(const mlff_environment *env, mlff_backend_options *opts)
{
    opts->cache_dir = env->cache_off || !env->cache_dir[0] ? NULL : env->cache_dir;
    opts->log_cache = env->log_cache;
    opts->profile = env->profile;
    opts->vulkan_validation = env->vulkan_validation;
}

mlff_status mlff_environment_tuning(mlff_tuning *t, unsigned char *changed, mlff_error *err)
{
    for (int k = 0; k < mlff_n_tuning_keys; k++) {
        const mlff_tuning_key *key = &mlff_tuning_keys[k];
        const char *value = key->env ? variable(key->env) : NULL;
        if (!value)
            continue;
        mlff_status s = mlff_tuning_set_value(t, key, value, key->env, err);
        if (s != MLFF_OK)
            return s;
        if (changed)
            changed[k] = 1;
    }
    return MLFF_OK;
}

const char *mlff_environment_model(void)
{
    return variable("MLFF_MODEL");
}
