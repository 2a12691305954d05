/* The LD_LIBRARY_PATH swap: this program is compiled against Slurm's reference header
 * (/usr/include/slurm/pmi.h) and linked with Slurm's own libpmi.so.0, exactly as a
 * legacy code would be. Run with LD_LIBRARY_PATH pointing at this project's library it
 * must work under Hydra; run without, it gets Slurm's library, which cannot.
 *
 * It does the MPI_Init business-card exchange: every rank puts two cards, commits,
 * enters the barrier and reads every rank's cards back. It prints which file
 * PMI_Init was loaded from (dladdr), and with an argument, fails unless that is the
 * file named.
 *
 * Usage: swap [EXPECTED_LIBPMI]   exit 0 only if every card was read back. */
#define _GNU_SOURCE /* dladdr, realpath */
#include <dlfcn.h>
#include <limits.h>
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "swap: rank %d: %s:%d: ", rank, __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            failures++;                                                                  \
        }                                                                                \
    } while (0)

static void card(char *buf, size_t len, int rank, int which)
{
    if (which == 0)
        snprintf(buf, len, "tcp://192.168.%d.%d:%d", rank / 250, rank % 250 + 1, 50000 + rank);
    else
        snprintf(buf, len, "ib:lid=%d,qpn=%d", 100 + rank, 7000 + rank * 13);
}

int main(int argc, char **argv)
{
    int rank = -1, size = -1, spawned = -1, namelen = 0, keylen = 0, vallen = 0;
    char loaded[PATH_MAX] = "?";
    Dl_info info;

    if (dladdr((void *)(size_t)PMI_Init, &info) && info.dli_fname &&
        !realpath(info.dli_fname, loaded))
        snprintf(loaded, sizeof loaded, "%s", info.dli_fname);

    int rc = PMI_Init(&spawned);
    if (rc != PMI_SUCCESS) {
        fprintf(stderr, "swap: PMI_Init returned %d (libpmi.so.0 loaded from %s)\n", rc, loaded);
        return 2;
    }
    EXPECT(PMI_Get_rank(&rank) == PMI_SUCCESS, "PMI_Get_rank");
    EXPECT(PMI_Get_size(&size) == PMI_SUCCESS && size >= 1, "PMI_Get_size");
    if (argc > 1) {
        char want[PATH_MAX];
        EXPECT(realpath(argv[1], want) && strcmp(want, loaded) == 0,
               "libpmi.so.0 was loaded from %s, not %s", loaded, argv[1]);
    }
    EXPECT(PMI_KVS_Get_name_length_max(&namelen) == PMI_SUCCESS && namelen > 1, "name max");
    EXPECT(PMI_KVS_Get_key_length_max(&keylen) == PMI_SUCCESS && keylen > 1, "key max");
    EXPECT(PMI_KVS_Get_value_length_max(&vallen) == PMI_SUCCESS && vallen > 1, "value max");
    if (failures || size < 1 || namelen < 2 || keylen < 2 || vallen < 2) {
        fprintf(stderr, "swap: giving up (libpmi.so.0 loaded from %s)\n", loaded);
        return 2;
    }
    char *kvs = malloc(namelen), *key = malloc(keylen), *value = malloc(vallen),
         *want = malloc(vallen);
    EXPECT(PMI_KVS_Get_my_name(kvs, namelen) == PMI_SUCCESS, "PMI_KVS_Get_my_name");
    for (int which = 0; which < 2; which++) {
        snprintf(key, keylen, "bc-%d-%d", rank, which);
        card(value, vallen, rank, which);
        EXPECT(PMI_KVS_Put(kvs, key, value) == PMI_SUCCESS, "put %s", key);
    }
    EXPECT(PMI_KVS_Commit(kvs) == PMI_SUCCESS, "PMI_KVS_Commit");
    EXPECT(PMI_Barrier() == PMI_SUCCESS, "PMI_Barrier");
    int read_back = 0;
    for (int peer = 0; peer < size; peer++)
        for (int which = 0; which < 2; which++) {
            snprintf(key, keylen, "bc-%d-%d", peer, which);
            card(want, vallen, peer, which);
            rc = PMI_KVS_Get(kvs, key, value, vallen);
            if (rc == PMI_SUCCESS && strcmp(value, want) == 0)
                read_back++;
            else
                EXPECT(0, "get %s: rc %d", key, rc);
        }
    EXPECT(PMI_Barrier() == PMI_SUCCESS, "second PMI_Barrier");
    EXPECT(PMI_Finalize() == PMI_SUCCESS, "PMI_Finalize");
    printf("rank %d of %d: %d/%d business cards, libpmi.so.0 from %s\n", rank, size, read_back,
           2 * size, loaded);
    EXPECT(read_back == 2 * size, "read %d of %d cards", read_back, 2 * size);
    free(kvs), free(key), free(value), free(want);
    return failures ? 1 : 0;
}
