/* Shared by the two wire-up programs: the clock (the business cards are check.h's). */
#include <time.h>

#include "../c-tests/check.h"

static inline long long wireup_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
