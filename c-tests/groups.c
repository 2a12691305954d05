/* PMI 1.2's PMI_Barrier_group under a launcher (MPICH 5's pmi.h and client semantics).
 * The probe PMI_Barrier_group(PMI_GROUP_SELF, 0, NULL) says whether the server can do
 * group barriers (CHECK_GROUPS, when the runner sets it, says what to expect: "threaded"
 * for a PMI 1.2 wire server, "serialized" under PMIx, "none" for a PMI 1.1 server).
 *
 * Without group barriers: every group barrier fails at once, and the connection stays
 * usable (a put, a barrier and the peers' gets follow).
 *
 * With them: two disjoint groups (the even ranks, the odd ranks) barrier at the same time
 * and read their members' keys put before; ranks 0 and 1 barrier alone while the others
 * go on (ranks outside a group are not held); the node's ranks barrier (PMI_GROUP_NODE)
 * and read each other's keys; the whole job (PMI_GROUP_WORLD, tagged) and everyone's
 * keys. Then ranks 0 and 1 again, and PMI_Barrier, rank 1 entering each 1.5 s late while
 * a second thread of rank 0 puts and gets: with a PMI 1.2 wire server those calls return
 * while the barrier waits ("threaded"); elsewhere (PMIx, a PMI 1.1 server: PMI_Barrier
 * alone) they wait for it ("serialized").
 * Usage: groups */
#define _XOPEN_SOURCE 700 /* nanosleep, clock_gettime */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pmi.h>

#include "check.h"

/* Slurm's clique calls, weak: MPICH 5's own client has none, and the program runs on it
 * too (c-tests/run-peers.sh). Only a client given as a peer (CHECK_CLIQUE_OPTIONAL=1) may
 * lack them; this library's must have them, dynamic or static. */
#pragma weak PMI_Get_clique_size
#pragma weak PMI_Get_clique_ranks
static int clique_calls(void)
{
    const char *optional = getenv("CHECK_CLIQUE_OPTIONAL");
    int have = PMI_Get_clique_size != NULL && PMI_Get_clique_ranks != NULL;
    if (!(optional && strcmp(optional, "1") == 0))
        CHECKF(have, "PMI_Get_clique_size or PMI_Get_clique_ranks is not in the library");
    return have;
}

static int rank, size;
static char kvs[256];

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pause_for(double seconds)
{
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&t, NULL);
}

/* Put "<prefix>-<rank>" = "<prefix>:<rank>" and commit. */
static void put_mine(const char *prefix)
{
    char key[64], value[64];
    snprintf(key, sizeof key, "%s-%d", prefix, rank);
    snprintf(value, sizeof value, "%s:%d", prefix, rank);
    CHECK_RC(PMI_KVS_Put(kvs, key, value), PMI_SUCCESS);
    CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
}

/* Read rank `who`'s "<prefix>-<who>" and check it. */
static void check_theirs(const char *prefix, int who)
{
    char key[64], want[64], got[1024] = "";
    snprintf(key, sizeof key, "%s-%d", prefix, who);
    snprintf(want, sizeof want, "%s:%d", prefix, who);
    int rc = PMI_KVS_Get(kvs, key, got, sizeof got);
    CHECKF(rc == PMI_SUCCESS && strcmp(got, want) == 0,
           "get %s after the group barrier: rc %d, \"%s\"", key, rc, got);
}

/* The second thread of rank 0: a put and a peer's get while the first waits (begun
 * 0.2 s after it, so that the barrier has been entered). */
static double calls_took;
static void *calls_meanwhile(void *unused)
{
    (void)unused;
    pause_for(0.2);
    double t = now();
    char key[64];
    snprintf(key, sizeof key, "late-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, key, "meanwhile"), PMI_SUCCESS);
    check_theirs("w", size - 1);
    calls_took = now() - t;
    return NULL;
}

/* A barrier that rank 1 enters 1.5 s late while a second thread of rank 0 puts and gets:
 * PMI_Barrier_group of ranks 0 and 1 (`group`), or PMI_Barrier of every rank. With a PMI
 * 1.2 wire server the calls return while the barrier waits ("threaded"); elsewhere they
 * wait for it ("serialized": one lock serialises the calls that need the server). */
static void late_barrier(int group, const char *expect)
{
    int pair[2] = {0, 1};
    pthread_t other;
    double t = now();
    if (rank == 1)
        pause_for(1.5);
    else if (rank == 0)
        REQUIRE(pthread_create(&other, NULL, calls_meanwhile, NULL) == 0);
    CHECK_RC(group ? PMI_Barrier_group(pair, 2, "late") : PMI_Barrier(), PMI_SUCCESS);
    double waited = now() - t;
    if (rank != 0)
        return;
    REQUIRE(pthread_join(other, NULL) == 0);
    CHECKF(waited >= 1.4, "the barrier with a late rank took only %.2f s", waited);
    if (strcmp(expect, "threaded") == 0)
        CHECKF(calls_took < 1.0, "a put and a get took %.2f s while %s waited (threaded)",
               calls_took, group ? "PMI_Barrier_group" : "PMI_Barrier");
    else if (*expect)
        CHECKF(calls_took >= 1.0,
               "a put and a get took %.2f s: not serialized behind %s", calls_took,
               group ? "PMI_Barrier_group" : "PMI_Barrier");
    printf("rank 0: another thread's put and get took %.2f s while %s waited %.2f s for a "
           "late rank\n", calls_took, group ? "PMI_Barrier_group" : "PMI_Barrier", waited);
}

static void without_group_barriers(const char *expect)
{
    int all[4096];
    for (int i = 0; i < size && i < 4096; i++)
        all[i] = i;
    double t = now();
    CHECK_RC(PMI_Barrier_group(PMI_GROUP_WORLD, 0, "x"), PMI_FAIL);
    CHECK_RC(PMI_Barrier_group(PMI_GROUP_NODE, 0, NULL), PMI_FAIL);
    if (size <= 4096)
        CHECK_RC(PMI_Barrier_group(all, size, NULL), PMI_FAIL);
    CHECKF(now() - t < 1.0, "refusing group barriers took %.2f s", now() - t);
    /* The connection is still usable. */
    put_mine("w");
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    check_theirs("w", (rank + 1) % size);
    if (size >= 2)
        late_barrier(0, expect);
    printf("rank %d of %d: no group barriers (the probe failed), each refused at once; the "
           "connection stays usable\n", rank, size);
}

static void with_group_barriers(const char *expect)
{
    /* Two disjoint groups at the same time: the even ranks, the odd ranks. */
    int group[4096], n = 0;
    for (int i = rank % 2; i < size && n < 4096; i += 2)
        group[n++] = i;
    put_mine("g");
    CHECK_RC(PMI_Barrier_group(group, n, rank % 2 ? "odd" : "even"), PMI_SUCCESS);
    for (int i = 0; i < n; i++)
        check_theirs("g", group[i]);

    /* Ranks 0 and 1 alone (in reverse order, as a caller may give them); the others go
     * on to the node's barrier without them. */
    if (rank < 2 && size >= 2) {
        int pair[2] = {1, 0};
        put_mine("p");
        CHECK_RC(PMI_Barrier_group(pair, 2, "pair"), PMI_SUCCESS);
        check_theirs("p", 1 - rank);
    }

    /* The node's ranks, tagged. (Without the clique calls, which only another client
     * may lack, the node's barrier is run and its keys are not read.) */
    int nlocal = 0, local[4096];
    if (clique_calls()) {
        CHECK_RC(PMI_Get_clique_size(&nlocal), PMI_SUCCESS);
        REQUIRE(nlocal >= 1 && nlocal <= 4096);
        CHECK_RC(PMI_Get_clique_ranks(local, nlocal), PMI_SUCCESS);
    }
    put_mine("n");
    CHECK_RC(PMI_Barrier_group(PMI_GROUP_NODE, 0, "node"), PMI_SUCCESS);
    for (int i = 0; i < nlocal; i++)
        check_theirs("n", local[i]);

    /* The whole job, tagged. */
    put_mine("w");
    CHECK_RC(PMI_Barrier_group(PMI_GROUP_WORLD, 0, "world"), PMI_SUCCESS);
    for (int i = 0; i < size; i++)
        check_theirs("w", i);

    /* Ranks 0 and 1, rank 1 entering 1.5 s late; rank 0's second thread calls meanwhile. */
    if (rank < 2 && size >= 2)
        late_barrier(1, expect);
    printf("rank %d of %d: group barriers: two groups at once, a pair, the node (%d), the "
           "world; every key read\n", rank, size, nlocal);
}

int main(void)
{
    int spawned;
    setvbuf(stdout, NULL, _IOLBF, 0);
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);

    const char *expect = getenv("CHECK_GROUPS");
    int probe = PMI_Barrier_group(PMI_GROUP_SELF, 0, NULL);
    if (expect && *expect)
        CHECKF((probe == PMI_SUCCESS) == (strcmp(expect, "none") != 0),
               "the probe PMI_Barrier_group(PMI_GROUP_SELF) returned %d, CHECK_GROUPS=%s",
               probe, expect);
    if (probe == PMI_SUCCESS)
        with_group_barriers(expect ? expect : "");
    else
        without_group_barriers(expect ? expect : "");
    /* PMI_Barrier with a late rank: not held with a PMI 1.2 wire server, else serialized. */
    if (size >= 2 && probe == PMI_SUCCESS)
        late_barrier(0, expect ? expect : "");

    /* The last request is followed by a barrier (check.h). */
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
