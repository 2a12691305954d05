/* The LD_LIBRARY_PATH swap: this program is compiled against Slurm's reference header
 * (/usr/include/slurm/pmi.h) and linked with Slurm's own libpmi.so.0, exactly as a
 * legacy code would be. Run with LD_LIBRARY_PATH pointing at this project's library it
 * must work under Hydra; run without, it gets Slurm's library, which cannot.
 *
 * It does the MPI_Init business-card exchange: every rank puts two cards, commits,
 * enters the barrier and reads every rank's cards back. It prints which file
 * PMI_Init was loaded from (dladdr), and with an argument, fails unless that is the
 * file named. Its result line goes to CHECK_REPORT too (check.h).
 *
 * Usage: swap [EXPECTED_LIBPMI]   exit 0 only if every card was read back. */
#define _GNU_SOURCE /* dladdr, realpath */
#include <dlfcn.h>
#include <limits.h>
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c-tests/check.h"

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
    CHECKF(PMI_Get_rank(&rank) == PMI_SUCCESS, "PMI_Get_rank");
    check_rank = rank;
    snprintf(check_label, sizeof check_label, "swap: rank %d", rank);
    CHECKF(PMI_Get_size(&size) == PMI_SUCCESS && size >= 1, "PMI_Get_size");
    if (argc > 1) {
        char want[PATH_MAX];
        CHECKF(realpath(argv[1], want) && strcmp(want, loaded) == 0,
               "libpmi.so.0 was loaded from %s, not %s", loaded, argv[1]);
    }
    CHECKF(PMI_KVS_Get_name_length_max(&namelen) == PMI_SUCCESS && namelen > 1, "name max");
    CHECKF(PMI_KVS_Get_key_length_max(&keylen) == PMI_SUCCESS && keylen > 1, "key max");
    CHECKF(PMI_KVS_Get_value_length_max(&vallen) == PMI_SUCCESS && vallen > 1, "value max");
    if (check_failures || size < 1 || namelen < 2 || keylen < 2 || vallen < 2) {
        fprintf(stderr, "swap: giving up (libpmi.so.0 loaded from %s)\n", loaded);
        return 2;
    }
    char *kvs = malloc(namelen), *key = malloc(keylen), *value = malloc(vallen),
         *want = malloc(vallen);
    CHECKF(PMI_KVS_Get_my_name(kvs, namelen) == PMI_SUCCESS, "PMI_KVS_Get_my_name");
    int read_back = bc_exchange("bc", kvs, rank, size, key, keylen, value, want, vallen);
    CHECKF(PMI_Barrier() == PMI_SUCCESS, "second PMI_Barrier");
    CHECKF(PMI_Finalize() == PMI_SUCCESS, "PMI_Finalize");
    char line[PATH_MAX + 128];
    snprintf(line, sizeof line, "rank %d of %d: %d/%d business cards, libpmi.so.0 from %s", rank,
             size, read_back, 2 * size, loaded);
    check_say(line);
    CHECKF(read_back == 2 * size, "read %d of %d cards", read_back, 2 * size);
    free(kvs), free(key), free(value), free(want);
    return check_done();
}
