#include "skip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_skip(const char *why)
{
    const char *ci = getenv("CI");
    if (ci && !strcmp(ci, "true")) {
        fprintf(stderr, "FAIL: %s (CI=true: a missing device is an error)\n", why);
        exit(1);
    }
    fprintf(stderr, "SKIP: %s\n", why);
    exit(77);
}
