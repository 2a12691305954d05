/* Both static archives and another Rust static library (dropin-tests/neighbour) in one
 * program: each Rust copy keeps its own standard library, allocator and unwinder. The
 * exchange of business cards through libpmi.a, a PMI-2 query through libpmi2.a, and the
 * neighbour's panic caught in the neighbour. */
#include <pmi.h>
#include <pmi2.h>
#include <stdio.h>

#include "../c-tests/check.h"

int neighbour_answer(int x);

int main(void)
{
    int spawned, rank, size, keylen, vallen, namelen;
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    check_rank = rank;
    CHECKF(neighbour_answer(21) == 42, "the neighbour's answer");
    CHECKF(neighbour_answer(-1) == -1, "the neighbour's own panic, caught by it");
    CHECKF(PMI2_Initialized() == 0, "libpmi2.a is not initialized");
    REQUIRE_RC(PMI_KVS_Get_name_length_max(&namelen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_key_length_max(&keylen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&vallen), PMI_SUCCESS);
    char kvs[256], key[64], value[1024], expected[1024];
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, namelen < 256 ? namelen : 256), PMI_SUCCESS);
    int learned = bc_exchange("neighbour", kvs, rank, size, key, keylen < 64 ? keylen : 64, value,
                              expected, vallen < 1024 ? vallen : 1024);
    CHECKF(learned == 2 * size, "read %d of %d cards", learned, 2 * size);
    CHECKF(neighbour_answer(5) == 10, "the neighbour after the exchange");
    REQUIRE_RC(PMI_Finalize(), PMI_SUCCESS);
    printf("rank %d of %d: %d cards, the neighbour's answers right\n", rank, size, learned);
    return check_done();
}
