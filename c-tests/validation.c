/* Every validation rule of the core: codes before PMI_Init and after PMI_Finalize,
 * NULL pointers, foreign kvsnames, bad keys and values, short buffers (nothing written
 * past the length), a missing key, the put-once rule, and the legacy calls that must not
 * reach the wire. Under Hydra, any of these reaching the server would kill the job. */
#include <pmi.h>
#include <string.h>

#include "check.h"

#define CANARY 'X'

static int untouched(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != CANARY)
            return 0;
    return 1;
}

static void before_init(void)
{
    int v = 0;
    PMI_BOOL b = PMI_TRUE;
    char buf[256];

    CHECK_RC(PMI_Initialized(&b), PMI_SUCCESS);
    CHECK(b == PMI_FALSE);
    CHECK_RC(PMI_Initialized(NULL), PMI_ERR_INVALID_ARG);
    /* MPICH's ch3 asks for the value length before PMI_Init. */
    CHECK_RC(PMI_KVS_Get_value_length_max(&v), PMI_SUCCESS);
    CHECK(v == 1024);
    CHECK_RC(PMI_KVS_Get_key_length_max(&v), PMI_SUCCESS);
    CHECK(v == 64);
    CHECK_RC(PMI_KVS_Get_name_length_max(&v), PMI_SUCCESS);
    CHECK(v == 256);
    CHECK_RC(PMI_Get_id_length_max(&v), PMI_SUCCESS);
    CHECK(v == 256);
    CHECK_RC(PMI_KVS_Get_value_length_max(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_rank(&v), PMI_ERR_INIT);
    CHECK_RC(PMI_Get_size(&v), PMI_ERR_INIT);
    CHECK_RC(PMI_Get_appnum(&v), PMI_ERR_INIT);
    CHECK_RC(PMI_Get_universe_size(&v), PMI_ERR_INIT);
    CHECK_RC(PMI_Get_clique_size(&v), PMI_ERR_INIT);
    CHECK_RC(PMI_Get_clique_ranks(&v, 1), PMI_ERR_INIT);
    CHECK_RC(PMI_KVS_Get_my_name(buf, sizeof buf), PMI_ERR_INIT);
    CHECK_RC(PMI_KVS_Put("kvs", "k", "v"), PMI_ERR_INIT);
    CHECK_RC(PMI_KVS_Commit("kvs"), PMI_ERR_INIT);
    CHECK_RC(PMI_KVS_Get("kvs", "k", buf, sizeof buf), PMI_ERR_INIT);
    CHECK_RC(PMI_Barrier(), PMI_ERR_INIT);
    CHECK_RC(PMI_Finalize(), PMI_ERR_INIT);
    CHECK_RC(PMI_Publish_name("svc", "port"), PMI_ERR_INIT);
    CHECK_RC(PMI_Init(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Initialized(&b), PMI_SUCCESS);
    CHECK(b == PMI_FALSE);
}

static void null_pointers(const char *kvs)
{
    char buf[64];

    CHECK_RC(PMI_Get_rank(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_size(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_appnum(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_universe_size(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_clique_size(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_clique_ranks(NULL, 4), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_KVS_Get_my_name(NULL, 256), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_id(NULL, 256), PMI_ERR_INVALID_ARG);
    /* Put and get: RFC 13 lists no PMI_ERR_INVALID_ARG for them, but a code per
     * argument (as Slurm's library answers). */
    CHECK_RC(PMI_KVS_Put(NULL, "k", "v"), PMI_ERR_INVALID_KVS);
    CHECK_RC(PMI_KVS_Put(kvs, NULL, "v"), PMI_ERR_INVALID_KEY);
    CHECK_RC(PMI_KVS_Put(kvs, "k", NULL), PMI_ERR_INVALID_VAL);
    CHECK_RC(PMI_KVS_Commit(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_KVS_Get(NULL, "k", buf, sizeof buf), PMI_ERR_INVALID_KVS);
    CHECK_RC(PMI_KVS_Get(kvs, NULL, buf, sizeof buf), PMI_ERR_INVALID_KEY);
    CHECK_RC(PMI_KVS_Get(kvs, "k", NULL, sizeof buf), PMI_ERR_INVALID_VAL);
    CHECK_RC(PMI_Publish_name(NULL, "p"), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Lookup_name("svc", NULL), PMI_ERR_INVALID_ARG);
}

static void short_buffers(const char *kvs, int rank)
{
    char buf[512], key[64], want[64];
    int n = (int)strlen(kvs), ranks[1];

    memset(buf, CANARY, sizeof buf);
    CHECK_RC(PMI_KVS_Get_my_name(buf, 0), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Get_my_name(buf, -1), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Get_my_name(buf, n), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_Get_id(buf, n), PMI_ERR_INVALID_LENGTH);
    CHECK(untouched(buf, sizeof buf));
    CHECK_RC(PMI_KVS_Get_my_name(buf, n + 1), PMI_SUCCESS);
    CHECK(strcmp(buf, kvs) == 0);
    CHECK(untouched(buf + n + 1, sizeof buf - n - 1));

    /* A value of 10 bytes needs 11: the next rank's, through the server, then from the
     * cache (a key read again soon is kept); at the end this rank's own, from what it
     * put. */
    int size;
    char mine[64];
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    snprintf(mine, sizeof mine, "ten-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, mine, "0123456789"), PMI_SUCCESS);
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    snprintf(key, sizeof key, "ten-%d", (rank + 1) % size);
    memset(buf, CANARY, sizeof buf);
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, 10), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, 0), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, -5), PMI_ERR_INVALID_LENGTH);
    CHECK(untouched(buf, sizeof buf));
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, 11), PMI_SUCCESS);
    CHECK(strcmp(buf, "0123456789") == 0);
    CHECK(untouched(buf + 11, sizeof buf - 11));
    /* The key and the value in one buffer, as C allows: the value replaces the key. */
    snprintf(buf, sizeof buf, "%s", key);
    CHECK_RC(PMI_KVS_Get(kvs, buf, buf, sizeof buf), PMI_SUCCESS);
    CHECK(strcmp(buf, "0123456789") == 0);
    /* ...and now from the cache, with the same rules. */
    memset(buf, CANARY, sizeof buf);
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, 10), PMI_ERR_INVALID_LENGTH);
    CHECK(untouched(buf, sizeof buf));
    snprintf(want, sizeof want, "%s", "0123456789");
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, sizeof buf), PMI_SUCCESS);
    CHECK(strcmp(buf, want) == 0);
    memset(buf, CANARY, sizeof buf);
    CHECK_RC(PMI_KVS_Get(kvs, mine, buf, 10), PMI_ERR_INVALID_LENGTH);
    CHECK(untouched(buf, sizeof buf));
    CHECK_RC(PMI_KVS_Get(kvs, mine, buf, 11), PMI_SUCCESS);
    CHECK(strcmp(buf, want) == 0);

    /* The clique has at least this rank: zero slots are too few. */
    ranks[0] = -7;
    CHECK_RC(PMI_Get_clique_ranks(ranks, 0), PMI_ERR_INVALID_LENGTH);
    CHECK(ranks[0] == -7);
}

/* Rank `r`'s key of `len` bytes, "r<r>-kkk...", into `key` (more than `len` bytes). */
static void long_key(char *key, int len, int r)
{
    memset(key, 'k', (size_t)len);
    int n = snprintf(key, (size_t)len + 1, "r%d-", r);
    key[n] = 'k';
    key[len] = '\0';
}

static void bad_keys_and_values(const char *kvs, int rank)
{
    int keymax, valmax;

    REQUIRE_RC(PMI_KVS_Get_key_length_max(&keymax), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&valmax), PMI_SUCCESS);
    /* Sized from the server's maxima (Hydra 4.0.2 says 1024, Intel's Hydra 4096). */
    size_t keysize = (size_t)keymax + 1, bufsize = (size_t)valmax + 1;
    char *key = malloc(keysize), *value = malloc(bufsize), *buf = malloc(bufsize);
    REQUIRE(key && value && buf);

    CHECK_RC(PMI_KVS_Put("not-our-kvs", "k", "v"), PMI_ERR_INVALID_KVS);
    CHECK_RC(PMI_KVS_Get("not-our-kvs", "k", buf, bufsize), PMI_ERR_INVALID_KVS);
    CHECK_RC(PMI_KVS_Commit("not-our-kvs"), PMI_ERR_INVALID_KVS);
    CHECK_RC(PMI_KVS_Get("", "PMI_process_mapping", buf, bufsize), PMI_ERR_INVALID_KVS);

    const char *bad_keys[] = {"", "a b", "a=b", "a\nb", "a\rb", "a\tb", "\x01", "k\x7f"};
    for (size_t i = 0; i < sizeof bad_keys / sizeof *bad_keys; i++) {
        CHECK_RC(PMI_KVS_Put(kvs, bad_keys[i], "v"), PMI_ERR_INVALID_KEY);
        CHECK_RC(PMI_KVS_Get(kvs, bad_keys[i], buf, bufsize), PMI_ERR_INVALID_KEY);
    }
    /* Under PMIx the library keeps its key directory under keys of its own. */
    if (check_backend_is("pmix"))
        CHECK_RC(PMI_KVS_Put(kvs, "libpmi:dir:0", "v"), PMI_ERR_INVALID_KEY);
    /* keylen_max counts the NUL: keymax-1 bytes are fine, keymax are too many. */
    long_key(key, keymax, rank);
    CHECK_RC(PMI_KVS_Put(kvs, key, "v"), PMI_ERR_INVALID_KEY_LENGTH);
    CHECK_RC(PMI_KVS_Get(kvs, key, buf, bufsize), PMI_ERR_INVALID_KEY_LENGTH);
    key[keymax - 1] = '\0';
    CHECK_RC(PMI_KVS_Put(kvs, key, "longest-key"), PMI_SUCCESS);

    char longkey[64];
    snprintf(longkey, sizeof longkey, "long-value-%d", rank);
    /* (A value ending in Hydra 4.1's reply field would come back without it.) */
    /* (...and what MPICH 5.0.2's Hydra ends the job for: a leading space, a word after a
     * space that starts with '=' or ends at its first '='.) */
    const char *bad_values[] = {"a\nb", "a\rb", "\x01", "x\x1b[0m", "\x7f", "x found=TRUE",
                                " found=FALSE", " x", "a =b", "a b=", "a b= c"};
    for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++)
        CHECK_RC(PMI_KVS_Put(kvs, longkey, bad_values[i]), PMI_ERR_INVALID_VAL);
    memset(value, 'v', bufsize);
    value[valmax] = '\0';
    CHECK_RC(PMI_KVS_Put(kvs, longkey, value), PMI_ERR_INVALID_VAL_LENGTH);
    value[valmax - 1] = '\0';
    int rc = PMI_KVS_Put(kvs, longkey, value);
    CHECK_DEV(rc == PMI_SUCCESS, "request-max-1024",
              "a put of a %d-byte value returned %d (the line would pass 1024 bytes)", valmax - 1,
              rc);
    if (rc == PMI_ERR_INVALID_VAL_LENGTH) { /* the longest value whose line fits */
        value[1024 - 64 - (int)strlen(kvs) - (int)strlen(longkey)] = '\0';
        CHECK_RC(PMI_KVS_Put(kvs, longkey, value), PMI_SUCCESS);
    }

    /* Put once: the same value again is fine, another value is refused. */
    char once[64];
    snprintf(once, sizeof once, "once-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, once, "first"), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Put(kvs, once, "first"), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Put(kvs, once, "second"), PMI_ERR_INVALID_KEY);
    /* Tabs are legal and kept; an empty value is not an RFC 13 string (MPICH 5.0.2's
     * Hydra kills the job on one): refused, nothing sent. */
    char tab[64], empty[64];
    snprintf(tab, sizeof tab, "tab-%d", rank);
    snprintf(empty, sizeof empty, "empty-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, tab, "a\tb"), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Put(kvs, empty, ""), PMI_ERR_INVALID_VAL);
    CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);

    /* Everything arrives intact: the longest key, the longest value, the first put, a
     * tab; this rank's own from what it put, the next rank's through the server. */
    int size;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    int from_ranks[2] = {rank, (rank + 1) % size};
    for (int i = 0; i < (size > 1 ? 2 : 1); i++) {
        int from = from_ranks[i];
        char name[64];
        long_key(key, keymax - 1, from); /* as put above */
        CHECK_RC(PMI_KVS_Get(kvs, key, buf, bufsize), PMI_SUCCESS);
        CHECK(strcmp(buf, "longest-key") == 0);
        snprintf(name, sizeof name, "long-value-%d", from);
        CHECK_RC(PMI_KVS_Get(kvs, name, buf, bufsize), PMI_SUCCESS);
        /* All 'v': the longest value, or the longest whose put line fits (as above). */
        size_t want = strlen(value);
        if ((int)want != valmax - 1)
            want = 1024 - 64 - strlen(kvs) - strlen(name);
        CHECK(strlen(buf) == want && strspn(buf, "v") == want);
        snprintf(name, sizeof name, "once-%d", from);
        CHECK_RC(PMI_KVS_Get(kvs, name, buf, bufsize), PMI_SUCCESS);
        CHECK(strcmp(buf, "first") == 0);
        snprintf(name, sizeof name, "tab-%d", from);
        CHECK_RC(PMI_KVS_Get(kvs, name, buf, bufsize), PMI_SUCCESS);
        CHECK(strcmp(buf, "a\tb") == 0);
    }
    CHECK_RC(PMI_KVS_Get(kvs, empty, buf, bufsize), PMI_ERR_INVALID_KEY);

    /* A missing key is a clear code, and the connection stays usable. */
    memset(buf, CANARY, 16);
    CHECK_RC(PMI_KVS_Get(kvs, "no-such-key", buf, bufsize), PMI_ERR_INVALID_KEY);
    CHECK(untouched(buf, 16));
    CHECK_RC(PMI_KVS_Get(kvs, "no-such-key", buf, bufsize), PMI_ERR_INVALID_KEY);
    CHECK_RC(PMI_KVS_Get(kvs, "PMI_process_mapping", buf, bufsize), PMI_SUCCESS);
    CHECK(strncmp(buf, "(vector,", 8) == 0);
    free(key), free(value), free(buf);
}

/* Keys that look like another store's own travel like any other: "pmix..." (PMIx keeps
 * such names for itself: PMIx 4.2 acknowledges the put and stores nothing) and
 * "pmi2.nodeattr..." (PMI-2's node attributes, where the library keeps them in PMIx).
 * Each rank puts both, the next rank reads them; the values are longer than a PMIx key
 * directory entry carries where the maximum allows (the wire's 1024 bytes: shorter, so
 * Slurm's line limit holds them). */
static void reserved_looking_keys(const char *kvs, int rank)
{
    static const char *const prefixes[] = {"pmix", "pmi2.nodeattr."};
    int size, valmax;
    char key[64];

    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_value_length_max(&valmax), PMI_SUCCESS);
    size_t len = valmax > 1024 ? 2000 : 512;
    char *value = malloc(len + 1), *buf = malloc((size_t)valmax + 1);
    REQUIRE(value && buf);
    for (int i = 0; i < 2; i++) {
        snprintf(key, sizeof key, "%s-card-%d", prefixes[i], rank);
        memset(value, 'a' + i + rank % 16, len);
        value[len] = '\0';
        CHECK_RC(PMI_KVS_Put(kvs, key, value), PMI_SUCCESS);
    }
    CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    int peer = (rank + 1) % size;
    for (int i = 0; i < 2; i++) {
        snprintf(key, sizeof key, "%s-card-%d", prefixes[i], peer);
        memset(value, 'a' + i + peer % 16, len);
        CHECK_RC(PMI_KVS_Get(kvs, key, buf, valmax + 1), PMI_SUCCESS);
        CHECK(strcmp(buf, value) == 0);
    }
    free(value), free(buf);
}

static void legacy_calls(const char *kvs)
{
    char key[64], val[1024], name[256];

    /* None of these may reach Hydra: it kills the job on create_kvs, destroy_kvs and
     * getbyidx. The job surviving to the barrier below is part of the check. */
    CHECK_RC(PMI_KVS_Create(name, sizeof name), PMI_FAIL);
    CHECK_RC(PMI_KVS_Create(NULL, sizeof name), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_KVS_Create(name, 0), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Destroy(kvs), PMI_FAIL);
    CHECK_RC(PMI_KVS_Destroy(NULL), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_KVS_Iter_first(kvs, key, sizeof key, val, sizeof val), PMI_FAIL);
    CHECK_RC(PMI_KVS_Iter_next(kvs, key, sizeof key, val, sizeof val), PMI_FAIL);
    CHECK_RC(PMI_KVS_Iter_first(NULL, key, sizeof key, val, sizeof val), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_KVS_Iter_first(kvs, key, 0, val, sizeof val), PMI_ERR_INVALID_LENGTH);
    CHECK_RC(PMI_KVS_Iter_first("other", key, sizeof key, val, sizeof val), PMI_ERR_INVALID_KVS);
}

static void after_finalize(void)
{
    int v = 0, spawned;
    PMI_BOOL b = PMI_TRUE;

    CHECK_RC(PMI_Initialized(&b), PMI_SUCCESS);
    CHECK(b == PMI_FALSE);
    CHECK_RC(PMI_Get_rank(&v), PMI_ERR_INIT);
    CHECK_RC(PMI_Barrier(), PMI_ERR_INIT);
    CHECK_RC(PMI_Finalize(), PMI_ERR_INIT);
    CHECK_RC(PMI_KVS_Get_value_length_max(&v), PMI_SUCCESS);
    CHECK_RC(PMI_Init(&spawned), PMI_FAIL);
}

int main(void)
{
    int spawned, rank;
    char kvs[256];

    before_init();
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    CHECK_RC(PMI_Init(&spawned), PMI_SUCCESS); /* again: no traffic, same answer */
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    null_pointers(kvs);
    short_buffers(kvs, rank);
    bad_keys_and_values(kvs, rank);
    reserved_looking_keys(kvs, rank);
    legacy_calls(kvs);
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    after_finalize();
    return check_done();
}
