// A C++17 program using pmi.h as installed (found through pkg-config): the header's
// extern "C" block gives C linkage, and the business-card exchange works under a
// launcher. Exit 0 only if every rank read every card.
#include <pmi.h>

#include <cstdio>
#include <vector>

#include "../c-tests/check.h"

int main()
{
    int spawned = -1, rank = -1, size = -1, namelen = 0, keylen = 0, vallen = 0;
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_name_length_max(&namelen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_key_length_max(&keylen), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&vallen), PMI_SUCCESS);
    std::vector<char> kvs(static_cast<size_t>(namelen)), key(static_cast<size_t>(keylen));
    std::vector<char> value(static_cast<size_t>(vallen)), expected(static_cast<size_t>(vallen));
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs.data(), namelen), PMI_SUCCESS);
    const int read_back = bc_exchange("cxx", kvs.data(), rank, size, key.data(), keylen,
                                      value.data(), expected.data(), vallen);
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    std::printf("C++ rank %d of %d: %d/%d cards\n", rank, size, read_back, 2 * size);
    CHECK(read_back == 2 * size);
    return check_done();
}
