/* PMI-1 conformance program: the RFC 13 behaviours, exercised through the library
 * (libpmi.so.0) under whatever launcher runs it.
 *
 * Every process prints its verdicts on stdout, one line per verdict, each in a single
 * write(2) so that launchers forwarding several processes' output do not mix them:
 *
 *   @@conf RANK KIND ID TEXT
 *
 * KIND is PASS or FAIL (the library's behaviour), DEV (a server deviation: something
 * the process manager does that RFC 13 does not say, found through the library), SKIP
 * (not testable here) or INFO. conformance/run.sh gathers the lines of every process
 * into the report. Every process runs the same sequence of collective calls
 * (barriers) whatever its checks find, so a failure never desynchronises the job.
 *
 * Run with --child PARENT_KVSNAME RUN_TAG by PMI_Spawn_multiple (the spawn test). */
#define _GNU_SOURCE /* dladdr, realpath, nanosleep, clock_gettime */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pmi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conform.h"

static char *g_kvs;
static int g_namemax, g_keymax, g_valmax;

/* Calls that some clients the kit is run on lack: Slurm's clique and id calls (MPICH 5's
 * own client has none of them) and PMI 1.2's group barrier (a PMI 1.1 client). Weak, so
 * the kit runs on any libpmi.so.0: a check that needs a missing call is left out, the
 * report names the calls, and a test that is nothing but such checks SKIPs. */
#pragma weak PMI_Get_id
#pragma weak PMI_Get_id_length_max
#pragma weak PMI_Get_kvs_domain_id
#pragma weak PMI_Get_clique_size
#pragma weak PMI_Get_clique_ranks
#pragma weak PMI_Barrier_group

static void report_missing_calls(void)
{
    const struct call calls[] = {
        {"PMI_Get_id", PMI_Get_id != NULL},
        {"PMI_Get_id_length_max", PMI_Get_id_length_max != NULL},
        {"PMI_Get_kvs_domain_id", PMI_Get_kvs_domain_id != NULL},
        {"PMI_Get_clique_size", PMI_Get_clique_size != NULL},
        {"PMI_Get_clique_ranks", PMI_Get_clique_ranks != NULL},
        {"PMI_Barrier_group", PMI_Barrier_group != NULL},
    };
    report_left_out(calls, sizeof calls / sizeof calls[0]);
}

/* The barrier every process calls at the same points. A failure here ends the job: a
 * process that skipped one would hang the others. */
static void sync_all(const char *where)
{
    int rc = PMI_Barrier();
    if (rc != PMI_SUCCESS) {
        emit("FAIL", "barrier", "PMI_Barrier (%s) returned %d: giving up", where, rc);
        exit(3);
    }
}

/* ---- init, identity, maxes ---------------------------------------------------------- */

static void test_maxes_before(int *ok)
{
    struct test t = {"maxes-before-init", 0, ""};
    int n = -1, k = -1, v = -1, id = -1;
    EXPECT_RC(&t, PMI_KVS_Get_name_length_max(&n), PMI_SUCCESS);
    EXPECT_RC(&t, PMI_KVS_Get_key_length_max(&k), PMI_SUCCESS);
    EXPECT_RC(&t, PMI_KVS_Get_value_length_max(&v), PMI_SUCCESS);
    if (PMI_Get_id_length_max)
        EXPECT_RC(&t, PMI_Get_id_length_max(&id), PMI_SUCCESS);
    else
        id = 256;
    EXPECT(&t, n == 256 && k == 64 && v == 1024 && id == 256,
           "before PMI_Init: name %d key %d value %d id %d, expected 256/64/1024/256", n, k,
           v, id);
    EXPECT_REFUSED(&t, PMI_KVS_Get_value_length_max(NULL), PMI_ERR_INVALID_ARG);
    *ok = !t.failed;
    verdict(&t, "length maxima answer the defaults 256/64/1024 before PMI_Init "
                "(MPICH asks first); NULL -> PMI_ERR_INVALID_ARG");
}

static void test_before_init(void)
{
    struct test t = {"before-init", 0, ""};
    int x = -5;
    PMI_BOOL b = -5;
    EXPECT_RC(&t, PMI_Initialized(&b), PMI_SUCCESS);
    EXPECT(&t, b == PMI_FALSE, "PMI_Initialized before PMI_Init gave %d", b);
    int rc = PMI_Get_rank(&x);
    EXPECT(&t, rc == PMI_ERR_INIT, "PMI_Get_rank(&x) returned %d, expected PMI_ERR_INIT (%d)",
           rc, PMI_ERR_INIT);
    /* A library that does not know it is not initialized may send the barrier to the
     * server before init (a Hydra proxy may die of it, and the job with it): not tried. */
    if (rc == PMI_ERR_INIT)
        EXPECT_RC(&t, PMI_Barrier(), PMI_ERR_INIT);
    EXPECT(&t, x == -5, "PMI_Get_rank wrote %d before PMI_Init", x);
    verdict(&t, "before PMI_Init: PMI_Initialized is FALSE, other calls PMI_ERR_INIT");
}

static void test_init(void)
{
    struct test t = {"init", 0, ""};
    int spawned = -5, again = -5;
    PMI_BOOL b = -5;
    int rc = PMI_Init(&spawned);
    if (rc != PMI_SUCCESS) {
        emit("FAIL", "init", "PMI_Init returned %d: giving up (see the stderr log)", rc);
        exit(3);
    }
    EXPECT(&t, spawned == (g_child ? PMI_TRUE : PMI_FALSE), "spawned is %d", spawned);
    EXPECT_RC(&t, PMI_Initialized(&b), PMI_SUCCESS);
    EXPECT(&t, b == PMI_TRUE, "PMI_Initialized gave %d after PMI_Init", b);
    EXPECT_RC(&t, PMI_Init(&again), PMI_SUCCESS);
    EXPECT(&t, again == spawned, "a second PMI_Init gave spawned=%d", again);
    EXPECT_REFUSED(&t, PMI_Init(NULL), PMI_ERR_INVALID_ARG);
    if (PMI_Get_rank(&g_rank) != PMI_SUCCESS || PMI_Get_size(&g_size) != PMI_SUCCESS) {
        emit("FAIL", "init", "PMI_Get_rank/PMI_Get_size failed after PMI_Init: giving up");
        exit(3);
    }
    EXPECT(&t, g_size >= 1 && g_rank >= 0 && g_rank < g_size, "rank %d of size %d", g_rank,
           g_size);
    verdict(&t, "PMI_Init succeeds (PMI-1.1 handshake), spawned FALSE in a launched job, "
                "PMI_Initialized TRUE, a second PMI_Init succeeds, 0 <= rank < size");
    emit("INFO", "size", "%d", g_size);
    Dl_info info;
    if (dladdr((void *)(size_t)PMI_Init, &info) && info.dli_fname) {
        char real[PATH_MAX];
        emit("INFO", "library", "%s", realpath(info.dli_fname, real) ? real : info.dli_fname);
    }
    const char *mode = getenv("PMI_FD") ? "PMI_FD" : getenv("PMI_PORT") ? "PMI_PORT" : "singleton";
    emit("INFO", "mode", "%s", mode);
    report_missing_calls();
}

static void test_maxes(void)
{
    struct test t = {"maxes", 0, ""};
    int id = -1;
    EXPECT_RC(&t, PMI_KVS_Get_name_length_max(&g_namemax), PMI_SUCCESS);
    EXPECT_RC(&t, PMI_KVS_Get_key_length_max(&g_keymax), PMI_SUCCESS);
    EXPECT_RC(&t, PMI_KVS_Get_value_length_max(&g_valmax), PMI_SUCCESS);
    if (PMI_Get_id_length_max)
        EXPECT_RC(&t, PMI_Get_id_length_max(&id), PMI_SUCCESS);
    else
        id = g_namemax;
    EXPECT(&t, g_namemax > 1 && g_keymax > 1 && g_valmax > 1,
           "maxima name %d key %d value %d", g_namemax, g_keymax, g_valmax);
    EXPECT(&t, id == g_namemax, "id max %d != kvsname max %d", id, g_namemax);
    verdict(&t, "after PMI_Init the length maxima are the server's get_maxes, each > 1; "
                "id max = kvsname max");
    emit("INFO", "maxes", "kvsname_max=%d keylen_max=%d vallen_max=%d", g_namemax, g_keymax,
         g_valmax);
    if (g_namemax < 2 || g_keymax < 16 || g_valmax < 64) {
        emit("FAIL", "maxes", "maxima too small to run the other tests: giving up");
        exit(3);
    }
}

static void test_kvsname(void)
{
    struct test t = {"kvsname", 0, ""};
    char *a = malloc(g_namemax), *b = malloc(g_namemax), *c = malloc(g_namemax);
    g_kvs = malloc(g_namemax);
    int rc = PMI_KVS_Get_my_name(g_kvs, g_namemax);
    if (rc != PMI_SUCCESS) {
        emit("FAIL", "kvsname", "PMI_KVS_Get_my_name returned %d: giving up", rc);
        exit(3);
    }
    EXPECT(&t, g_kvs[0] != '\0', "the kvsname is empty");
    strcpy(a, g_kvs), strcpy(b, g_kvs);
    if (PMI_Get_id)
        EXPECT_RC(&t, PMI_Get_id(a, g_namemax), PMI_SUCCESS);
    if (PMI_Get_kvs_domain_id)
        EXPECT_RC(&t, PMI_Get_kvs_domain_id(b, g_namemax), PMI_SUCCESS);
    EXPECT(&t, strcmp(a, g_kvs) == 0 && strcmp(b, g_kvs) == 0,
           "PMI_Get_id \"%s\" / PMI_Get_kvs_domain_id \"%s\" differ from \"%s\"", a, b, g_kvs);
    int len = (int)strlen(g_kvs);
    memset(c, 'Z', g_namemax);
    EXPECT_RC(&t, PMI_KVS_Get_my_name(c, len), PMI_ERR_INVALID_LENGTH);
    EXPECT(&t, c[0] == 'Z' && c[len - 1] == 'Z', "a short buffer was written");
    EXPECT_RC(&t, PMI_KVS_Get_my_name(c, len + 1), PMI_SUCCESS);
    EXPECT_REFUSED(&t, PMI_KVS_Get_my_name(NULL, g_namemax), PMI_ERR_INVALID_ARG);
    verdict(&t, "PMI_KVS_Get_my_name = PMI_Get_id = PMI_Get_kvs_domain_id, not empty; a "
                "buffer without room for the NUL -> PMI_ERR_INVALID_LENGTH, nothing written");
    emit("INFO", "kvsname", "%s", g_kvs);
    free(a), free(b), free(c);
}

/* ---- the KVS ------------------------------------------------------------------------ */

/* Whether the library found the server's request lines capped at 1024 bytes (Slurm). */
static int g_lines_cut = -1;

/* The length of the longest value rank `r` puts under "conf-maxval-R": vallen_max-1, or
 * what keeps the put line within 1024 bytes where the server cuts longer lines. */
static int line_fit(int r)
{
    char key[64];
    snprintf(key, sizeof key, "conf-maxval-%d", r);
    int around = (int)(strlen("cmd=put kvsname=") + strlen(g_kvs) + strlen(" key=") + strlen(key) +
                       strlen(" value=") + 1);
    return 1024 - around;
}

static int maxval_len(int r)
{
    return g_lines_cut == 1 && line_fit(r) < g_valmax - 1 ? line_fit(r) : g_valmax - 1;
}

/* Values a server may not keep verbatim (the raw probe puts the same ones). */
static const struct {
    const char *key, *want, *id, *what;
} odd_values[] = {
    {"conf-space-%d", "hello world", "value-space", "a value with a space"},
    {"conf-tab-%d", "tab\there", "value-tab", "a value with a tab"},
    {"conf-utf8-%d", "\xc6\x92lux-\xc3\xa9t\xc3\xa9", "value-utf8", "a UTF-8 value"},
    {"conf-backslash-%d", "back\\slash", "value-backslash", "a value with a backslash"},
    {"conf-equals-%d", "a=b", "value-equals", "a value with '='"},
};
#define N_ODD ((int)(sizeof odd_values / sizeof odd_values[0]))
/* Which of them the library refused (kvs_puts), not to be looked for (kvs_gets). */
static int odd_refused[N_ODD];

/* Puts before the barrier (all of them in this phase). */
static void kvs_puts(struct test *x, struct test *once, struct test *val)
{
    char key[64], value[256];
    for (int which = 0; which < 2; which++) {
        snprintf(key, sizeof key, "conf-card-%d-%d", g_rank, which);
        bc_card(value, sizeof value, g_rank, which);
        EXPECT_RC(x, PMI_KVS_Put(g_kvs, key, value), PMI_SUCCESS);
    }
    /* Identity for the cross-rank checks: my rank, my kvsname, my universe size. */
    snprintf(key, sizeof key, "conf-kvs-%d", g_rank);
    EXPECT_RC(x, PMI_KVS_Put(g_kvs, key, g_kvs), PMI_SUCCESS);
    EXPECT_RC(x, PMI_KVS_Commit(g_kvs), PMI_SUCCESS);

    /* Put once: the same value again is fine, another value is refused. */
    snprintf(key, sizeof key, "conf-once-%d", g_rank);
    EXPECT_RC(once, PMI_KVS_Put(g_kvs, key, "first"), PMI_SUCCESS);
    EXPECT_RC(once, PMI_KVS_Put(g_kvs, key, "first"), PMI_SUCCESS);
    EXPECT_RC(once, PMI_KVS_Put(g_kvs, key, "second"), PMI_ERR_INVALID_KEY);

    /* Argument validation: nothing of this may reach the server. */
    char *longkey = malloc(g_keymax + 1), *longval = malloc(g_valmax + 1);
    memset(longkey, 'k', g_keymax);
    longkey[g_keymax] = '\0'; /* keylen_max chars: one too many */
    memset(longval, 'v', g_valmax);
    longval[g_valmax] = '\0';
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, longkey, "x"), PMI_ERR_INVALID_KEY_LENGTH);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, "conf-long-val", longval), PMI_ERR_INVALID_VAL_LENGTH);
    longkey[g_keymax - 1] = '\0'; /* exactly the maximum less one: allowed */
    snprintf(key, sizeof key, "conf-max-%d-", g_rank);
    memcpy(longkey, key, strlen(key));
    EXPECT_RC(val, PMI_KVS_Put(g_kvs, longkey, "at-the-key-limit"), PMI_SUCCESS);
    longval[g_valmax - 1] = '\0';
    snprintf(key, sizeof key, "conf-maxval-%d", g_rank);
    int rc = PMI_KVS_Put(g_kvs, key, longval);
    g_lines_cut = 0;
    if (rc == PMI_ERR_INVALID_VAL_LENGTH && line_fit(g_rank) < g_valmax - 1) {
        /* Its put line would pass 1024 bytes: a server that cuts request lines there
         * (Slurm) announced a value maximum it cannot take; the longest that fits. */
        g_lines_cut = 1;
        emit("DEV", "request-max-1024", "a put of a value of vallen_max-1 (%d) bytes would "
             "be a line of over 1024 bytes, which the server cuts: the library refuses it",
             g_valmax - 1);
        longval[maxval_len(g_rank)] = '\0';
        rc = PMI_KVS_Put(g_kvs, key, longval);
    }
    EXPECT(val, rc == PMI_SUCCESS, "a put of the longest value returned %d", rc);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, "has space", "v"), PMI_ERR_INVALID_KEY);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, "a=b", "v"), PMI_ERR_INVALID_KEY);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, "", "v"), PMI_ERR_INVALID_KEY);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, "conf-nl", "a\nb"), PMI_ERR_INVALID_VAL);
    EXPECT_REFUSED(val, PMI_KVS_Put("conformance-not-my-kvs", "k", "v"), PMI_ERR_INVALID_KVS);
    EXPECT_REFUSED(val, PMI_KVS_Put(NULL, "k", "v"), PMI_ERR_INVALID_KVS);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, NULL, "v"), PMI_ERR_INVALID_KEY);
    EXPECT_REFUSED(val, PMI_KVS_Put(g_kvs, "k", NULL), PMI_ERR_INVALID_VAL);
    EXPECT_REFUSED(val, PMI_KVS_Commit("conformance-not-my-kvs"), PMI_ERR_INVALID_KVS);
    free(longkey), free(longval);

    /* Values the server may not keep: found out after the barrier. The library may
     * refuse one it knows this server would not keep whole (PMI_ERR_INVALID_VAL, every
     * rank alike); the raw wire probe reports the server's own behaviour. */
    for (int i = 0; i < N_ODD; i++) {
        snprintf(key, sizeof key, odd_values[i].key, g_rank);
        int rc = PMI_KVS_Put(g_kvs, key, odd_values[i].want);
        EXPECT(x, rc == PMI_SUCCESS || rc == PMI_ERR_INVALID_VAL, "a put of %s returned %d",
               odd_values[i].what, rc);
        odd_refused[i] = rc == PMI_ERR_INVALID_VAL;
        if (odd_refused[i])
            emit("INFO", odd_values[i].id, "%s (\"%s\") is refused by the library: it knows "
                 "this server would not keep it whole", odd_values[i].what, odd_values[i].want);
    }
    EXPECT_RC(x, PMI_KVS_Commit(g_kvs), PMI_SUCCESS);
}

static void kvs_gets(struct test *x, struct test *val)
{
    char key[64], want[256];
    char *value = malloc(g_valmax), *other = malloc(g_valmax);
    int found = 0;
    for (int peer = 0; peer < g_size; peer++) {
        for (int which = 0; which < 2; which++) {
            snprintf(key, sizeof key, "conf-card-%d-%d", peer, which);
            bc_card(want, sizeof want, peer, which);
            int rc = PMI_KVS_Get(g_kvs, key, value, g_valmax);
            if (rc == PMI_SUCCESS && strcmp(value, want) == 0)
                found++;
            else
                fail_(x, "%s: rc %d, \"%s\" instead of \"%s\"", key, rc,
                      rc == PMI_SUCCESS ? value : "", want);
        }
        snprintf(key, sizeof key, "conf-kvs-%d", peer);
        int rc = PMI_KVS_Get(g_kvs, key, value, g_valmax);
        EXPECT(x, rc == PMI_SUCCESS && strcmp(value, g_kvs) == 0,
               "rank %d's kvsname is \"%s\" (rc %d), mine \"%s\"", peer,
               rc == PMI_SUCCESS ? value : "", rc, g_kvs);
    }
    EXPECT(x, found == 2 * g_size, "read %d of %d cards", found, 2 * g_size);
    verdict(x, "put/commit/barrier/get across ranks: every rank reads back every rank's "
               "values exactly, and every rank has the same kvsname");

    /* A get into a buffer one byte short, and a full-length value. */
    int peer = (g_rank + 1) % g_size;
    bc_card(want, sizeof want, peer, 0);
    snprintf(key, sizeof key, "conf-card-%d-0", peer);
    int len = (int)strlen(want);
    memset(other, 'Z', g_valmax);
    EXPECT_RC(val, PMI_KVS_Get(g_kvs, key, other, len), PMI_ERR_INVALID_LENGTH);
    EXPECT(val, other[0] == 'Z' && other[len - 1] == 'Z', "a short get buffer was written");
    EXPECT_RC(val, PMI_KVS_Get(g_kvs, key, other, len + 1), PMI_SUCCESS);
    snprintf(key, sizeof key, "conf-maxval-%d", peer);
    int rc = PMI_KVS_Get(g_kvs, key, value, g_valmax);
    EXPECT(val, rc == PMI_SUCCESS && (int)strlen(value) == maxval_len(peer),
           "a value of vallen_max-1 bytes came back with rc %d, length %d", rc,
           rc == PMI_SUCCESS ? (int)strlen(value) : -1);
    EXPECT_REFUSED(val, PMI_KVS_Get("conformance-not-my-kvs", key, value, g_valmax),
              PMI_ERR_INVALID_KVS);
    EXPECT_REFUSED(val, PMI_KVS_Get(g_kvs, key, NULL, g_valmax), PMI_ERR_INVALID_VAL);
    if (refusals_skipped())
        emit("SKIP", val->id, "its refusals not run: CONFORMANCE_SKIP=%s",
             getenv("CONFORMANCE_SKIP"));
    else
        verdict(val, "the library refuses what would break or be truncated: key of keylen_max "
                 "chars -> INVALID_KEY_LENGTH, value of vallen_max -> INVALID_VAL_LENGTH, "
                 "key with space/=/empty -> INVALID_KEY, newline -> INVALID_VAL, foreign "
                 "kvsname -> INVALID_KVS, NULL -> INVALID_ARG, short get buffer -> "
                 "INVALID_LENGTH; keys and values at the maxima less one pass intact");

    /* Values the server may not keep verbatim: deviations, not failures. */
    for (int i = 0; i < N_ODD; i++) {
        if (odd_refused[i])
            continue;
        snprintf(key, sizeof key, odd_values[i].key, peer);
        rc = PMI_KVS_Get(g_kvs, key, value, g_valmax);
        if (rc != PMI_SUCCESS)
            emit("DEV", odd_values[i].id, "%s put verbatim (\"%s\") was not found (rc %d)",
                 odd_values[i].what, odd_values[i].want, rc);
        else if (strcmp(value, odd_values[i].want) != 0)
            emit("DEV", odd_values[i].id, "%s put verbatim (\"%s\") is stored as \"%s\"",
                 odd_values[i].what, odd_values[i].want, value);
    }
    free(value), free(other);
}

static void test_missing_key(void)
{
    struct test t = {"missing-key", 0, ""};
    char *value = malloc(g_valmax);
    char key[64];
    memset(value, 'Z', g_valmax);
    snprintf(key, sizeof key, "conf-never-put-%d", g_rank);
    EXPECT_RC(&t, PMI_KVS_Get(g_kvs, key, value, g_valmax), PMI_ERR_INVALID_KEY);
    EXPECT(&t, value[0] == 'Z', "the buffer was written for a missing key");
    /* The connection is still usable: a peer's card (the library answers a process's
     * own keys without asking the server). */
    snprintf(key, sizeof key, "conf-card-%d-0", (g_rank + 1) % g_size);
    EXPECT_RC(&t, PMI_KVS_Get(g_kvs, key, value, g_valmax), PMI_SUCCESS);
    verdict(&t, "a get of a key nobody put -> PMI_ERR_INVALID_KEY, buffer untouched, the "
                "connection still works");
    free(value);
}

/* ---- job information ---------------------------------------------------------------- */

static void test_universe_appnum(void)
{
    struct test u = {"universe-size", 0, ""}, a = {"appnum", 0, ""};
    int usize = -7, usize2 = -7, appnum = -7;
    EXPECT_RC(&u, PMI_Get_universe_size(&usize), PMI_SUCCESS);
    EXPECT_RC(&u, PMI_Get_universe_size(&usize2), PMI_SUCCESS);
    EXPECT(&u, usize == usize2, "asked twice: %d then %d", usize, usize2);
    EXPECT_REFUSED(&u, PMI_Get_universe_size(NULL), PMI_ERR_INVALID_ARG);
    verdict(&u, "PMI_Get_universe_size succeeds and is stable");
    emit("INFO", "universe-size", "%d", usize);
    if (usize == -1)
        emit("DEV", "universe-unknown", "get_universe_size answers -1 (unknown) instead of "
                                        "the universe size");
    else if (usize < g_size)
        emit("DEV", "universe-small", "universe size %d is smaller than the job size %d",
             usize, g_size);
    EXPECT_RC(&a, PMI_Get_appnum(&appnum), PMI_SUCCESS);
    /* The library passes the server's answer on; -1 (Slurm) is the server's "unknown". */
    EXPECT(&a, appnum >= -1, "appnum %d", appnum);
    EXPECT_REFUSED(&a, PMI_Get_appnum(NULL), PMI_ERR_INVALID_ARG);
    verdict(&a, "PMI_Get_appnum succeeds with the server's answer, >= 0 or -1 (unknown)");
    emit("INFO", "appnum", "%d", appnum);
    if (appnum != 0)
        emit("DEV", "appnum-nonzero", "appnum of a single-command launch is %d, not 0", appnum);
}

static char g_clique_text[4096];
/* This rank's node as PMI_process_mapping gives it (for the NODE group barrier), or
 * g_node_n = -1 where the kit cannot read the mapping. */
static int *g_node, g_node_n = -1;

static int have_clique_calls(void)
{
    return PMI_Get_clique_size && PMI_Get_clique_ranks;
}

static void clique_phase1(struct test *t)
{
    char *map = malloc(g_valmax);
    int *expect = malloc(sizeof(int) * g_size), *ranks = malloc(sizeof(int) * (g_size + 1));
    int n = -1, m = -1, checked = 1;
    int rc = PMI_KVS_Get(g_kvs, "PMI_process_mapping", map, g_valmax);
    if (rc == PMI_SUCCESS && map[0] != '\0') {
        emit("INFO", "process-mapping", "%s", map);
        m = mapping_clique(map, g_rank, g_size, expect);
        /* (The kit's parser is narrower than RFC 13's grammar: no spaces, at most 256
         * blocks written out. What it cannot read it does not check against.) */
        checked = m >= 0;
        if (m < 0)
            emit("DEV", "mapping-unparsed", "PMI_process_mapping \"%s\" is not RFC 13's "
                                            "(vector,(start,nnodes,ppn),...) form as this "
                                            "kit reads it: the clique is not compared", map);
    } else if (rc == PMI_SUCCESS) {
        /* RFC 13: an empty value says the mapping is unknown (too long for a value). */
        emit("INFO", "process-mapping", "empty: unknown (RFC 13), so each process alone");
    } else {
        emit("DEV", "mapping-missing", "no PMI_process_mapping in the KVS (rc %d): the "
                                       "clique is each process alone", rc);
    }
    if (m < 0) {
        m = 1;
        expect[0] = g_rank;
    }
    g_node = malloc(sizeof(int) * m);
    memcpy(g_node, expect, sizeof(int) * m);
    g_node_n = checked ? m : -1;
    if (!have_clique_calls()) {
        free(map), free(expect), free(ranks);
        return;
    }
    EXPECT_RC(t, PMI_Get_clique_size(&n), PMI_SUCCESS);
    if (checked)
        EXPECT(t, n == m, "clique size %d, the mapping says %d", n, m);
    if (n >= 1 && n <= g_size) {
        ranks[n] = -7;
        if (n > 1)
            EXPECT_RC(t, PMI_Get_clique_ranks(ranks, n - 1), PMI_ERR_INVALID_LENGTH);
        EXPECT_RC(t, PMI_Get_clique_ranks(ranks, n + 1), PMI_SUCCESS);
        EXPECT(t, ranks[n] == -7, "PMI_Get_clique_ranks wrote past the clique");
        for (int i = 0; checked && i < n && i < m; i++)
            EXPECT(t, ranks[i] == expect[i], "clique[%d] = %d, the mapping says %d", i, ranks[i],
                   expect[i]);
        int mine = 0;
        for (int i = 0; i < n; i++)
            mine += ranks[i] == g_rank && (i == 0 || ranks[i] > ranks[i - 1]);
        EXPECT(t, mine == 1, "this rank (%d) is not once in its ascending clique", g_rank);
        g_clique_text[0] = '\0';
        for (int i = 0; i < n; i++)
            snprintf(g_clique_text + strlen(g_clique_text),
                     sizeof g_clique_text - strlen(g_clique_text), "%s%d", i ? "," : "",
                     ranks[i]);
        /* Where the launcher tells its processes their local rank, it must agree. */
        const char *nl = getenv("MPI_LOCALNRANKS"), *lr = getenv("MPI_LOCALRANKID");
        if (nl && lr) {
            int pos = -1;
            for (int i = 0; i < n; i++)
                if (ranks[i] == g_rank)
                    pos = i;
            EXPECT(t, atoi(nl) == n && atoi(lr) == pos,
                   "MPI_LOCALNRANKS=%s MPI_LOCALRANKID=%s, the clique says %d and %d", nl, lr,
                   n, pos);
        }
    } else {
        fail_(t, "clique size %d out of range", n);
    }
    char key[64];
    snprintf(key, sizeof key, "conf-clique-%d", g_rank);
    EXPECT_RC(t, PMI_KVS_Put(g_kvs, key, g_clique_text[0] ? g_clique_text : "-"), PMI_SUCCESS);
    free(map), free(expect), free(ranks);
}

/* After a barrier: every member of my clique sees the same clique. */
static void clique_phase2(struct test *t)
{
    if (!have_clique_calls()) {
        emit("SKIP", t->id, "this library has no PMI_Get_clique_size/PMI_Get_clique_ranks");
        return;
    }
    char key[64], *theirs = malloc(g_valmax), *list = strdup(g_clique_text);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        snprintf(key, sizeof key, "conf-clique-%s", tok);
        int rc = PMI_KVS_Get(g_kvs, key, theirs, g_valmax);
        EXPECT(t, rc == PMI_SUCCESS && strcmp(theirs, g_clique_text) == 0,
               "rank %s's clique is \"%s\" (rc %d), mine \"%s\"", tok,
               rc == PMI_SUCCESS ? theirs : "", rc, g_clique_text);
    }
    verdict(t, "the clique (PMI_Get_clique_size/_ranks) is the node of this rank in "
               "PMI_process_mapping, ascending, the same for every member, agrees with the "
               "launcher's MPI_LOCALNRANKS/MPI_LOCALRANKID when set; a short array -> "
               "PMI_ERR_INVALID_LENGTH");
    free(theirs), free(list);
}

/* ---- barrier ----------------------------------------------------------------------- */

static void test_barrier(void)
{
    struct test t = {"barrier-sync", 0, ""};
    /* Barriers with nothing put in between. */
    for (int i = 0; i < 20; i++)
        sync_all("20 empty barriers");
    /* The last rank arrives 1 s late: nobody may leave before it comes. The bound is
     * 0.3 s: on a busy machine a rank may leave the barrier before this one long after
     * the last rank left it, and so wait less for this one. */
    if (g_size > 1) {
        double start = now();
        if (g_rank == g_size - 1)
            sleep_ms(1000);
        sync_all("late arrival");
        double waited = now() - start;
        if (g_rank != g_size - 1)
            EXPECT(&t, waited > 0.3, "left the barrier after %.3f s, the last rank came after "
                                     "1 s", waited);
    }
    verdict(&t, g_size > 1 ? "PMI_Barrier is a pure synchronisation: 20 in a row with no "
                             "puts, and no rank leaves before the last (1 s late) arrives"
                           : "20 PMI_Barrier in a row with no puts (1 rank: no wait to see)");
}

/* ---- PMI 1.2 group barriers ---------------------------------------------------------- */

/* Put "<prefix>-<rank>" = "<prefix>:<rank>" and commit. */
static void put_group_key(struct test *t, const char *prefix)
{
    char key[64], value[64];
    snprintf(key, sizeof key, "%s-%d", prefix, g_rank);
    snprintf(value, sizeof value, "%s:%d", prefix, g_rank);
    EXPECT_RC(t, PMI_KVS_Put(g_kvs, key, value), PMI_SUCCESS);
    EXPECT_RC(t, PMI_KVS_Commit(g_kvs), PMI_SUCCESS);
}

/* Rank `who`'s "<prefix>-<who>", read after a barrier of a group holding both ranks. */
static void read_group_key(struct test *t, const char *prefix, int who)
{
    char key[64], want[64], *got = calloc(1, g_valmax);
    snprintf(key, sizeof key, "%s-%d", prefix, who);
    snprintf(want, sizeof want, "%s:%d", prefix, who);
    int rc = PMI_KVS_Get(g_kvs, key, got, g_valmax);
    EXPECT(t, rc == PMI_SUCCESS && strcmp(got, want) == 0,
           "after the group's barrier, rank %d's %s is \"%s\" (rc %d)", who, key,
           rc == PMI_SUCCESS ? got : "", rc);
    free(got);
}

/* Where the server speaks PMI 1.2: WORLD without a tag, NODE with one, and two disjoint
 * groups (the even ranks and the odd ones) at the same time, with rank 0 2 s late: the
 * evens wait for it, the odds are not held. After each barrier a member reads a key put
 * by another member before it. On a 1.1 server every group barrier returns PMI_FAIL at
 * once and the connection goes on. Every rank takes the same branch: one server answers
 * them all. */
static void test_groups(void)
{
    struct test t = {"group-barrier", 0, ""};
    if (!PMI_Barrier_group) {
        emit("SKIP", t.id, "this library has no PMI_Barrier_group (a PMI 1.1 client)");
        return;
    }
    const char *skip = conformance_skips("groups");
    if (skip) {
        emit("SKIP", t.id, "not run: CONFORMANCE_SKIP=%s", skip);
        return;
    }
    double start = now();
    int rc = PMI_Barrier_group(PMI_GROUP_SELF, 0, NULL);
    if (rc != PMI_SUCCESS) {
        EXPECT(&t, rc == PMI_FAIL, "the SELF probe returned %d, expected PMI_SUCCESS or "
                                   "PMI_FAIL", rc);
        EXPECT_RC(&t, PMI_Barrier_group(PMI_GROUP_WORLD, 0, "conf-world"), PMI_FAIL);
        double took = now() - start;
        EXPECT(&t, took < 5.0, "refusing two group barriers took %.3f s", took);
        put_group_key(&t, "conf-g11");
        sync_all("after refused group barriers");
        read_group_key(&t, "conf-g11", (g_rank + 1) % g_size);
        emit("INFO", "groups", "refused");
        verdict(&t, "the server speaks PMI 1.1: the SELF probe and a WORLD group barrier "
                    "return PMI_FAIL at once, and the connection goes on (put, barrier, get)");
        return;
    }
    emit("INFO", "groups", "done");
    put_group_key(&t, "conf-gw");
    EXPECT_RC(&t, PMI_Barrier_group(PMI_GROUP_WORLD, 0, NULL), PMI_SUCCESS);
    read_group_key(&t, "conf-gw", (g_rank + 1) % g_size);

    put_group_key(&t, "conf-gn");
    EXPECT_RC(&t, PMI_Barrier_group(PMI_GROUP_NODE, 0, "conf-node"), PMI_SUCCESS);
    for (int i = 0; i < g_node_n; i++)
        read_group_key(&t, "conf-gn", g_node[i]);

    /* (A group of one is not asked of the server: MPICH 5's Hydra asserts on it.) */
    int disjoint = g_size >= 4;
    if (disjoint) {
        int *members = malloc(sizeof(int) * g_size), n = 0;
        for (int r = g_rank % 2; r < g_size; r += 2)
            members[n++] = r;
        put_group_key(&t, "conf-gs");
        if (g_rank == 0)
            sleep_ms(2000);
        double entered = now();
        EXPECT_RC(&t, PMI_Barrier_group(members, n, g_rank % 2 ? "conf-odd" : "conf-even"),
                  PMI_SUCCESS);
        double waited = now() - entered;
        /* The lower bound is the sleep's (less a margin for skew); the upper one leaves a
         * busy machine 1.5 s for a barrier of two. */
        if (g_rank % 2 == 0 && g_rank != 0)
            EXPECT(&t, waited > 0.5, "an even rank left its group's barrier after %.3f s, "
                                     "rank 0 came after 2 s", waited);
        if (g_rank % 2 == 1)
            EXPECT(&t, waited < 1.5, "an odd rank waited %.3f s in its group's barrier: held "
                                     "by rank 0, which is not in it", waited);
        read_group_key(&t, "conf-gs", members[(g_rank / 2 + 1) % n]);
        free(members);
    }
    sync_all("after the group barriers");
    verdict(&t, disjoint ? "the server speaks PMI 1.2: the SELF probe succeeds; after a "
                           "WORLD barrier (no tag), a NODE barrier (tagged) and two "
                           "disjoint groups' barriers at once, members read keys put "
                           "before them; a late rank holds its group, not the other"
                         : "the server speaks PMI 1.2: the SELF probe succeeds; after a "
                           "WORLD barrier (no tag) and a NODE barrier (tagged), members "
                           "read keys put before them (fewer than 4 ranks: no disjoint "
                           "groups)");
}

/* ---- name publishing ---------------------------------------------------------------- */

static int g_names_ok = -1;

static const char NAMES_VERDICT[] =
    "PMI_Publish_name by rank 0, PMI_Lookup_name by every rank, PMI_Unpublish_name; a "
    "second publish, a second unpublish and a lookup after unpublish -> PMI_FAIL; a name "
    "with a space -> PMI_ERR_INVALID_ARG";

static void names_phase(int phase, struct test *t, const char *service)
{
    char *port = malloc(g_valmax);
    if (phase == 0 && g_rank == 0) {
        int rc = PMI_Publish_name(service, "tcp://conformance:4242");
        if (rc == PMI_FAIL) {
            g_names_ok = 0;
            emit("SKIP", "names", "PMI_Publish_name returned %d", rc);
            emit("DEV", "publish-unsupported", "the server refuses publish_name (PMI_FAIL)");
        } else if (rc != PMI_SUCCESS) {
            /* Not the server's no (that is PMI_FAIL): the library's. */
            g_names_ok = 0;
            EXPECT(t, 0, "PMI_Publish_name returned %d, not PMI_SUCCESS or the server's "
                         "PMI_FAIL", rc);
            verdict(t, NAMES_VERDICT);
        } else {
            g_names_ok = 1;
            if (PMI_Publish_name(service, "tcp://other:1") == PMI_SUCCESS) {
                /* The server took a second publish of the name: a finding about it. Put
                 * the first port back alone (unpublish until none is left) and go on. */
                emit("DEV", "publish-overwrites", "a second publish of a name is "
                     "acknowledged (RFC 13: it fails while the name is published)");
                for (int i = 0; i < 4 && PMI_Unpublish_name(service) == PMI_SUCCESS; i++)
                    ;
                EXPECT_RC(t, PMI_Publish_name(service, "tcp://conformance:4242"), PMI_SUCCESS);
            }
        }
        char ok[64];
        snprintf(ok, sizeof ok, "%d", g_names_ok);
        EXPECT_RC(t, PMI_KVS_Put(g_kvs, "conf-names-ok", ok), PMI_SUCCESS);
        EXPECT_RC(t, PMI_KVS_Commit(g_kvs), PMI_SUCCESS);
        EXPECT_REFUSED(t, PMI_Publish_name("has space", "p"), PMI_ERR_INVALID_ARG);
        EXPECT_REFUSED(t, PMI_Publish_name(service, NULL), PMI_ERR_INVALID_ARG);
    } else if (phase == 1) {
        if (PMI_KVS_Get(g_kvs, "conf-names-ok", port, g_valmax) == PMI_SUCCESS) {
            g_names_ok = atoi(port);
        } else if (g_rank != 0) {
            /* Rank 0 put it and committed it before the barrier. */
            EXPECT(t, 0, "rank 0's conf-names-ok cannot be read after the barrier");
            verdict(t, NAMES_VERDICT);
        }
        if (g_names_ok == 1) {
            memset(port, 'Z', g_valmax);
            int rc = PMI_Lookup_name(service, port);
            EXPECT(t, rc == PMI_SUCCESS && strcmp(port, "tcp://conformance:4242") == 0,
                   "lookup on rank %d: rc %d, \"%s\"", g_rank, rc, rc == PMI_SUCCESS ? port : "");
        }
    } else if (phase == 2 && g_rank == 0 && g_names_ok == 1) {
        EXPECT_RC(t, PMI_Unpublish_name(service), PMI_SUCCESS);
        if (PMI_Unpublish_name(service) == PMI_SUCCESS)
            emit("DEV", "unpublish-unknown-ok", "unpublishing a name that is not published "
                 "is acknowledged (RFC 13: it fails)");
    } else if (phase == 3 && g_names_ok == 1) {
        EXPECT_RC(t, PMI_Lookup_name(service, port), PMI_FAIL);
        verdict(t, NAMES_VERDICT);
    }
    free(port);
}

/* ---- spawn ------------------------------------------------------------------------- */

static const char SPAWN_VERDICT[] =
    "PMI_Spawn_multiple starts a process: it sees spawned TRUE, size 1, appnum 0, a new "
    "kvsname holding the preput pair, and can publish its verdict";

static void test_spawn(const char *tag)
{
    struct test t = {"spawn", 0, ""};
    char self[PATH_MAX], service[320];
    if (!spawn_may_run(self))
        return;
    const char *cmds[] = {self};
    const char *args[] = {"--child", g_kvs, tag, NULL};
    const char **argvs[] = {args};
    int maxprocs[] = {1}, errors[1] = {-99}, infos[] = {0};
    const PMI_keyval_t *info[] = {NULL};
    PMI_keyval_t preput[] = {{"conf-preput", (char *)"from-the-parent"}};
    int rc = PMI_Spawn_multiple(1, cmds, argvs, maxprocs, infos, info, 1, preput, errors);
    if (rc == PMI_FAIL) {
        emit("SKIP", "spawn", "PMI_Spawn_multiple returned %d", rc);
        emit("DEV", "spawn-unsupported", "the server refuses spawn (PMI_Spawn_multiple "
                                         "returned %d)", rc);
        return;
    }
    if (rc != PMI_SUCCESS) {
        /* Not the server's no (that is PMI_FAIL): the library's. */
        EXPECT(&t, 0, "PMI_Spawn_multiple returned %d, not PMI_SUCCESS or the server's "
                      "PMI_FAIL", rc);
        verdict(&t, SPAWN_VERDICT);
        return;
    }
    EXPECT(&t, errors[0] == 0, "errors[0] = %d", errors[0]);
    if (g_names_ok != 1) {
        emit("SKIP", "spawn", "spawned, but without name publishing the child's verdict "
                              "cannot be collected (its own lines may still appear)");
        return;
    }
    char *port = malloc(g_valmax);
    snprintf(service, sizeof service, "conf-child-%s", tag);
    rc = PMI_FAIL;
    for (int tries = 0; tries < 6000 && rc != PMI_SUCCESS; tries++) { /* 60 s */
        rc = PMI_Lookup_name(service, port);
        if (rc != PMI_SUCCESS)
            sleep_ms(10);
    }
    EXPECT(&t, rc == PMI_SUCCESS, "no verdict from the spawned process in 60 s");
    EXPECT(&t, rc != PMI_SUCCESS || strcmp(port, "ok") == 0, "the spawned process says: %s",
           port);
    if (rc == PMI_SUCCESS)
        PMI_Unpublish_name(service);
    verdict(&t, SPAWN_VERDICT);
    free(port);
}

static int child_main(const char *parent_kvs, const char *tag)
{
    struct test t = {"spawn", 0, ""};
    int spawned = -1, appnum = -1;
    g_child = 1;
    if (PMI_Init(&spawned) != PMI_SUCCESS)
        return 3;
    PMI_Get_rank(&g_rank);
    PMI_Get_size(&g_size);
    PMI_KVS_Get_value_length_max(&g_valmax);
    PMI_KVS_Get_name_length_max(&g_namemax);
    EXPECT(&t, spawned == PMI_TRUE, "spawned is %d", spawned);
    EXPECT(&t, g_size == 1 && g_rank == 0, "rank %d of %d", g_rank, g_size);
    EXPECT_RC(&t, PMI_Get_appnum(&appnum), PMI_SUCCESS);
    /* 0, or -1 where the server does not know it (Slurm): reported for the launch. */
    EXPECT(&t, appnum == 0 || appnum == -1, "appnum %d", appnum);
    g_kvs = malloc(g_namemax);
    char *value = malloc(g_valmax);
    EXPECT_RC(&t, PMI_KVS_Get_my_name(g_kvs, g_namemax), PMI_SUCCESS);
    EXPECT(&t, strcmp(g_kvs, parent_kvs) != 0, "the child's kvsname is the parent's");
    int rc = PMI_KVS_Get(g_kvs, "conf-preput", value, g_valmax);
    EXPECT(&t, rc == PMI_SUCCESS && strcmp(value, "from-the-parent") == 0,
           "preput key: rc %d \"%s\"", rc, rc == PMI_SUCCESS ? value : "");
    EXPECT_RC(&t, PMI_Barrier(), PMI_SUCCESS);
    char service[320], verdict_text[600];
    snprintf(service, sizeof service, "conf-child-%s", tag);
    snprintf(verdict_text, sizeof verdict_text, "%s", t.failed ? t.why : "ok");
    for (char *c = verdict_text; *c; c++)
        if (*c == ' ' || *c == '=' || (unsigned char)*c < 32)
            *c = '_';
    PMI_Publish_name(service, verdict_text);
    PMI_Finalize();
    return t.failed ? 1 : 0;
}

/* ---- finalize ---------------------------------------------------------------------- */

static void test_finalize(void)
{
    struct test t = {"finalize", 0, ""};
    PMI_BOOL b = -5;
    int x = -5;
    EXPECT_RC(&t, PMI_Finalize(), PMI_SUCCESS);
    EXPECT_RC(&t, PMI_Initialized(&b), PMI_SUCCESS);
    EXPECT(&t, b == PMI_FALSE, "PMI_Initialized gave %d after PMI_Finalize", b);
    int rc = PMI_Get_rank(&x);
    EXPECT(&t, rc == PMI_ERR_INIT, "PMI_Get_rank(&x) returned %d after PMI_Finalize, expected "
                                   "PMI_ERR_INIT (%d)", rc, PMI_ERR_INIT);
    /* (A library that does not know it is finalized may write to the closed connection:
     * not tried.) */
    if (rc == PMI_ERR_INIT) {
        EXPECT_RC(&t, PMI_Barrier(), PMI_ERR_INIT);
        EXPECT_RC(&t, PMI_KVS_Put(g_kvs, "late", "v"), PMI_ERR_INIT);
        EXPECT_RC(&t, PMI_Finalize(), PMI_ERR_INIT);
    }
    EXPECT_RC(&t, PMI_KVS_Get_value_length_max(&x), PMI_SUCCESS);
    verdict(&t, "PMI_Finalize succeeds (finalize_ack); afterwards PMI_Initialized is FALSE "
                "and calls return PMI_ERR_INIT (the length maxima still answer)");
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child") == 0)
        return child_main(argv[2], argv[3]);

    int before_ok;
    test_maxes_before(&before_ok);
    test_before_init();
    test_init();
    test_maxes();
    test_kvsname();

    struct test x = {"kvs-exchange", 0, ""}, once = {"put-once", 0, ""},
                val = {"validation", 0, ""}, cl = {"clique", 0, ""}, nm = {"names", 0, ""};
    kvs_puts(&x, &once, &val);
    verdict(&once, "a second put of a key: the same value succeeds, another value -> "
                   "PMI_ERR_INVALID_KEY (RFC 13: a key is put once)");
    test_universe_appnum();
    clique_phase1(&cl);
    EXPECT_RC(&x, PMI_KVS_Commit(g_kvs), PMI_SUCCESS);
    char service[300];
    snprintf(service, sizeof service, "conf-svc-%s", g_kvs);
    for (char *c = service; *c; c++) /* a name must be an RFC 13 word */
        if (*c == ' ' || *c == '=' || (unsigned char)*c < 32)
            *c = '_';
    names_phase(0, &nm, service);
    sync_all("after the puts");

    kvs_gets(&x, &val);
    test_missing_key();
    clique_phase2(&cl);
    names_phase(1, &nm, service);
    sync_all("after the lookups");
    names_phase(2, &nm, service);
    sync_all("after unpublish");
    names_phase(3, &nm, service);

    test_barrier();
    test_groups();

    if (g_rank == 0)
        test_spawn(service + 9);
    sync_all("after spawn");

    test_finalize();
    emit("INFO", "done", "rank %d of %d finished", g_rank, g_size);
    return 0;
}
