/* What the library keeps stays bounded (RSS from /proc/self/statm around each phase).
 *
 * As a singleton: a process puts KEYS distinct keys, then reads each of its own keys
 * twice in a row, in two passes. The put record keeps every key and value put (what
 * refuses a second put with another value): its cost per key is printed. The gets are
 * answered from it and may add nothing but a bounded get cache.
 *
 * Under a launcher (2 ranks or more): rank 0 puts KEYS keys of VALUE_BYTES, then rank 1
 * reads each key twice in a row (so that the library caches each: a key read again soon
 * is kept), in two passes. The get cache keeps at most 4 MiB of records and then starts
 * again empty, so what the gets add is bounded although rank 1 reads more than the
 * bound (the program checks that it does).
 *
 * Usage: memory [KEYS [VALUE_BYTES]] (as a singleton 1000000 keys of 64 bytes; under a
 * launcher 24000 keys of 800 bytes). */
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* What the gets may add, cache and its table together (the cache holds 4 MiB of
 * records): as a singleton, with the whole process's other growth beside; under a
 * server, where rank 1 reads more than twice this. */
#define GETS_MAX_BYTES (24L << 20)
#define SERVER_GETS_MAX_BYTES (8L << 20)

static long rss(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    REQUIRE(f != NULL);
    REQUIRE(fscanf(f, "%ld %ld", &pages, &resident) == 2);
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

/* Get every key twice in a row, so that the library keeps each (a key read again soon
 * is cached); what the resident set grew by. */
static long get_all(const char *kvs, int n, int vlen)
{
    char key[32], *got = malloc((size_t)vlen + 1);
    REQUIRE(got != NULL);
    long before = rss();
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "k%d", i);
        for (int twice = 0; twice < 2; twice++) {
            REQUIRE_RC(PMI_KVS_Get(kvs, key, got, vlen + 1), PMI_SUCCESS);
            REQUIRE((int)strlen(got) == vlen);
        }
    }
    free(got);
    return rss() - before;
}

int main(int argc, char **argv)
{
    int spawned, rank, size;
    char kvs[256], key[32];
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    check_rank = rank;
    int alone = size == 1;
    int n = argc > 1 ? atoi(argv[1]) : alone ? 1000000 : 24000;
    int vlen = argc > 2 ? atoi(argv[2]) : alone ? 64 : 800;
    char *value = malloc((size_t)vlen + 1);
    REQUIRE(n > 0 && vlen > 0 && value != NULL);
    memset(value, 'v', (size_t)vlen);
    value[vlen] = '\0';
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    long before = rss();
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            snprintf(key, sizeof key, "k%d", i);
            REQUIRE_RC(PMI_KVS_Put(kvs, key, value), PMI_SUCCESS);
        }
    }
    long puts = rss() - before;
    REQUIRE_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    if (alone || rank == 1) {
        long bound = alone ? GETS_MAX_BYTES : SERVER_GETS_MAX_BYTES;
        /* Unbounded, the cache would grow by at least what was read: more than the bound. */
        if (!alone)
            CHECKF((long)n * vlen > 2 * bound, "%d keys of %d bytes cannot show the bound", n,
                   vlen);
        long first = get_all(kvs, n, vlen), again = get_all(kvs, n, vlen);
        if (alone)
            printf("memory: %d keys of %d bytes: puts +%ld KiB (%ld B a key), gets of its own "
                   "keys +%ld KiB, gets again +%ld KiB\n",
                   n, vlen, puts / 1024, puts / n, first / 1024, again / 1024);
        else
            printf("memory: rank 1 read %d keys of %d bytes twice each (%ld KiB): gets +%ld "
                   "KiB, gets again +%ld KiB\n",
                   n, vlen, (long)n * vlen / 1024, first / 1024, again / 1024);
#if !defined(__SANITIZE_ADDRESS__)
        CHECKF(first < bound, "the gets grew the process by %ld KiB", first / 1024);
        CHECKF(again < bound, "the gets again grew the process by %ld KiB", again / 1024);
#endif
    }
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's quarantine and shadow memory are in the resident set too. */
    if (rank <= 1)
        printf("memory: built with AddressSanitizer, sizes not checked\n");
#endif
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    free(value);
    return check_done();
}
