/* The MPI_Init pattern through the library: PMI_Init, the maxima and the kvsname, two
 * business cards put, commit, barrier, every rank's cards read and checked, barrier.
 * Prints `wireup rank=R init_ns=I ns=T ok=1`, T from before PMI_Init to after the last
 * barrier, I from before to after PMI_Init. */
#include <pmi.h>
#include <stdlib.h>
#include <string.h>

#include "wireup.h"

int main(void)
{
    int spawned, rank, size, namelen, keylen, vallen;
    long long t0 = wireup_now_ns();
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    long long ti = wireup_now_ns();
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_name_length_max(&namelen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_key_length_max(&keylen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&vallen), PMI_SUCCESS);
    char *kvsname = malloc((size_t)namelen), *key = malloc((size_t)keylen);
    char *value = malloc((size_t)vallen), *expected = malloc((size_t)vallen);
    if (!kvsname || !key || !value || !expected)
        return 1;
    REQUIRE_RC(PMI_KVS_Get_my_name(kvsname, namelen), PMI_SUCCESS);
    int ok = bc_exchange("card", kvsname, rank, size, key, keylen, value, expected, vallen) ==
             2 * size;
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    long long t1 = wireup_now_ns();
    wireup_report(rank, t0, ti, t1, ok);
    REQUIRE_RC(PMI_Finalize(), PMI_SUCCESS);
    free(kvsname), free(key), free(value), free(expected);
    return ok ? 0 : 1;
}
