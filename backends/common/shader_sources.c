#include "shader_sources.h"

#include <string.h>

const char *mlff_shader_find(const mlff_shader_source *table, const char *name)
{
    for (; table->name; table++)
        if (strcmp(table->name, name) == 0)
            return table->text;
    return NULL;
}
