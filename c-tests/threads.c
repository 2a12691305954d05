/* Eight threads per rank call put (distinct keys), get and the info queries at once,
 * 10 000 calls each, twice with a fence between, under a launcher: every answer must be
 * right. Interleaved wire lines would make Hydra answer wrongly or kill the job
 * ("Unrecognized PMI command").
 * Built with -DTHREADS_PMI2 (pmi2_threads) it does the same through libpmi2.so.0: PMI-2's
 * point is that its calls may come from any thread.
 * Usage: threads [calls per thread] */
#define _XOPEN_SOURCE 700 /* nanosleep */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef THREADS_PMI2
#include <pmi2.h>
#else
#include <pmi.h>
#endif

#include "check.h"

#define THREADS 8

static int rank, size, appnum, universe, calls = 10000;
static char kvs[256];
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

#ifdef THREADS_PMI2
/* The PMI-2 calls: appnum stands for the processes on this node, universe for
 * localRanksCount, both asked of the library in every round. */
#define SUCCESS PMI2_SUCCESS
static int put(const char *key, const char *value) { return PMI2_KVS_Put(key, value); }
/* A fence is no barrier under every server: a key the owner put before its fence may
 * not be there yet; retried for up to 20 s. */
static int get(int owner, const char *key, char *value, int len)
{
    int got, rc = PMI2_KVS_Get(NULL, owner, key, value, len, &got);
    for (int tries = 0; rc == PMI2_ERR_INVALID_KEY && tries < 2000; tries++) {
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
        rc = PMI2_KVS_Get(NULL, owner, key, value, len, &got);
    }
    return rc;
}
static int fence(void) { return PMI2_KVS_Fence(); }

static int queries(void)
{
    int v = -1, n = -1, found = -1, wrong = 0;
    char name[256], attr[PMI2_MAX_ATTRVALUE];
    wrong += PMI2_Job_GetRank(&v) != PMI2_SUCCESS || v != rank;
    wrong += PMI2_Info_GetSize(&v) != PMI2_SUCCESS || v != appnum;
    wrong += PMI2_Job_GetId(name, sizeof name) != PMI2_SUCCESS || strcmp(name, kvs) != 0;
    wrong += PMI2_Info_GetNodeAttrIntArray("localRanksCount", &v, 1, &n, &found) !=
                 PMI2_SUCCESS || v != universe || n != 1 || found != 1;
    wrong += PMI2_Info_GetJobAttr("PMI_process_mapping", attr, sizeof attr, &found) !=
                 PMI2_SUCCESS || found != 1;
    return wrong;
}

static void init(void)
{
    int spawned, found, n;
    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI2_Job_GetId(kvs, sizeof kvs), PMI2_SUCCESS);
    REQUIRE_RC(PMI2_Info_GetSize(&appnum), PMI2_SUCCESS);
    REQUIRE_RC(PMI2_Info_GetNodeAttrIntArray("localRanksCount", &universe, 1, &n, &found),
               PMI2_SUCCESS);
}
#define finalize PMI2_Finalize
#else
#define SUCCESS PMI_SUCCESS
static int put(const char *key, const char *value) { return PMI_KVS_Put(kvs, key, value); }
static int get(int owner, const char *key, char *value, int len)
{
    (void)owner;
    return PMI_KVS_Get(kvs, key, value, len);
}
static int fence(void)
{
    int rc = PMI_KVS_Commit(kvs);
    return rc == PMI_SUCCESS ? PMI_Barrier() : rc;
}

static int queries(void)
{
    int v = -1, wrong = 0;
    char name[256];
    wrong += PMI_Get_rank(&v) != PMI_SUCCESS || v != rank;
    wrong += PMI_Get_size(&v) != PMI_SUCCESS || v != size;
    wrong += PMI_Get_appnum(&v) != PMI_SUCCESS || v != appnum;
    wrong += PMI_Get_universe_size(&v) != PMI_SUCCESS || v != universe;
    wrong += PMI_KVS_Get_my_name(name, sizeof name) != PMI_SUCCESS || strcmp(name, kvs) != 0;
    return wrong;
}

static void init(void)
{
    int spawned;
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    /* What the launcher answers (Slurm's appnum is -1): every thread must see the same. */
    REQUIRE_RC(PMI_Get_appnum(&appnum), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_universe_size(&universe), PMI_SUCCESS);
}
#define finalize PMI_Finalize
#endif

struct job {
    int thread, phase, failures;
};

/* Phase 0: puts and queries. Phase 1 (after a barrier): gets of this rank's and the next
 * rank's keys, and queries. A tenth of the calls touch the KVS; the rest are queries. */
static void *work(void *arg)
{
    struct job *job = arg;
    char key[64], value[64], want[64];
    int kvs_ops = calls / 10;

    for (int i = 0, done = 0; done < calls; i++) {
        if (i < kvs_ops) {
            int owner = job->phase == 1 && i % 2 ? (rank + 1) % size : rank;
            snprintf(key, sizeof key, "r%d-t%d-k%d", owner, job->thread, i);
            snprintf(want, sizeof want, "v-%d-%d-%d", owner, job->thread, i);
            if (job->phase == 0 && put(key, want) != SUCCESS)
                job->failures++;
            if (job->phase == 1 &&
                (get(owner, key, value, sizeof value) != SUCCESS || strcmp(value, want)))
                job->failures++;
            done++;
        }
        job->failures += queries(); /* five calls */
        done += 5;
    }
    return NULL;
}

static int run_phase(int phase)
{
    pthread_t tid[THREADS];
    struct job jobs[THREADS];
    int failures = 0;

    for (int t = 0; t < THREADS; t++) {
        jobs[t] = (struct job){t, phase, 0};
        REQUIRE(pthread_create(&tid[t], NULL, work, &jobs[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        REQUIRE(pthread_join(tid[t], NULL) == 0);
        pthread_mutex_lock(&failures_lock);
        failures += jobs[t].failures;
        pthread_mutex_unlock(&failures_lock);
    }
    return failures;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        calls = atoi(argv[1]);
    init();
    int failures = run_phase(0);
    REQUIRE_RC(fence(), SUCCESS);
    failures += run_phase(1);
    CHECK(failures == 0);
    if (failures)
        fprintf(stderr, "rank %d: %d wrong answers\n", rank, failures);
    REQUIRE_RC(fence(), SUCCESS);
    CHECK_RC(finalize(), SUCCESS);
    return check_done();
}
