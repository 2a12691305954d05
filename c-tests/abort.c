/* The last rank aborts the job with the given code; the runner checks mpiexec's exit
 * status, and that the message reached the aborting process's stderr (sent to FILE,
 * because Hydra may tear the job down before its proxy forwards the last lines).
 * With "threaded", the aborting rank first starts a thread that blocks in PMI_Barrier
 * (the other ranks never enter it), so PMI_Abort runs while that thread holds the
 * library's lock; otherwise the other ranks wait in a barrier that never completes.
 * Usage: abort <exit code> [FILE|-] [threaded] */
#define _XOPEN_SOURCE 700 /* nanosleep */
#include <fcntl.h>
#include <pmi.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void *blocked_in_barrier(void *arg)
{
    (void)arg;
    PMI_Barrier();
    return NULL;
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
    int spawned, rank, size, code = argc > 1 ? atoi(argv[1]) : 1;
    int threaded = argc > 3 && strcmp(argv[3], "threaded") == 0;

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    if (rank == size - 1) {
        if (argc > 2 && strcmp(argv[2], "-") != 0) {
            int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            REQUIRE(fd >= 0 && dup2(fd, 2) == 2);
        }
        if (threaded) {
            pthread_t tid;
            REQUIRE(pthread_create(&tid, NULL, blocked_in_barrier, NULL) == 0);
            pause_ms(200); /* let it block in the barrier, holding the lock */
        }
        PMI_Abort(code, "abort test: rank is giving up on purpose");
    }
    if (threaded)
        pause_ms(30000); /* never enter the barrier: the job is torn down first */
    else
        PMI_Barrier(); /* never completes: the job is torn down */
    fprintf(stderr, "rank %d: survived the abort\n", rank);
    check_failures++;
    return check_done();
}
