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

/* The CPU time (user and system) this process has used, in µs, its minor page faults and
 * its peak resident set, as ` cpu_us=C minflt=F maxrss_kb=M` in `buf`, for the one printf of the result line (ranks' lines
 * written in several pieces can interleave at the launcher). */
static inline const char *wireup_cost(char *buf, size_t size)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    snprintf(buf, size, " cpu_us=%ld minflt=%ld maxrss_kb=%ld",
             (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
                 ru.ru_stime.tv_usec,
             ru.ru_minflt, ru.ru_maxrss);
    return buf;
}

/* The one result line of a program that timed its init: `wireup rank=R init_ns=I ns=T
 * ok=K t0=.. t1=..` and its cost, printed in one printf and flushed. */
static inline void wireup_report(int rank, long long t0, long long ti, long long t1, int ok)
{
    char cost[96];
    printf("wireup rank=%d init_ns=%lld ns=%lld ok=%d t0=%lld t1=%lld%s\n", rank, ti - t0,
           t1 - t0, ok, t0, t1, wireup_cost(cost, sizeof cost));
    fflush(stdout);
}
