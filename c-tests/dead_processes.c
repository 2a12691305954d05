/* PMI_dead_processes, the process manager's own key that changes: Hydra run with
 * -disable-auto-cleanup answers it with the ranks that have died so far, and MPICH polls
 * it for its failed processes. Every rank reads it twice (empty: a key read again soon is
 * what the library keeps), then the last rank leaves without PMI_Finalize and the others
 * read it until it names that rank (at most 10 s). Hydra tells the survivors with SIGUSR1,
 * which MPICH catches: here it is ignored. Each survivor writes its verdict to
 * OUTDIR/rank-R.txt ("ok ..." or what went wrong); how Hydra ends the job is its own.
 * Usage: dead_processes OUTDIR */
#define _POSIX_C_SOURCE 200809L
#include <pmi.h>
#include <signal.h>
#include <time.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned, rank, size, vallen;
    REQUIRE(argc == 2);
    REQUIRE(signal(SIGUSR1, SIG_IGN) != SIG_ERR);
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE(size >= 2);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&vallen), PMI_SUCCESS);
    char kvsname[256], *dead = calloc(1, (size_t)vallen);
    REQUIRE(dead != NULL);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvsname, sizeof kvsname), PMI_SUCCESS);
    for (int i = 0; i < 2; i++) {
        CHECK_RC(PMI_KVS_Get(kvsname, "PMI_dead_processes", dead, vallen), PMI_SUCCESS);
        CHECK(strcmp(dead, "") == 0);
    }
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    if (rank == size - 1)
        _exit(3);
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.txt", argv[1], rank);
    FILE *out = fopen(path, "w");
    REQUIRE(out != NULL);
    char last[16];
    snprintf(last, sizeof last, "%d", size - 1);
    int rc = PMI_SUCCESS;
    for (int tries = 0; rc == PMI_SUCCESS && strcmp(dead, last) != 0 && tries < 200; tries++) {
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
        rc = PMI_KVS_Get(kvsname, "PMI_dead_processes", dead, vallen);
    }
    if (rc != PMI_SUCCESS || strcmp(dead, last) != 0 || check_failures)
        fprintf(out, "rc %d, PMI_dead_processes \"%s\", expected \"%s\"; %d failed checks\n", rc,
                dead, last, check_failures);
    else
        fprintf(out, "ok: rank %d saw rank %s dead\n", rank, dead);
    fclose(out);
    free(dead);
    PMI_Finalize();
    return 0;
}
