// The header compiles as C++ and declares the exports with C linkage.
#include <pmi.h>

int main()
{
    int spawned = 0;
    PMI_keyval_t kv = {"key", nullptr};
    (void)kv;
    return PMI_Init(&spawned) == PMI_SUCCESS ? 0 : 1;
}
