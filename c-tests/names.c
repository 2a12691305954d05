/* Name publishing under Hydra: rank 0 publishes, everyone looks the name up, a second
 * publish is refused, unpublish withdraws it, and names that are not RFC 13 words are
 * refused before anything is sent. */
#include <pmi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(void)
{
    int spawned, rank;
    char kvs[256], service[300], port[256]; /* MPICH's MPI_MAX_PORT_NAME */

    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    snprintf(service, sizeof service, "svc-%s", kvs);

    CHECK_RC(PMI_Publish_name("has space", "p"), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Publish_name("svc", "a=b"), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Publish_name("", "p"), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Lookup_name("bad\nname", port), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Unpublish_name("a b"), PMI_ERR_INVALID_ARG);
    /* A server without a name service (Slurm's pmix plugin) refuses the first publish:
     * allowed as a deviation, and then nothing else here can be checked. */
    char probe[300];
    snprintf(probe, sizeof probe, "probe-%d-%s", rank, kvs);
    int rc = PMI_Publish_name(probe, "p");
    if (rc == PMI_FAIL && check_deviation_allowed("publish-unsupported")) {
        CHECK_DEV(rc == PMI_SUCCESS, "publish-unsupported", "PMI_Publish_name returned %d",
                  rc);
        CHECK_RC(PMI_Lookup_name(probe, port), PMI_FAIL);
        CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
        return check_done();
    }
    CHECK_RC(rc, PMI_SUCCESS);
    CHECK_RC(PMI_Unpublish_name(probe), PMI_SUCCESS);
    /* An unknown name fails, and the connection stays usable. */
    CHECK_RC(PMI_Lookup_name("never-published", port), PMI_FAIL);
    rc = PMI_Unpublish_name("never-published");
    CHECK_DEV(rc == PMI_FAIL, "unpublish-unknown-ok",
              "PMI_Unpublish_name of a name never published returned %d", rc);

    if (rank == 0) {
        CHECK_RC(PMI_Publish_name(service, "tcp://host:1234"), PMI_SUCCESS);
        rc = PMI_Publish_name(service, "tcp://host:9999");
        CHECK_DEV(rc == PMI_FAIL, "publish-overwrites",
                  "a second PMI_Publish_name of a published name returned %d", rc);
        if (rc == PMI_SUCCESS) { /* put the first port back alone, and go on */
            for (int i = 0; i < 4 && PMI_Unpublish_name(service) == PMI_SUCCESS; i++)
                ;
            CHECK_RC(PMI_Publish_name(service, "tcp://host:1234"), PMI_SUCCESS);
        }
    }
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Lookup_name(service, port), PMI_SUCCESS);
    CHECK(strcmp(port, "tcp://host:1234") == 0);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    if (rank == 0) {
        CHECK_RC(PMI_Unpublish_name(service), PMI_SUCCESS);
        rc = PMI_Unpublish_name(service);
        CHECK_DEV(rc == PMI_FAIL, "unpublish-unknown-ok",
                  "a second PMI_Unpublish_name returned %d", rc);
    }
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Lookup_name(service, port), PMI_FAIL);
    /* No rank leaves while another still waits for a reply (check.h). */
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
