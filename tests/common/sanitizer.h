/* Whether the test runs under AddressSanitizer (gcc or clang): such runs
 * check the host code, which lighter cases exercise as well, and ASan's
 * shadow memory rules out an address-space limit. */
#ifndef MLFF_TESTS_SANITIZER_H
#define MLFF_TESTS_SANITIZER_H

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#endif
