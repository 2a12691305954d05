/* One truth per key: each rank puts the same values under keys of its own (a space, a
 * backslash, an '=', a tab, 1023 bytes, 1024 bytes), and after a barrier reads its own
 * key and the next rank's. Every rank must read the same bytes for a value, its own key
 * included. A value the library refuses (it knows this server would not keep it whole,
 * or it is too long) is refused on every rank alike, with nothing sent. A value the
 * server keeps otherwise than it was put is a deviation of that server
 * ("value-altered-NAME"), which the runner allows where it is known; the line says what
 * the server kept. Built with -DVALUES_PMI2 it does the same through libpmi2.so.0.
 * Usage: values */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef VALUES_PMI2
#include <pmi2.h>
#define OK PMI2_SUCCESS
#define REFUSED(rc) ((rc) == PMI2_ERR_INVALID_VAL || (rc) == PMI2_ERR_INVALID_VAL_LENGTH)
#define MAXVAL PMI2_MAX_VALLEN
#else
#include <pmi.h>
#define OK PMI_SUCCESS
#define REFUSED(rc) ((rc) == PMI_ERR_INVALID_VAL || (rc) == PMI_ERR_INVALID_VAL_LENGTH)
#define MAXVAL 1024
#endif

#include "check.h"

static int rank, size;
static char kvs[256];

#ifdef VALUES_PMI2
static int put(const char *key, const char *value) { return PMI2_KVS_Put(key, value); }
static int commit_and_barrier(void) { return PMI2_KVS_Fence(); }
static int get(int owner, const char *key, char *value, int len)
{
    int got;
    return PMI2_KVS_Get(NULL, owner, key, value, len, &got);
}
static int finish(void) { return PMI2_KVS_Fence() == OK && PMI2_Finalize() == OK ? OK : -1; }
#else
static int put(const char *key, const char *value) { return PMI_KVS_Put(kvs, key, value); }
static int commit_and_barrier(void)
{
    int rc = PMI_KVS_Commit(kvs);
    return rc == OK ? PMI_Barrier() : rc;
}
static int get(int owner, const char *key, char *value, int len)
{
    (void)owner;
    return PMI_KVS_Get(kvs, key, value, len);
}
static int finish(void) { return PMI_Barrier() == OK && PMI_Finalize() == OK ? OK : -1; }
#endif

struct value {
    const char *name;
    char text[MAXVAL + 8];
    int put_rc;
};

int main(void)
{
    static struct value v[6] = {
        {"space", "a b", 0},   {"backslash", "a\\b", 0}, {"equals", "a=b", 0},
        {"tab", "a\tb", 0},    {"1023-bytes", "", 0},    {"1024-bytes", "", 0},
    };
    int n = (int)(sizeof v / sizeof v[0]);
    memset(v[4].text, 'x', 1023);
    memset(v[5].text, 'y', 1024);
    int spawned;
#ifdef VALUES_PMI2
    int appnum;
    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), OK);
    REQUIRE_RC(PMI2_Job_GetId(kvs, sizeof kvs), OK);
#else
    REQUIRE_RC(PMI_Init(&spawned), OK);
    REQUIRE_RC(PMI_Get_rank(&rank), OK);
    REQUIRE_RC(PMI_Get_size(&size), OK);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), OK);
#endif
    check_rank = rank;
    char key[64], line[4096];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "v-%s-%d", v[i].name, rank);
        v[i].put_rc = put(key, v[i].text);
        CHECKF(v[i].put_rc == OK || REFUSED(v[i].put_rc), "put of the %s value: rc %d",
               v[i].name, v[i].put_rc);
    }
    CHECK_RC(commit_and_barrier(), OK);
    int peer = (rank + 1) % size;
    for (int i = 0; i < n; i++) {
        if (v[i].put_rc != OK) {
            snprintf(line, sizeof line, "rank %d: %s refused (%d), nothing sent", rank,
                     v[i].name, v[i].put_rc);
            check_say(line);
            continue;
        }
        static char own[MAXVAL + 8], theirs[MAXVAL + 8];
        own[0] = theirs[0] = '\0';
        snprintf(key, sizeof key, "v-%s-%d", v[i].name, rank);
        int rc_own = get(rank, key, own, sizeof own);
        snprintf(key, sizeof key, "v-%s-%d", v[i].name, peer);
        int rc_peer = get(peer, key, theirs, sizeof theirs);
        CHECKF(rc_own == OK && rc_peer == OK, "get of the %s values: own %d, rank %d's %d",
               v[i].name, rc_own, peer, rc_peer);
        /* The one truth: what this rank reads of its own key is what it reads of its
         * peer's (the peer put the same value). */
        CHECKF(strcmp(own, theirs) == 0, "the %s value: own key reads \"%.40s\" (%zu bytes), "
               "rank %d's \"%.40s\" (%zu bytes)", v[i].name, own, strlen(own), peer, theirs,
               strlen(theirs));
        char id[64];
        snprintf(id, sizeof id, "value-altered-%s", v[i].name);
        CHECK_DEV(strcmp(own, v[i].text) == 0, id,
                  "the %s value \"%.40s\" (%zu bytes) is kept as \"%.40s\" (%zu bytes), on "
                  "every rank alike", v[i].name, v[i].text, strlen(v[i].text), own,
                  strlen(own));
    }
    CHECK_RC(finish(), OK);
    if (check_failures == 0) {
        snprintf(line, sizeof line, "rank %d of %d: every value read alike, own and peer's",
                 rank, size);
        check_say(line);
    }
    return check_done();
}
