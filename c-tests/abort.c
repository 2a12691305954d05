/* The last rank aborts the job with the given code while the others wait in a barrier;
 * the test runner checks mpiexec's exit status, and that the message reached the
 * aborting process's stderr (sent to FILE, because Hydra may tear the job down before
 * its proxy forwards the last lines).
 * Usage: abort <exit code> [FILE] */
#include <pmi.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned, rank, size, code = argc > 1 ? atoi(argv[1]) : 1;

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    if (rank == size - 1) {
        if (argc > 2) {
            int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            REQUIRE(fd >= 0 && dup2(fd, 2) == 2);
        }
        PMI_Abort(code, "abort test: rank is giving up on purpose");
    }
    PMI_Barrier(); /* never completes: the job is torn down */
    fprintf(stderr, "rank %d: survived the abort\n", rank);
    check_failures++;
    return check_done();
}
