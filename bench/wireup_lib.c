/* The MPI_Init pattern through the library: PMI_Init, the maxima and the kvsname, two
 * business cards put, commit, barrier, every rank's cards read and checked, barrier.
 * Prints `wireup rank=R ns=T ok=1`, T from before PMI_Init to after the last barrier. */
#include <pmi.h>
#include <stdlib.h>
#include <string.h>

#include "wireup.h"

#define MUST(call)                                                                        \
    do {                                                                                  \
        int rc_ = (call);                                                                 \
        if (rc_ != PMI_SUCCESS) {                                                         \
            fprintf(stderr, "wireup_lib: %s = %d\n", #call, rc_);                         \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

int main(void)
{
    int spawned, rank, size, namelen, keylen, vallen, ok = 1;
    long long t0 = wireup_now_ns();
    MUST(PMI_Init(&spawned));
    MUST(PMI_Get_rank(&rank));
    MUST(PMI_Get_size(&size));
    MUST(PMI_KVS_Get_name_length_max(&namelen));
    MUST(PMI_KVS_Get_key_length_max(&keylen));
    MUST(PMI_KVS_Get_value_length_max(&vallen));
    char *kvsname = malloc((size_t)namelen), *key = malloc((size_t)keylen);
    char *value = malloc((size_t)vallen), *expected = malloc((size_t)vallen);
    if (!kvsname || !key || !value || !expected)
        return 1;
    MUST(PMI_KVS_Get_my_name(kvsname, namelen));
    for (int which = 0; which < 2; which++) {
        snprintf(key, (size_t)keylen, "card-%d-%d", rank, which);
        wireup_card(value, (size_t)vallen, rank, which);
        MUST(PMI_KVS_Put(kvsname, key, value));
    }
    MUST(PMI_KVS_Commit(kvsname));
    MUST(PMI_Barrier());
    for (int peer = 0; peer < size; peer++)
        for (int which = 0; which < 2; which++) {
            snprintf(key, (size_t)keylen, "card-%d-%d", peer, which);
            wireup_card(expected, (size_t)vallen, peer, which);
            MUST(PMI_KVS_Get(kvsname, key, value, vallen));
            ok &= strcmp(value, expected) == 0;
        }
    MUST(PMI_Barrier());
    long long t1 = wireup_now_ns();
    printf("wireup rank=%d ns=%lld ok=%d t0=%lld t1=%lld\n", rank, t1 - t0, ok, t0, t1);
    fflush(stdout);
    MUST(PMI_Finalize());
    free(kvsname), free(key), free(value), free(expected);
    return ok ? 0 : 1;
}
