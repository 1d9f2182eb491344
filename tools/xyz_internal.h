/* What the XYZ reader (xyz.c) and writer (xyz_write.c) share, and nothing else does. */
#ifndef MLFF_TOOLS_XYZ_INTERNAL_H
#define MLFF_TOOLS_XYZ_INTERNAL_H

#include <locale.h>

/* The C locale for the calling thread until leave, whatever the process uses. */
typedef struct xyz_c_locale_scope {
    locale_t previous;
} xyz_c_locale_scope;

void xyz_c_locale_enter(xyz_c_locale_scope *scope);
void xyz_c_locale_leave(xyz_c_locale_scope *scope);

/* snprintf(out, ..., "%*.*e", width, precision, x), exactly, faster for the
 * common magnitudes; out holds width + 32 bytes. Returns the length. */
int xyz_format_e(double x, int precision, int width, char *out);

#endif
