// pmi2.h compiles as C++ and declares the exports with C linkage.
#include <pmi2.h>

int main()
{
    int spawned = 0, size = 0, rank = 0, appnum = 0;
    MPID_Info info = {0, 0, 0, nullptr, nullptr, nullptr};
    (void)info;
    return PMI2_Init(&spawned, &size, &rank, &appnum) == PMI2_SUCCESS ? 0 : 1;
}
