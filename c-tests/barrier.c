/* Many barriers in a row, each one proven by the KVS: in round i every rank puts a key
 * before the barrier and reads its right neighbour's after it.
 * Usage: barrier <rounds> */
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned, rank, size, rounds = argc > 1 ? atoi(argv[1]) : 100;
    char kvsname[256], key[64], value[64], expected[64];

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvsname, sizeof kvsname), PMI_SUCCESS);
    for (int i = 0; i < rounds; i++) {
        snprintf(key, sizeof key, "round-%d-rank-%d", i, rank);
        snprintf(value, sizeof value, "%d:%d", i, rank);
        CHECK_RC(PMI_KVS_Put(kvsname, key, value), PMI_SUCCESS);
        CHECK_RC(PMI_KVS_Commit(kvsname), PMI_SUCCESS);
        REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
        int peer = (rank + 1) % size;
        snprintf(key, sizeof key, "round-%d-rank-%d", i, peer);
        snprintf(expected, sizeof expected, "%d:%d", i, peer);
        CHECK_RC(PMI_KVS_Get(kvsname, key, value, sizeof value), PMI_SUCCESS);
        CHECK(strcmp(value, expected) == 0);
    }
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
