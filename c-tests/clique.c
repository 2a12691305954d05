/* The clique (ranks on this node) computed from PMI_process_mapping agrees with what
 * the launcher tells each process (Hydra: MPI_LOCALNRANKS / MPI_LOCALRANKID; Slurm:
 * SLURM_STEP_TASKS_PER_NODE / SLURM_LOCALID), and every member of a clique computes the
 * same clique. */
#define _XOPEN_SOURCE 700 /* gethostname */
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(void)
{
    int spawned, rank, size, n = -1, vallen;
    char kvs[256], key[64];

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&vallen), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_clique_size(&n), PMI_SUCCESS);
    CHECK(n >= 1 && n <= size);

    int *ranks = malloc(sizeof(int) * (n + 1));
    ranks[n] = -7;
    if (n > 1)
        CHECK_RC(PMI_Get_clique_ranks(ranks, n - 1), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_Get_clique_ranks(NULL, n), PMI_ERR_INVALID_ARG);
    REQUIRE_RC(PMI_Get_clique_ranks(ranks, n + 1), PMI_SUCCESS);
    CHECK(ranks[n] == -7); /* nothing past the clique */

    int position = -1;
    for (int i = 0; i < n; i++) {
        CHECK(ranks[i] >= 0 && ranks[i] < size);
        if (i > 0)
            CHECK(ranks[i - 1] < ranks[i]);
        if (ranks[i] == rank)
            position = i;
    }
    CHECK(position >= 0);

    /* What the launcher says (across real hosts prterun says nothing but through PMIx:
     * there the host names below are the truth). */
    check_local_is_launcher("clique", n, position, rank, size);

    /* Every member of my clique must see the same clique. */
    char *mine = malloc(vallen), *theirs = malloc(vallen);
    mine[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(mine + strlen(mine), vallen - strlen(mine), "%s%d", i ? "," : "", ranks[i]);
    snprintf(key, sizeof key, "clique-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, key, mine), PMI_SUCCESS);
    /* This rank's host (or node), for the check against the truth across real hosts. */
    char host[256] = "";
    REQUIRE(gethostname(host, sizeof host - 1) == 0);
    check_node_name(host, sizeof host);
    snprintf(key, sizeof key, "host-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, key, host), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "clique-%d", ranks[i]);
        CHECK_RC(PMI_KVS_Get(kvs, key, theirs, vallen), PMI_SUCCESS);
        CHECK(strcmp(mine, theirs) == 0);
    }
    if (check_real_hosts()) {
        char **hosts = calloc((size_t)size, sizeof *hosts);
        for (int r = 0; r < size; r++) {
            hosts[r] = calloc(256, 1);
            snprintf(key, sizeof key, "host-%d", r);
            CHECK_RC(PMI_KVS_Get(kvs, key, hosts[r], 256), PMI_SUCCESS);
        }
        check_local_is_host("PMI_Get_clique_ranks", hosts, size, rank, ranks, n);
        for (int r = 0; r < size; r++)
            free(hosts[r]);
        free(hosts);
    }
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS); /* no rank leaves before the last reply */
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    free(ranks), free(mine), free(theirs);
    return check_done();
}
