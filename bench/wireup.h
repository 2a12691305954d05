/* Shared by the two wire-up programs: the clock and the process's own cost (the business
 * cards are check.h's). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <time.h>

#include "../c-tests/check.h"

static inline long long wireup_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The "NAME: N kB" line of the /proc file PATH, in KiB; -1 where the file or the line is
 * not there. */
static inline long wireup_proc_kb(const char *path, const char *name)
{
    char text[4096]; /* read on the stack: a FILE's buffer would be counted too */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got = 0, n;
    while (fd >= 0 && got < (ssize_t)sizeof text - 1 &&
           (n = read(fd, text + got, sizeof text - 1 - (size_t)got)) > 0)
        got += n;
    if (fd >= 0)
        close(fd);
    text[got] = '\0';
    char line[64];
    snprintf(line, sizeof line, "\n%s:", name);
    const char *at = strstr(text, line);
    long kb;
    return at && sscanf(at + strlen(line), " %ld kB", &kb) == 1 ? kb : -1;
}

/* The CPU time (user and system) this process has used, in µs, its minor page faults, its
 * peak resident set and its private memory now, as ` cpu_us=C minflt=F maxrss_kb=M
 * private_kb=P` in `buf`, for the one printf of the result line (ranks' lines written in
 * several pieces can interleave at the launcher). The peak is VmHWM of /proc/self/status,
 * this program's own since its exec: ru_maxrss carries over the high-water mark of the
 * process before the exec (a Hydra proxy's or slurmstepd's copy, forked). The private
 * memory is Private_Dirty of /proc/self/smaps_rollup (the pages it wrote: heap, stack,
 * the libraries' relocated and written data), not the shared page cache the RSS counts. */
static inline const char *wireup_cost(char *buf, size_t size)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    snprintf(buf, size, " cpu_us=%ld minflt=%ld maxrss_kb=%ld private_kb=%ld",
             (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
                 ru.ru_stime.tv_usec,
             ru.ru_minflt, wireup_proc_kb("/proc/self/status", "VmHWM"),
             wireup_proc_kb("/proc/self/smaps_rollup", "Private_Dirty"));
    return buf;
}

/* The one result line of a program that timed its init: `wireup rank=R init_ns=I ns=T
 * ok=K t0=.. t1=..` and its cost, printed in one printf and flushed. */
static inline void wireup_report(int rank, long long t0, long long ti, long long t1, int ok)
{
    char cost[128];
    printf("wireup rank=%d init_ns=%lld ns=%lld ok=%d t0=%lld t1=%lld%s\n", rank, ti - t0,
           t1 - t0, ok, t0, t1, wireup_cost(cost, sizeof cost));
    fflush(stdout);
}
