/* PMI_TIMEOUT against a real server that stops answering. After two barriers (the
 * second done at rank 0 means every rank has read the first's reply), rank 0 stops its
 * parent (the launcher's process that serves it: slurmstepd, prterun or prted, Hydra's
 * proxy) with SIGSTOP, and waits until every thread of it has stopped, so no barrier can
 * complete any more. Each rank's next barriers must fail with PMI_FAIL, the first within
 * a few seconds of PMI_TIMEOUT (the runner sets it). Each rank writes its verdict to
 * OUTDIR/rank-R.txt ("ok ..." or what went wrong).
 * Rank 0 lets the server go on (SIGCONT) only once every rank has written one (or after a
 * bound): a server that goes on may finish a barrier without the rank whose connection
 * PMI_TIMEOUT shut (prted does), and a rank that came late to its barrier would see it
 * succeed. Rank 0 leaves last: the launcher may end the job as it likes once a process
 * leaves without PMI_Finalize (prterun kills the others, seen on a busy machine).
 * Usage: stopped_server OUTDIR */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pmi.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether every thread of process PID is stopped. SIGSTOP takes effect after kill(2)
 * returns: prterun was still running right after it in 7 of 20 runs, and once served
 * two more barriers before it stopped. */
static int all_stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (dir == NULL)
        return 0;
    int stopped = 1;
    for (struct dirent *e; stopped && (e = readdir(dir)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char stat[512] = "";
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/stat", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(stat, 1, sizeof stat - 1, f) : 0;
        if (f)
            fclose(f);
        stat[n] = '\0';
        const char *state = strrchr(stat, ')'); /* "TID (NAME) S ..." */
        stopped = state != NULL && (state[2] == 'T' || state[2] == 't');
    }
    closedir(dir);
    return stopped;
}

int main(int argc, char **argv)
{
    int spawned, rank, size;
    const char *bound_text = getenv("PMI_TIMEOUT");
    REQUIRE(argc == 2 && bound_text != NULL && atoi(bound_text) > 0);
    double bound = atoi(bound_text);
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    check_rank = rank;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.txt", argv[1], rank);
    FILE *out = fopen(path, "w");
    REQUIRE(out != NULL);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    /* Rank 0 returns from this one only once every rank has asked for it; another rank's
     * may be the first to fail (the server stopped before it answered that rank). */
    double start = now();
    int rc = PMI_Barrier();
    double took = now() - start;
    pid_t server = getppid();
    if (rank == 0) {
        REQUIRE_RC(rc, PMI_SUCCESS);
        REQUIRE(kill(server, SIGSTOP) == 0);
        double until = now() + 10;
        while (!all_stopped(server) && now() < until)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        REQUIRE(all_stopped(server));
    }
    /* The first barrier to fail, and how long it took. */
    for (int tries = 0; rc == PMI_SUCCESS && tries < 2; tries++) {
        start = now();
        rc = PMI_Barrier();
        took = now() - start;
    }
    int again = PMI_Barrier();
    if (rc != PMI_FAIL || again != PMI_FAIL)
        fprintf(out, "barriers returned %d then %d, expected PMI_FAIL (%d)\n", rc, again, PMI_FAIL);
    else if (took > 3 * bound + 2)
        fprintf(out, "the barrier failed after %.1f s, PMI_TIMEOUT=%.0f\n", took, bound);
    else
        fprintf(out, "ok: rank %d of %d: the barrier failed after %.1f s\n", rank, size, took);
    fclose(out);
    /* Rank 0 lets the server go on, and leaves, only once every other rank has written
     * its verdict (or after a bound). */
    for (int r = 1; rank == 0 && r < size; r++) {
        snprintf(path, sizeof path, "%s/rank-%d.txt", argv[1], r);
        struct stat st;
        double until = now() + 3 * bound + 10;
        while ((stat(path, &st) != 0 || st.st_size == 0) && now() < until)
            nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
    if (rank == 0)
        kill(server, SIGCONT);
    return 0;
}
