/* fork() after PMI_Init: the child's PMI calls return PMI_FAIL at once and touch nothing
 * of the parent's (no wire traffic, no lock), even when the fork happens while another
 * thread of the parent is blocked in PMI_Barrier holding the library's lock; the parent
 * carries on (its barrier and finalize succeed).
 * Run with at least 2 ranks: rank 0 forks, rank 1 enters the barrier late. */
#define _XOPEN_SOURCE 700 /* nanosleep */
#include <pmi.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

/* In the child: every call refused, quickly, but the queries of a process not
 * initialized; exit 0 when all were. */
static int child_checks(const char *kvs)
{
    int v = -5;
    PMI_BOOL b = PMI_TRUE;
    char buf[64];
    CHECK_RC(PMI_Get_rank(&v), PMI_FAIL);
    CHECK_RC(PMI_Get_size(&v), PMI_FAIL);
    CHECK_RC(PMI_KVS_Put(kvs, "from-the-child", "x"), PMI_FAIL);
    CHECK_RC(PMI_KVS_Get(kvs, "from-the-child", buf, sizeof buf), PMI_FAIL);
    CHECK_RC(PMI_Barrier(), PMI_FAIL);
    CHECK_RC(PMI_Finalize(), PMI_FAIL);
    CHECK_RC(PMI_Initialized(&b), PMI_SUCCESS);
    CHECK(b == PMI_FALSE);
    CHECK(v == -5);
    /* Not initialized: the maxima are the defaults, as before PMI_Init. */
    int max = -1;
    CHECK_RC(PMI_KVS_Get_value_length_max(&max), PMI_SUCCESS);
    CHECK(max == 1024);
    CHECK_RC(PMI_KVS_Get_name_length_max(&max), PMI_SUCCESS);
    CHECK(max == 256);
    return check_failures ? 1 : 0;
}

/* Fork, let the child run its checks (at most 10 s), and check its verdict. */
static void fork_and_check(const char *kvs, const char *when)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(child_checks(kvs));
    int status = -1;
    for (int i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) == 0; i++)
        pause_ms(10);
    if (waitpid(pid, &status, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        CHECKF(0, "the child forked %s hung in a PMI call", when);
        return;
    }
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "the child forked %s failed its checks (status %d)", when, status);
}

static void *barrier_thread(void *arg)
{
    int *rc = arg;
    *rc = PMI_Barrier();
    return NULL;
}

int main(void)
{
    int spawned, rank, size;
    char kvs[256];
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    REQUIRE_RC(PMI_Get_size(&size), PMI_SUCCESS);
    REQUIRE(size >= 2);
    REQUIRE_RC(PMI_KVS_Get_my_name(kvs, sizeof kvs), PMI_SUCCESS);

    if (rank == 0)
        fork_and_check(kvs, "after PMI_Init");
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);

    /* Rank 0 forks while a thread of its own holds the lock, blocked in a barrier that
     * rank 1 enters only 500 ms later. */
    if (rank == 0) {
        int barrier_rc = -99;
        pthread_t tid;
        REQUIRE(pthread_create(&tid, NULL, barrier_thread, &barrier_rc) == 0);
        pause_ms(100);
        fork_and_check(kvs, "while a thread blocks in PMI_Barrier");
        REQUIRE(pthread_join(tid, NULL) == 0);
        CHECK_RC(barrier_rc, PMI_SUCCESS);
    } else {
        pause_ms(500);
        REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    }
    /* The parent's connection is intact: a put, a barrier and a get round trip. */
    char key[64], value[64];
    snprintf(key, sizeof key, "after-fork-%d", rank);
    CHECK_RC(PMI_KVS_Put(kvs, key, "ok"), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    snprintf(key, sizeof key, "after-fork-%d", (rank + 1) % size);
    CHECK_RC(PMI_KVS_Get(kvs, key, value, sizeof value), PMI_SUCCESS);
    CHECK(strcmp(value, "ok") == 0);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
