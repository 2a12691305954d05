/* Eight threads per rank call put (distinct keys), get and the info queries at once,
 * 10 000 calls each, under a launcher: every answer must be right. Interleaved wire lines
 * would make Hydra answer wrongly or kill the job ("Unrecognized PMI command").
 * Usage: threads [calls per thread] */
#include <pmi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define THREADS 8

static int rank, size, appnum, universe, calls = 10000;
static char kvs[256];
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

struct job {
    int thread, phase, failures;
};

static void info_queries(struct job *job)
{
    int v = -1;
    char name[256];

    if (PMI_Get_rank(&v) != PMI_SUCCESS || v != rank)
        job->failures++;
    if (PMI_Get_size(&v) != PMI_SUCCESS || v != size)
        job->failures++;
    if (PMI_Get_appnum(&v) != PMI_SUCCESS || v != appnum)
        job->failures++;
    if (PMI_Get_universe_size(&v) != PMI_SUCCESS || v != universe)
        job->failures++;
    if (PMI_KVS_Get_my_name(name, sizeof name) != PMI_SUCCESS || strcmp(name, kvs) != 0)
        job->failures++;
}

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
            if (job->phase == 0 && PMI_KVS_Put(kvs, key, want) != PMI_SUCCESS)
                job->failures++;
            if (job->phase == 1 &&
                (PMI_KVS_Get(kvs, key, value, sizeof value) != PMI_SUCCESS || strcmp(value, want)))
                job->failures++;
            done++;
        }
        info_queries(job); /* five calls */
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
    int spawned;

    if (argc > 1)
        calls = atoi(argv[1]);
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
    /* What the launcher answers (Slurm's appnum is -1): every thread must see the same. */
    REQUIRE_RC(PMI_Get_appnum(&appnum), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_universe_size(&universe), PMI_SUCCESS);
    int failures = run_phase(0);
    CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    failures += run_phase(1);
    CHECK(failures == 0);
    if (failures)
        fprintf(stderr, "rank %d: %d wrong answers\n", rank, failures);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
