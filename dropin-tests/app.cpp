// A C++17 program using pmi.h as installed (found through pkg-config): the header's
// extern "C" block gives C linkage, and the business-card exchange works under a
// launcher. Exit 0 only if every rank read every card.
#include <pmi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string &what)
{
    if (!ok) {
        std::fprintf(stderr, "app.cpp: %s\n", what.c_str());
        ++failures;
    }
}

std::string card(int rank) { return "tcp://[fd00::" + std::to_string(rank + 1) + "]:" + std::to_string(20000 + rank); }

} // namespace

int main()
{
    int spawned = -1, rank = -1, size = -1, namelen = 0, vallen = 0;
    if (PMI_Init(&spawned) != PMI_SUCCESS) {
        std::fprintf(stderr, "app.cpp: PMI_Init failed\n");
        return 2;
    }
    expect(PMI_Get_rank(&rank) == PMI_SUCCESS, "PMI_Get_rank");
    expect(PMI_Get_size(&size) == PMI_SUCCESS && size >= 1, "PMI_Get_size");
    expect(PMI_KVS_Get_name_length_max(&namelen) == PMI_SUCCESS, "name max");
    expect(PMI_KVS_Get_value_length_max(&vallen) == PMI_SUCCESS, "value max");
    if (failures)
        return 2;
    std::vector<char> kvs(static_cast<size_t>(namelen)), value(static_cast<size_t>(vallen));
    expect(PMI_KVS_Get_my_name(kvs.data(), namelen) == PMI_SUCCESS, "PMI_KVS_Get_my_name");
    const std::string mine = card(rank), key = "cxx-" + std::to_string(rank);
    expect(PMI_KVS_Put(kvs.data(), key.c_str(), mine.c_str()) == PMI_SUCCESS, "put");
    expect(PMI_KVS_Commit(kvs.data()) == PMI_SUCCESS, "commit");
    expect(PMI_Barrier() == PMI_SUCCESS, "barrier");
    int read_back = 0;
    for (int peer = 0; peer < size; ++peer) {
        const std::string k = "cxx-" + std::to_string(peer);
        int rc = PMI_KVS_Get(kvs.data(), k.c_str(), value.data(), vallen);
        if (rc == PMI_SUCCESS && card(peer) == value.data())
            ++read_back;
        else
            expect(false, "get " + k + ": rc " + std::to_string(rc));
    }
    expect(PMI_Barrier() == PMI_SUCCESS, "second barrier");
    expect(PMI_Finalize() == PMI_SUCCESS, "PMI_Finalize");
    std::printf("C++ rank %d of %d: %d/%d cards\n", rank, size, read_back, size);
    return failures ? 1 : 0;
}
