/* The last rank ends the job with PMI2_Abort(1, MESSAGE); the others wait in a fence
 * that never completes (a launcher may close their connections before it kills them:
 * then they wait on). The runner checks that the job ends (the launcher's exit status),
 * and that the message reached the aborting process's stderr (sent to FILE: the
 * launcher may tear the job down before its proxy forwards the last lines).
 * MESSAGE "-" is the empty message, "NULL" a NULL pointer.
 * Usage: pmi2_abort MESSAGE FILE */
#define _XOPEN_SOURCE 700 /* nanosleep */
#include <fcntl.h>
#include <pmi2.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned, size, rank, appnum;
    if (argc != 3) {
        fprintf(stderr, "usage: pmi2_abort MESSAGE FILE\n");
        return 2;
    }
    const char *msg = strcmp(argv[1], "NULL") == 0 ? NULL : strcmp(argv[1], "-") == 0 ? "" : argv[1];
    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    check_rank = rank;
    if (rank == size - 1) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        REQUIRE(fd >= 0 && dup2(fd, 2) == 2);
        PMI2_Abort(1, msg);
    } else {
        PMI2_KVS_Fence(); /* never completes: the job is torn down */
        struct timespec t = {30, 0};
        nanosleep(&t, NULL);
    }
    fprintf(stderr, "rank %d: survived the abort\n", rank);
    check_failures++;
    return check_done();
}
