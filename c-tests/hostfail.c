/* A host that fails mid-job (scripts/hostfail.sh cuts its link, kills the launcher's
 * process on it, or kills the launcher): every rank but the last waits in a call that
 * cannot end while the last rank holds out, and each says when and how that call ended.
 *
 *   hostfail barrier|get OUTDIR
 *
 * barrier: PMI_Barrier (PMI-2: PMI2_KVS_Fence); get: a get of a key the last rank never
 * puts (PMI-2: after a fence, as in a program: Hydra 4.0.2 and 5.0.2 end the job on a
 * get of a missing key from a process that has not fenced yet). Should a call return at
 * once (a server that answers "not found" at once, a PMI-2 fence that is no barrier:
 * the Hydras'), the next one follows, as the line says. The last rank, on the job's last host
 * in a block layout, never calls: it sleeps until the job is ended (at most 600 s).
 * Each rank first writes OUTDIR/rank-R.wait ("waiting: rank R of N on HOST pid P since
 * T"; the last rank "holding out: ..."); a waiting rank whose call returned writes
 * OUTDIR/rank-R.txt ("rank R on HOST: CALL returned RC at T", T seconds since the epoch)
 * and exits with status 3 without PMI_Finalize (the server is gone), or 4 should the call
 * succeed. A rank the launcher kills writes nothing more. After PMI_Init each rank's
 * stderr is OUTDIR/rank-R.err, where the library's line about the server it lost lands
 * (the launcher's process that relays stderr may be the one that failed). Built with -DHOSTFAIL_PMI2
 * (pmi2_hostfail) for libpmi2.so.0. */
#define _POSIX_C_SOURCE 200809L
#ifdef HOSTFAIL_PMI2
#include <pmi2.h>
#define SUCCESS PMI2_SUCCESS
#else
#include <pmi.h>
#define SUCCESS PMI_SUCCESS
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write LINE to OUTDIR/rank-R.SUFFIX at once (the process may be killed any moment). */
static void say(const char *outdir, int rank, const char *suffix, const char *line)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.%s", outdir, rank, suffix);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return;
    }
    fprintf(f, "%s\n", line);
    fclose(f);
}

/* A barrier (PMI-2: a fence), or a get of the key OWNER never puts; *CALL names it. */
static int wait_in(int get, const char *kvs, int owner, const char **call)
{
    char key[64], value[1024];
    snprintf(key, sizeof key, "hostfail-%d", owner);
#ifdef HOSTFAIL_PMI2
    int len = 0;
    *call = get ? "PMI2_KVS_Get" : "PMI2_KVS_Fence";
    return get ? PMI2_KVS_Get(kvs, PMI2_ID_NULL, key, value, sizeof value, &len) : PMI2_KVS_Fence();
#else
    *call = get ? "PMI_KVS_Get" : "PMI_Barrier";
    return get ? PMI_KVS_Get(kvs, key, value, sizeof value) : PMI_Barrier();
#endif
}

int main(int argc, char **argv)
{
    REQUIRE(argc == 3 && (strcmp(argv[1], "barrier") == 0 || strcmp(argv[1], "get") == 0));
    const char *mode = argv[1], *outdir = argv[2];
    int rank, size;
#ifdef HOSTFAIL_PMI2
    int spawned, appnum;
    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    char kvs[256];
    REQUIRE_RC(PMI2_Job_GetId(kvs, sizeof kvs), PMI2_SUCCESS);
#else
    int spawned;
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    char kvs[256];
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);
#endif
    check_rank = rank;
    REQUIRE(size >= 2);
    /* What the library says from here on goes to OUTDIR/rank-R.err: the launcher's
     * process that relays this process's stderr may be the one that fails. */
    char errpath[4096];
    snprintf(errpath, sizeof errpath, "%s/rank-%d.err", outdir, rank);
    int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    REQUIRE(errfd >= 0 && dup2(errfd, 2) == 2);
    close(errfd);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char line[1024];
    if (rank == size - 1) {
        snprintf(line, sizeof line, "holding out: rank %d of %d on %s pid %d since %.3f", rank, size,
                 host, (int)getpid(), wall());
        say(outdir, rank, "wait", line);
        for (int i = 0; i < 600; i++)
            sleep(1);
        return 5;
    }
    snprintf(line, sizeof line, "waiting: rank %d of %d on %s pid %d since %.3f", rank, size, host,
             (int)getpid(), wall());
    say(outdir, rank, "wait", line);
    /* The calls in order, barrier (0) or get (1), each made when the one before it
     * returned at once (a server that answers a missing key "not found", a PMI-2 fence
     * that is no barrier): the one asked for, then the other; PMI-2 fences first. */
    int get = strcmp(mode, "get") == 0;
#ifdef HOSTFAIL_PMI2
    int steps[3] = {0, 1, 0}, nsteps = get ? 3 : 2;
#else
    int steps[2] = {get, !get}, nsteps = 2;
#endif
    const char *call = "";
    char note[256] = "";
    size_t used = 0;
    int rc = SUCCESS;
    for (int i = 0; i < nsteps; i++) {
        double start = wall();
        rc = wait_in(steps[i], kvs, size - 1, &call);
        if (i == nsteps - 1 || wall() - start >= 1.0)
            break;
        int n = snprintf(note + used, sizeof note - used, "%s%s answered %d at once",
                         i ? ", " : " (", call, rc);
        used += n > 0 && (size_t)n < sizeof note - used ? (size_t)n : 0;
    }
    if (used > 0)
        snprintf(note + used, sizeof note - used, "; then %s)", call);
    snprintf(line, sizeof line, "rank %d on %s: %s returned %d at %.3f%s", rank, host, call, rc, wall(),
             note);
    say(outdir, rank, "txt", line);
    return rc == SUCCESS ? 4 : 3;
}
