/* The table of model families (family.h). */
#include "family.h"

#include <string.h>

#include "ani.h"
#include "graph_model.h"

static const mlff_model_family *const families[] = {
    &mlff_family_ani,
    &mlff_family_graph,
};

const mlff_model_family *mlff_model_family_find(const char *name)
{
    for (size_t k = 0; name && k < sizeof families / sizeof *families; k++)
        if (!strcmp(families[k]->name, name))
            return families[k];
    return NULL;
}

/* Whether the file holds tensor `name`, or one starting with it when it ends in '.'. */
static int has_tensor(const mlff_model_file *mf, const char *name)
{
    const size_t len = strlen(name);
    if (len == 0 || name[len - 1] != '.')
        return mlff_model_file_tensor(mf, name) != NULL;
    for (size_t k = 0; k < mf->n_tensors; k++)
        if (!strncmp(mf->tensors[k].name, name, len))
            return 1;
    return 0;
}

const mlff_model_family *mlff_model_family_of(const mlff_model_file *mf, const char *path, mlff_error *err)
{
    const char *name = mlff_model_file_meta(mf, "family");
    const mlff_model_family *f = mlff_model_family_find(name);
    if (!f) {
        mlff_fail(err, MLFF_ERROR_UNSUPPORTED, "model %s: unknown model family '%s'", path, name ? name : "(none)");
        return NULL;
    }
    for (const char *const *key = f->metadata; key && *key; key++)
        if (!mlff_model_file_meta(mf, *key)) {
            mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model %s: a %s model needs the metadata '%s'", path, f->name, *key);
            return NULL;
        }
    for (const char *const *t = f->tensors; t && *t; t++)
        if (!has_tensor(mf, *t)) {
            mlff_fail(err, MLFF_ERROR_MODEL_FORMAT, "model %s: a %s model needs the tensor%s '%s'", path, f->name,
                      (*t)[strlen(*t) - 1] == '.' ? "s" : "", *t);
            return NULL;
        }
    return f;
}
