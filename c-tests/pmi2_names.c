/* PMI-2's name service through libpmi2.so.0: rank 0 publishes, everyone looks it up,
 * rank 0 withdraws it, and then it is gone. */
#include <pmi2.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(void)
{
    int spawned, size, rank, appnum;
    char jobid[256], service[300], port[256];

    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI2_Job_GetId(jobid, sizeof jobid), PMI2_SUCCESS);
    snprintf(service, sizeof service, "svc2-%s", jobid);
    CHECK_RC(PMI2_Nameserv_publish(NULL, NULL, "p"), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Nameserv_lookup(service, NULL, NULL, 10), PMI2_ERR_INVALID_ARG);
    /* A server without a name service refuses every process's own probe name alike. */
    char probe[300];
    snprintf(probe, sizeof probe, "probe2-%d-%s", rank, jobid);
    int rc = PMI2_Nameserv_publish(probe, NULL, "p");
    if (rc == PMI2_FAIL && check_deviation_allowed("publish-unsupported")) {
        CHECK_DEV(rc == PMI2_SUCCESS, "publish-unsupported", "PMI2_Nameserv_publish returned %d",
                  rc);
    } else {
        CHECK_RC(rc, PMI2_SUCCESS);
        CHECK_RC(PMI2_Nameserv_unpublish(probe, NULL), PMI2_SUCCESS);
        if (rank == 0)
            CHECK_RC(PMI2_Nameserv_publish(service, NULL, "tcp://host:1234"), PMI2_SUCCESS);
        /* A fence is not a barrier everywhere (Hydra 4.0.2 answers it at once): the
         * order is carried by KVS keys, which a get waits for or a fence publishes. */
        int len;
        char flag[8];
        if (rank == 0)
            CHECK_RC(PMI2_KVS_Put("published", "yes"), PMI2_SUCCESS);
        REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
        CHECK_RC(PMI2_KVS_Get(NULL, 0, "published", flag, sizeof flag, &len), PMI2_SUCCESS);
        CHECK_RC(PMI2_Nameserv_lookup(service, NULL, port, sizeof port), PMI2_SUCCESS);
        CHECK(strcmp(port, "tcp://host:1234") == 0);
        CHECK_RC(PMI2_Nameserv_lookup(service, NULL, port, 4), PMI2_ERR_INVALID_LENGTH);
        /* Everyone has looked: rank 0 withdraws the name once every rank said so. */
        char key[64];
        snprintf(key, sizeof key, "looked-%d", rank);
        CHECK_RC(PMI2_KVS_Put(key, "yes"), PMI2_SUCCESS);
        REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
        if (rank == 0) {
            for (int r = 0; r < size; r++) {
                snprintf(key, sizeof key, "looked-%d", r);
                CHECK_RC(PMI2_KVS_Get(NULL, r, key, flag, sizeof flag, &len), PMI2_SUCCESS);
            }
            CHECK_RC(PMI2_Nameserv_unpublish(service, NULL), PMI2_SUCCESS);
            CHECK_RC(PMI2_Nameserv_lookup(service, NULL, port, sizeof port), PMI2_FAIL);
        }
    }
    REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
    CHECK_RC(PMI2_Finalize(), PMI2_SUCCESS);
    return check_done();
}
