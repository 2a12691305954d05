/* The MPI_Init pattern: every rank puts two "business cards", commits, enters the
 * barrier, reads every rank's cards and checks them, and prints what it learned.
 * Used by `make demo` and by the tests at several sizes and layouts.
 * Options: -q (print nothing), -no-commit (skip PMI_KVS_Commit before the barrier). */
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned, rank, size, namelen, keylen, vallen, nclique;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        quiet |= strcmp(argv[i], "-q") == 0;
        bc_skip_commit |= strcmp(argv[i], "-no-commit") == 0;
    }

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_name_length_max(&namelen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_key_length_max(&keylen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&vallen), PMI_SUCCESS);

    char *kvsname = malloc(namelen), *key = malloc(keylen), *value = malloc(vallen);
    char *expected = malloc(vallen);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvsname, namelen), PMI_SUCCESS);

    int learned = bc_exchange("card", kvsname, rank, size, key, keylen, value, expected, vallen);
    REQUIRE_RC(PMI_Get_clique_size(&nclique), PMI_SUCCESS);
    int *clique = malloc(sizeof(int) * nclique);
    REQUIRE_RC(PMI_Get_clique_ranks(clique, nclique), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);

    if (!quiet) {
        char peers[64] = "", node[256] = "";
        bc_card(expected, vallen, (rank + 1) % size, 0);
        snprintf(peers, sizeof peers, "rank %d's is %s", (rank + 1) % size, expected);
        for (int i = 0; i < nclique; i++)
            snprintf(node + strlen(node), sizeof node - strlen(node), "%s%d", i ? "," : "",
                     clique[i]);
        printf("rank %d of %d: read %d/%d business cards from %d ranks (%s); on my node: "
               "ranks %s\n",
               rank, size, learned, 2 * size, size, peers, node);
        fflush(stdout);
    }
    CHECK(learned == 2 * size);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    free(kvsname), free(key), free(value), free(expected), free(clique);
    return check_done();
}
