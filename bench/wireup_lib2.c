/* The MPI_Init pattern through libpmi2.so.0 (or another PMI-2 client: Slurm's, MPICH's):
 * PMI2_Init, the job id, two business cards put, a fence, every rank's cards read (its
 * rank given as the hint, as MPICH's CH4 does), a fence. Prints the line wireup_lib.c
 * prints. The cards have no ';' (the PMI-2 wire cannot carry one: Hydra makes it a ','). */
#include <pmi2.h>
#include <stdlib.h>
#include <string.h>

#include "wireup.h"

int main(void)
{
    int spawned, size, rank, appnum, len;
    char jobid[PMI2_MAX_VALLEN], key[PMI2_MAX_KEYLEN], value[PMI2_MAX_VALLEN],
        expected[PMI2_MAX_VALLEN];
    long long t0 = wireup_now_ns();
    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    long long ti = wireup_now_ns();
    check_rank = rank;
    REQUIRE_RC(PMI2_Job_GetId(jobid, sizeof jobid), PMI2_SUCCESS);
    for (int which = 0; which < 2; which++) {
        snprintf(key, sizeof key, "card-%d-%d", rank, which);
        bc_card2(value, sizeof value, rank, which);
        REQUIRE_RC(PMI2_KVS_Put(key, value), PMI2_SUCCESS);
    }
    REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
    int learned = 0;
    for (int peer = 0; peer < size; peer++)
        for (int which = 0; which < 2; which++) {
            snprintf(key, sizeof key, "card-%d-%d", peer, which);
            bc_card2(expected, sizeof expected, peer, which);
            int rc = PMI2_KVS_Get(jobid, peer, key, value, sizeof value, &len);
            if (rc == PMI2_SUCCESS && strcmp(value, expected) == 0)
                learned++;
            else
                check_fail(__FILE__, __LINE__, "get %s: rc %d", key, rc);
        }
    int ok = learned == 2 * size;
    REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
    long long t1 = wireup_now_ns();
    wireup_report(rank, t0, ti, t1, ok);
    REQUIRE_RC(PMI2_Finalize(), PMI2_SUCCESS);
    return ok ? 0 : 1;
}
