/* Slurm's PMIX_Ring through libpmi2.so.0: every process gives its rank as its value and
 * gets its ring position and its neighbours' values; the positions are checked through
 * the KVS. Where the server has no ring (Hydra, PMIx) the call fails with PMI2_FAIL and
 * nothing is sent (deviation ring-unsupported: Hydra kills the job on an unknown command). */
#include <pmi2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void)
{
    int spawned, size, rank, appnum, pos = -1, n = -1, len;
    char mine[32], left[32], right[32], key[64], value[64];

    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    check_rank = rank;
    snprintf(mine, sizeof mine, "rank-%d", rank);
    CHECK_RC(PMIX_Ring(mine, &pos, &n, left, right, 4), PMI2_ERR_INVALID_VAL_LENGTH);
    int rc = PMIX_Ring(mine, &pos, &n, left, right, sizeof left);
    if (rc == PMI2_FAIL && size > 1) {
        CHECK_DEV(rc == PMI2_SUCCESS, "ring-unsupported", "PMIX_Ring returned %d", rc);
    } else {
        CHECK_RC(rc, PMI2_SUCCESS);
        CHECK(n == size && pos >= 0 && pos < size);
        /* Publish who holds each position, then check the neighbours' values. */
        snprintf(key, sizeof key, "ring-%d", pos);
        CHECK_RC(PMI2_KVS_Put(key, mine), PMI2_SUCCESS);
        REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
        snprintf(key, sizeof key, "ring-%d", (pos + n - 1) % n);
        CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, key, value, sizeof value, &len), PMI2_SUCCESS);
        CHECKF(strcmp(value, left) == 0, "left \"%s\", position %d holds \"%s\"", left,
               (pos + n - 1) % n, value);
        snprintf(key, sizeof key, "ring-%d", (pos + 1) % n);
        CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, key, value, sizeof value, &len), PMI2_SUCCESS);
        CHECKF(strcmp(value, right) == 0, "right \"%s\", position %d holds \"%s\"", right,
               (pos + 1) % n, value);
    }
    REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
    CHECK_RC(PMI2_Finalize(), PMI2_SUCCESS);
    return check_done();
}
