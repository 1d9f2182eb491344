/*
 * stb_ds, from Debian's libstb-dev (whose libstb.so holds the
 * implementation): growable arrays (arrput, arrlen, arrins, arrdel,
 * arrfree ...) and hash maps (hmput, hmgeti, hmfree ...), for the lists
 * and lookups that were written out by hand. An array is a plain pointer
 * to its first element (NULL: empty), stb_ds keeping the length and the
 * capacity before it. stb_ds does not report a failed allocation: use it
 * for small bookkeeping (programs, pipelines, free ranges, models), not for
 * what a batch's size decides.
 */
#ifndef MLFF_CORE_DS_H
#define MLFF_CORE_DS_H

#include <stb_ds.h>

/* Some of its macros trip the warnings of this build: arrsetlen(a, 0)
 * compares an unsigned size with 0 (-Wtype-limits), arrins and arrinsn
 * signed with unsigned sizes (-Wsign-compare); the uses here do not
 * (-Wsequence-point, which some uses trip, neither). Empty an array with
 * mlff_arrclear, insert with arrput, then a move. */
#define mlff_arrclear(a) ((a) ? (void)(stbds_header(a)->length = 0) : (void)0)

#endif
