/* Singleton mode: started without PMI_FD or PMI_PORT, the process is rank 0 of 1 with a
 * process-local KVS that follows the same rules as the wire, and the calls that need a
 * process manager fail with PMI_FAIL. */
#include <pmi.h>
#include <string.h>

#include "check.h"

int main(void)
{
    int spawned = -1, rank = -1, size = -1, universe = -1, appnum = -1, n = -1, ranks[2] = {-1, -1};
    char kvs[256], value[64], port[1024];

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    check_rank = 0;
    CHECK(spawned == PMI_FALSE);
    CHECK_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    CHECK_RC(PMI_Get_size(&size), PMI_SUCCESS);
    CHECK_RC(PMI_Get_universe_size(&universe), PMI_SUCCESS);
    CHECK_RC(PMI_Get_appnum(&appnum), PMI_SUCCESS);
    CHECK(rank == 0 && size == 1 && universe == 1 && appnum == 0);
    CHECK_RC(PMI_Get_clique_size(&n), PMI_SUCCESS);
    CHECK_RC(PMI_Get_clique_ranks(ranks, 2), PMI_SUCCESS);
    CHECK(n == 1 && ranks[0] == 0 && ranks[1] == -1);

    CHECK_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    CHECK(strncmp(kvs, "singleton_kvs_", 14) == 0);
    CHECK_RC(PMI_KVS_Put(kvs, "k", "v with spaces"), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Put(kvs, "k", "v with spaces"), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Put(kvs, "k", "other"), PMI_ERR_INVALID_KEY);
    CHECK_RC(PMI_KVS_Put(kvs, "bad key", "v"), PMI_ERR_INVALID_KEY);
    CHECK_RC(PMI_KVS_Put(kvs, "k2", "a\nb"), PMI_ERR_INVALID_VAL);
    CHECK_RC(PMI_KVS_Put("not-ours", "k3", "v"), PMI_ERR_INVALID_KVS);
    CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Get(kvs, "k", value, sizeof value), PMI_SUCCESS);
    CHECK(strcmp(value, "v with spaces") == 0);
    CHECK_RC(PMI_KVS_Get(kvs, "k", value, 5), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Get(kvs, "missing", value, sizeof value), PMI_ERR_INVALID_KEY);
    /* The process manager's layout key (RFC 13: it SHALL be provided): one process on one
     * node. */
    CHECK_RC(PMI_KVS_Get(kvs, "PMI_process_mapping", value, sizeof value), PMI_SUCCESS);
    CHECKF(strcmp(value, "(vector,(0,1,1))") == 0, "PMI_process_mapping is '%s'", value);

    /* Nobody to publish to or spawn from. */
    CHECK_RC(PMI_Publish_name("svc", "port"), PMI_FAIL);
    CHECK_RC(PMI_Lookup_name("svc", port), PMI_FAIL);
    const char *cmds[] = {"/bin/true"};
    int maxprocs[] = {1}, errors[1];
    CHECK_RC(PMI_Spawn_multiple(1, cmds, NULL, maxprocs, NULL, NULL, 0, NULL, errors), PMI_FAIL);

    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
