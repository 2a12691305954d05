/* Tiny assertion helpers for the C tests: one behaviour per program, the exit status is
 * the verdict, and each failed check names its line, the rank and the code seen. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures;
static int check_rank = -1;

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: rank %d: check failed: %s\n", __FILE__, __LINE__,   \
                    check_rank, #cond);                                                 \
            check_failures++;                                                           \
        }                                                                               \
    } while (0)

/* Check that a call returns the expected PMI code. */
#define CHECK_RC(call, expected)                                                        \
    do {                                                                                \
        int check_rc_ = (call);                                                         \
        if (check_rc_ != (expected)) {                                                  \
            fprintf(stderr, "%s:%d: rank %d: %s returned %d, expected %s (%d)\n",       \
                    __FILE__, __LINE__, check_rank, #call, check_rc_, #expected,        \
                    (int)(expected));                                                   \
            check_failures++;                                                           \
        }                                                                               \
    } while (0)

/* Give up at once when a step everything else depends on fails. */
#define REQUIRE_RC(call, expected)                                                      \
    do {                                                                                \
        int check_rc_ = (call);                                                         \
        if (check_rc_ != (expected)) {                                                  \
            fprintf(stderr, "%s:%d: rank %d: %s returned %d, expected %s: giving up\n", \
                    __FILE__, __LINE__, check_rank, #call, check_rc_, #expected);       \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

/* Give up at once when a precondition does not hold. */
#define REQUIRE(cond)                                                                   \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: rank %d: %s does not hold: giving up\n", __FILE__,   \
                    __LINE__, check_rank, #cond);                                       \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

static int check_done(void)
{
    if (check_failures)
        fprintf(stderr, "rank %d: %d check(s) failed\n", check_rank, check_failures);
    return check_failures ? 1 : 0;
}

#endif
