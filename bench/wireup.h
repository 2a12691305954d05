/* Shared by the two wire-up programs: the business cards and the clock. */
#include <stdio.h>
#include <time.h>

static inline long long wireup_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Two cards per rank, as exchange.c makes them (a TCP address and a shm segment). */
static inline void wireup_card(char *buf, size_t len, int rank, int which)
{
    if (which == 0)
        snprintf(buf, len, "tcp://10.0.%d.%d:%d", rank / 250, rank % 250 + 1, 40000 + rank);
    else
        snprintf(buf, len, "shm:/dev/shm/demo-%d;pid-slot=%d", rank, rank * 7);
}
