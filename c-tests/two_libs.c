/* One process, both libraries (an MPI on one, a tool on the other): the second to
 * initialize is refused with one line naming the first, which keeps working. Argument
 * "2": libpmi2.so.0 first. */
#include <pmi.h>
#include <pmi2.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    int spawned, size, rank, appnum;
    if (argc > 1 && strcmp(argv[1], "2") == 0) {
        REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
        CHECK_RC(PMI_Init(&spawned), PMI_FAIL);
        CHECK_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);
        CHECK_RC(PMI2_Finalize(), PMI2_SUCCESS);
    } else {
        REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
        CHECK_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_FAIL);
        CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
        CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    }
    return check_done();
}
