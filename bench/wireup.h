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

/* The CPU time (user and system) this process has used, in µs, and its minor page faults,
 * as ` cpu_us=C minflt=F` in `buf`, for the one printf of the result line (ranks' lines
 * written in several pieces can interleave at the launcher). */
static inline const char *wireup_cost(char *buf, size_t size)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    snprintf(buf, size, " cpu_us=%ld minflt=%ld",
             (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
                 ru.ru_stime.tv_usec,
             ru.ru_minflt);
    return buf;
}
