/* Shared by the two wire-up programs: the clock and the process's own cost (the business
 * cards are check.h's). */
#include <sys/resource.h>
#include <time.h>

#include "../c-tests/check.h"

static inline long long wireup_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The CPU time (user and system) this process has used, in µs, and its minor page faults:
 * printed as ` cpu_us=C minflt=F`. */
static inline void wireup_print_cost(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf(" cpu_us=%ld minflt=%ld",
           (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
               ru.ru_stime.tv_usec,
           ru.ru_minflt);
}
