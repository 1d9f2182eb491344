#include "json_lite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *json_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (text && fread(text, 1, (size_t)size, f) == (size_t)size)
        text[size] = '\0';
    else {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

long json_numbers(const char *json, const char *key, double *out, long cap)
{
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(json, quoted);
    if (!p)
        return -1;
    p = strchr(p + strlen(quoted), ':');
    if (!p)
        return -1;
    p++;
    long n = 0;
    int depth = 0;
    do {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ',')
            p++;
        if (*p == '[') {
            depth++;
            p++;
        } else if (*p == ']') {
            depth--;
            p++;
        } else if (strncmp(p, "null", 4) == 0) {
            p += 4;
        } else if (strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0) {
            if (n < cap)
                out[n] = *p == 't';
            n++;
            p += *p == 't' ? 4 : 5;
        } else {
            char *end;
            double v = strtod(p, &end);
            if (end == p)
                return -1;
            if (n < cap)
                out[n] = v;
            n++;
            p = end;
        }
    } while (depth > 0 && *p);
    return n;
}
