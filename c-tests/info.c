/* Rank, size, appnum, universe size, the maxima and ids as the launcher reports them.
 * Usage: info SIZE APPNUM UNIVERSE [KVSNAME_MAX KEY_MAX VALUE_MAX]
 * (the maxima default to Hydra 4.0.2's 256 64 1024). */
#include <pmi.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned = -1, rank = -1, size = -1, appnum = -2, universe = -2, len = -1;
    char name[512], id[512], domain[512];
    PMI_BOOL initialized = PMI_TRUE;

    if (argc != 4 && argc != 7) {
        fprintf(stderr, "usage: info SIZE APPNUM UNIVERSE [KVSNAME_MAX KEY_MAX VALUE_MAX]\n");
        return 2;
    }
    int namemax = argc == 7 ? atoi(argv[4]) : 256, keymax = argc == 7 ? atoi(argv[5]) : 64;
    int valmax = argc == 7 ? atoi(argv[6]) : 1024;
    CHECK_RC(PMI_Initialized(&initialized), PMI_SUCCESS);
    CHECK(initialized == PMI_FALSE);
    static char outbuf[BUFSIZ];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    /* PMI_Init leaves the program's stdio as the program set it (MPICH's simple client
     * makes stdout unbuffered): what is printed waits in the buffer. */
    fputs("info: a line printed after PMI_Init", stdout);
    CHECK(__fpending(stdout) > 0);
    putchar('\n');
    fflush(stdout);
    CHECK_RC(PMI_Initialized(&initialized), PMI_SUCCESS);
    CHECK(initialized == PMI_TRUE);
    CHECK(spawned == PMI_FALSE);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    CHECK_RC(PMI_Get_size(&size), PMI_SUCCESS);
    CHECK(size == atoi(argv[1]));
    CHECK(rank >= 0 && rank < size);
    CHECK_RC(PMI_Get_appnum(&appnum), PMI_SUCCESS);
    CHECK(appnum == atoi(argv[2]));
    CHECK_RC(PMI_Get_universe_size(&universe), PMI_SUCCESS);
    CHECK(universe == atoi(argv[3]));
    /* Cached answers stay the same. */
    CHECK_RC(PMI_Get_appnum(&appnum), PMI_SUCCESS);
    CHECK(appnum == atoi(argv[2]));
    CHECK_RC(PMI_Get_universe_size(&universe), PMI_SUCCESS);
    CHECK(universe == atoi(argv[3]));

    /* The server's maxima; the id is the kvsname, so it has the same one. */
    CHECK_RC(PMI_KVS_Get_name_length_max(&len), PMI_SUCCESS);
    CHECK(len == namemax);
    CHECK_RC(PMI_Get_id_length_max(&len), PMI_SUCCESS);
    CHECK(len == namemax);
    CHECK_RC(PMI_KVS_Get_key_length_max(&len), PMI_SUCCESS);
    CHECK(len == keymax);
    CHECK_RC(PMI_KVS_Get_value_length_max(&len), PMI_SUCCESS);
    CHECK(len == valmax);

    /* The id and the KVS domain id are the kvsname. */
    CHECK_RC(PMI_KVS_Get_my_name(name, sizeof name), PMI_SUCCESS);
    CHECK_RC(PMI_Get_id(id, sizeof id), PMI_SUCCESS);
    CHECK_RC(PMI_Get_kvs_domain_id(domain, sizeof domain), PMI_SUCCESS);
    CHECK(strlen(name) > 0);
    CHECK(strcmp(name, id) == 0);
    CHECK(strcmp(name, domain) == 0);

    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    CHECK_RC(PMI_Initialized(&initialized), PMI_SUCCESS);
    CHECK(initialized == PMI_FALSE);
    return check_done();
}
