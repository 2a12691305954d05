/* The get cache is bounded: a process that reads a million distinct keys, each twice in
 * a row (so that each is cached), keeps a few MiB of them, not all (RSS from
 * /proc/self/statm around each phase). Run as a singleton, whose gets never leave the
 * process: what grows is the library's. Usage:
 * memory [KEYS [VALUE_BYTES]] (1000000 keys of 64 bytes). */
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* What the gets may add, cache and its table together (the cache holds 4 MiB). */
#define GETS_MAX_BYTES (24L << 20)

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
    int n = argc > 1 ? atoi(argv[1]) : 1000000, vlen = argc > 2 ? atoi(argv[2]) : 64, spawned;
    char kvs[256], key[32], *value = malloc((size_t)vlen + 1);
    REQUIRE(n > 0 && vlen > 0 && value != NULL);
    memset(value, 'v', (size_t)vlen);
    value[vlen] = '\0';
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    check_rank = 0;
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    long before = rss();
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "k%d", i);
        REQUIRE_RC(PMI_KVS_Put(kvs, key, value), PMI_SUCCESS);
    }
    REQUIRE_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    long puts = rss() - before, first = get_all(kvs, n, vlen), again = get_all(kvs, n, vlen);
    printf("memory: %d keys of %d bytes: puts +%ld KiB (%ld B a key), gets +%ld KiB, "
           "gets again +%ld KiB\n",
           n, vlen, puts / 1024, puts / n, first / 1024, again / 1024);
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's quarantine and shadow memory are in the resident set too. */
    printf("memory: built with AddressSanitizer, sizes not checked\n");
#else
    CHECKF(first < GETS_MAX_BYTES, "the gets grew the process by %ld KiB", first / 1024);
    CHECKF(again < GETS_MAX_BYTES, "the gets again grew the process by %ld KiB", again / 1024);
#endif
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    free(value);
    return check_done();
}
