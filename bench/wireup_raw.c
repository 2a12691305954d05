/* The reference for the wire-up benchmark: the same MPI_Init pattern as wireup_lib.c,
 * speaking the PMI-1.1 wire directly on PMI_FD with the least a lock-step client can do
 * (one write per request, read until the newline), no validation beyond rc checks.
 * Prints `wireup rank=R ns=T ok=1`, T from before init to after the last barrier. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wireup.h"

static int fd;
static char reply[65536];

static void fail(const char *what)
{
    fprintf(stderr, "wireup_raw: %s\n", what);
    exit(1);
}

/* Send one line, read one reply line into `reply` (NUL-terminated, newline kept). */
static void rt(const char *line, size_t len)
{
    if (write(fd, line, len) != (ssize_t)len)
        fail("write");
    size_t got = 0;
    for (;;) {
        ssize_t n = read(fd, reply + got, sizeof reply - 1 - got);
        if (n <= 0)
            fail("read");
        got += (size_t)n;
        if (reply[got - 1] == '\n')
            break;
    }
    reply[got] = 0;
}

static void rt_ok(const char *line, size_t len)
{
    rt(line, len);
    if (strstr(reply, "rc=0") == NULL)
        fail(reply);
}

int main(void)
{
    char line[1024], kvsname[256], expected[1024];
    int ok = 1;
    long long t0 = wireup_now_ns();
    const char *e_fd = getenv("PMI_FD"), *e_rank = getenv("PMI_RANK"), *e_size = getenv("PMI_SIZE");
    if (!e_fd || !e_rank || !e_size)
        fail("PMI_FD, PMI_RANK and PMI_SIZE are needed");
    fd = atoi(e_fd);
    int rank = atoi(e_rank), size = atoi(e_size);
    static const char init[] = "cmd=init pmi_version=1 pmi_subversion=1\n";
    rt_ok(init, sizeof init - 1);
    static const char maxes[] = "cmd=get_maxes\n";
    rt(maxes, sizeof maxes - 1);
    static const char myname[] = "cmd=get_my_kvsname\n";
    rt(myname, sizeof myname - 1);
    const char *name = strstr(reply, "kvsname=");
    if (!name)
        fail(reply);
    name += 8;
    size_t nlen = strcspn(name, " \n");
    if (nlen >= sizeof kvsname)
        fail("kvsname too long");
    memcpy(kvsname, name, nlen);
    kvsname[nlen] = 0;
    for (int which = 0; which < 2; which++) {
        int n = snprintf(line, sizeof line, "cmd=put kvsname=%s key=card-%d-%d value=", kvsname,
                         rank, which);
        bc_card(line + n, sizeof line - (size_t)n, rank, which);
        n += (int)strlen(line + n);
        line[n++] = '\n';
        rt_ok(line, (size_t)n);
    }
    static const char barrier[] = "cmd=barrier_in\n";
    rt(barrier, sizeof barrier - 1);
    for (int peer = 0; peer < size; peer++)
        for (int which = 0; which < 2; which++) {
            int n = snprintf(line, sizeof line, "cmd=get kvsname=%s key=card-%d-%d\n", kvsname,
                             peer, which);
            rt_ok(line, (size_t)n);
            const char *v = strstr(reply, "value=");
            if (!v)
                fail(reply);
            v += 6;
            size_t vlen = strcspn(v, "\n");
            bc_card(expected, sizeof expected, peer, which);
            ok &= strlen(expected) == vlen && memcmp(v, expected, vlen) == 0;
        }
    rt(barrier, sizeof barrier - 1);
    long long t1 = wireup_now_ns();
    char cost[128];
    printf("wireup rank=%d ns=%lld ok=%d t0=%lld t1=%lld%s\n", rank, t1 - t0, ok, t0, t1,
           wireup_cost(cost, sizeof cost));
    fflush(stdout);
    static const char fin[] = "cmd=finalize\n";
    rt(fin, sizeof fin - 1);
    close(fd);
    return ok ? 0 : 1;
}
