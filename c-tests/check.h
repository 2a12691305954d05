/* The one check header of every C (and C++) test program: the C tests, the drop-in
 * programs, the conformance kit, the MPI programs and the benchmarks. One behaviour per
 * program, the exit status is the verdict; each failed check names its line, the
 * process and what was seen, in one write(2) so that lines of several processes never
 * interleave. With <pmi.h> (or Slurm's) included first it also gives the business-card
 * exchange of MPI_Init, written once here.
 *
 * The rule of every multi-process program here, as MPI_Finalize keeps it: no process
 * finalizes while another may still wait for the server's reply; the last request to
 * the server is followed by a barrier (PMI-2: a fence). Hydra relays some replies through
 * other proxies: Intel MPI's mpiexec sends a name-service reply through the job's first
 * proxy and kills the whole job when that proxy has already exited (docs/CI.md). */
#ifndef CHECK_H
#define CHECK_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_failures;
static int check_rank = -1;
/* Who is speaking, when "rank N" is not enough (set it with snprintf). */
static char check_label[64];

/* Write one line to fd with one write(2) (retried on EINTR and short writes); newlines
 * inside are flattened, and one is added at the end. */
static inline void check_write_line(int fd, const char *text)
{
    char line[3072];
    size_t len = strlen(text);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    for (size_t i = 0; i < len; i++)
        line[i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    line[len++] = '\n';
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

/* CHECK_REPORT=FILE: each failed check's line, and each line given to check_say, is also
 * appended to FILE, one write each. A launcher that ends a failing job may drop what its
 * processes printed (Hydra 4.0.2 on a write error to a proxy that has exited: docs/CI.md);
 * a runner that must see what they said reads FILE. */
static inline void check_also_report(const char *text)
{
    const char *path = getenv("CHECK_REPORT");
    int fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
    if (fd >= 0) {
        check_write_line(fd, text);
        close(fd);
    }
}

/* One line of what a program found, on stdout, and in CHECK_REPORT. */
static inline void check_say(const char *text)
{
    fflush(stdout);
    check_write_line(1, text);
    check_also_report(text);
}

/* A failed check: "check failed at FILE:LINE: WHO: message" on stderr (runners look for
 * "check failed at" to know that no check failed), and in CHECK_REPORT. */
static inline void check_fail(const char *file, int line, const char *fmt, ...)
{
    char who[80], text[2048];
    if (check_label[0])
        snprintf(who, sizeof who, "%s", check_label);
    else
        snprintf(who, sizeof who, "rank %d", check_rank);
    int n = snprintf(text, sizeof text, "check failed at %s:%d: %s: ", file, line, who);
    if (n < 0 || (size_t)n >= sizeof text)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    check_write_line(2, text);
    check_also_report(text);
    check_failures++;
}

#define CHECK(cond)                                                                     \
    do {                                                                                \
        if (!(cond))                                                                    \
            check_fail(__FILE__, __LINE__, "check failed: %s", #cond);                  \
    } while (0)

/* A check with its own message: CHECKF(cond, "format", args...). */
#define CHECKF(cond, ...)                                                               \
    do {                                                                                \
        if (!(cond))                                                                    \
            check_fail(__FILE__, __LINE__, __VA_ARGS__);                                \
    } while (0)

/* Whether the runner allows the known server deviation `id` (CHECK_DEVIATIONS holds a
 * comma-separated list; scripts/launchers.sh sets it per launcher). */
static inline int check_deviation_allowed(const char *id)
{
    const char *list = getenv("CHECK_DEVIATIONS");
    size_t n = strlen(id);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, id, n) == 0)
            return 1;
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* Whether the runner says the library serves this job through `backend` (CHECK_BACKEND:
 * "pmix" under a PMIx launcher), for the few checks of one backend's limits. */
static inline int check_backend_is(const char *backend)
{
    const char *b = getenv("CHECK_BACKEND");
    return b && strcmp(b, backend) == 0;
}

/* A check that may fail only because of the server deviation `id`: when the runner
 * allows it, "deviation ID: message" is printed and nothing is counted (the runner
 * records the deviation from that line); otherwise it is a failed check. Every other
 * check of the program still counts. */
#define CHECK_DEV(cond, id, ...)                                                        \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            if (check_deviation_allowed(id)) {                                          \
                char check_dev_[2048];                                                  \
                int check_n_ = snprintf(check_dev_, sizeof check_dev_, "deviation %s: ",   \
                                        id);                                            \
                snprintf(check_dev_ + check_n_, sizeof check_dev_ - (size_t)check_n_,    \
                         __VA_ARGS__);                                                  \
                check_write_line(2, check_dev_);                                        \
            } else {                                                                    \
                check_fail(__FILE__, __LINE__, __VA_ARGS__);                            \
            }                                                                           \
        }                                                                               \
    } while (0)

/* Check that a call returns the expected PMI code. */
#define CHECK_RC(call, expected)                                                        \
    do {                                                                                \
        int check_rc_ = (call);                                                         \
        if (check_rc_ != (expected))                                                    \
            check_fail(__FILE__, __LINE__, "%s returned %d, expected %s (%d)", #call,   \
                       check_rc_, #expected, (int)(expected));                          \
    } while (0)

/* Give up at once when a step everything else depends on fails. */
#define REQUIRE_RC(call, expected)                                                      \
    do {                                                                                \
        int check_rc_ = (call);                                                         \
        if (check_rc_ != (expected)) {                                                  \
            check_fail(__FILE__, __LINE__, "%s returned %d, expected %s: giving up",     \
                       #call, check_rc_, #expected);                                    \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

/* Give up at once when a precondition does not hold. */
#define REQUIRE(cond)                                                                   \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            check_fail(__FILE__, __LINE__, "%s does not hold: giving up", #cond);       \
            exit(2);                                                                    \
        }                                                                               \
    } while (0)

static inline int check_done(void)
{
    if (check_failures) {
        char text[128];
        snprintf(text, sizeof text, "rank %d: %d check(s) failed", check_rank, check_failures);
        check_write_line(2, text);
    }
    return check_failures ? 1 : 0;
}

/* The conformance kit's report line, "@@conf WHO KIND ID TEXT", on stdout. */
static inline void check_report(const char *who, const char *kind, const char *id, const char *fmt,
                         va_list ap)
{
    char line[3072];
    int n = snprintf(line, sizeof line, "@@conf %s %s %s ", who, kind, id);
    if (n < 0 || (size_t)n >= sizeof line)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    check_write_line(1, line);
}

/* A rank's two business cards, as MPI_Init puts them: a TCP address and a shared-memory
 * segment (with a ';', which the PMI-2 wire must escape). */
static inline void bc_card(char *buf, size_t len, int rank, int which)
{
    if (which == 0)
        snprintf(buf, len, "tcp://10.0.%d.%d:%d", rank / 250, rank % 250 + 1, 40000 + rank);
    else
        snprintf(buf, len, "shm:/dev/shm/demo-%d;pid-slot=%d", rank, rank * 7);
}

/* The same card as PMI-2 can carry it: ',' for ';' (servers cut PMI-2 values at a ';'). */
static inline void bc_card2(char *buf, size_t len, int rank, int which)
{
    bc_card(buf, len, rank, which);
    for (char *p = buf; *p; p++)
        if (*p == ';')
            *p = ',';
}

/* Slurm's SLURM_STEP_TASKS_PER_NODE, "2(x3),1": the count for node `node`, or -1. */
static inline int check_slurm_tasks_on(const char *list, int node)
{
    for (const char *p = list; *p;) {
        char *end;
        long count = strtol(p, &end, 10), times = 1;
        if (end == p)
            return -1;
        if (strncmp(end, "(x", 2) == 0) {
            times = strtol(end + 2, &end, 10);
            if (*end++ != ')')
                return -1;
        }
        if (node < times)
            return (int)count;
        node -= (int)times;
        p = *end == ',' ? end + 1 : end;
    }
    return -1;
}

/* What the launcher tells this process about its node: Hydra's MPI_LOCALNRANKS and
 * MPI_LOCALRANKID, or Slurm's SLURM_STEP_TASKS_PER_NODE (at SLURM_NODEID) and
 * SLURM_LOCALID. */
static inline int check_launcher_local(int *nlocal, int *local, int rank, int size)
{
    /* The runner knows the launcher put every rank on this one node (prterun says so
     * only through PMIx). */
    if (getenv("CHECK_ONE_NODE")) {
        *nlocal = size, *local = rank;
        return 1;
    }
    const char *n = getenv("MPI_LOCALNRANKS"), *id = getenv("MPI_LOCALRANKID");
    if (n && id) {
        *nlocal = atoi(n), *local = atoi(id);
        return 1;
    }
    const char *tasks = getenv("SLURM_STEP_TASKS_PER_NODE"), *node = getenv("SLURM_NODEID");
    id = getenv("SLURM_LOCALID");
    if (tasks && node && id) {
        *nlocal = check_slurm_tasks_on(tasks, atoi(node)), *local = atoi(id);
        return *nlocal > 0;
    }
    return 0;
}

/* ---- the node-local ranks against the truth ---------------------------------------------
 * Across real hosts (the runner sets CHECK_REAL_HOSTS: scripts/cluster.sh), a rank's
 * node-local ranks must be exactly the ranks whose gethostname() is its own. HOSTS[r] is
 * rank r's host name, gathered through the KVS. */
static inline int check_real_hosts(void)
{
    const char *v = getenv("CHECK_REAL_HOSTS");
    return v && *v && strcmp(v, "0") != 0;
}

/* This process's node, for the check against the truth: its host name (HOST, from
 * gethostname()), or where the runner simulates nodes on one host, the value of the
 * variable CHECK_NODE_VAR names (Flux's test brokers: FLUX_URI names a task's broker). */
static inline void check_node_name(char *host, size_t size)
{
    const char *var = getenv("CHECK_NODE_VAR"), *node = var && *var ? getenv(var) : NULL;
    if (node)
        snprintf(host, size, "%s", node);
}

/* The node's ranks as the library counts them (`n` of them, this rank at `position`)
 * against what the launcher tells this process; across real hosts, where prterun says
 * nothing but through PMIx, the caller checks host names instead. `what` names the count
 * in the message. */
static inline void check_local_is_launcher(const char *what, int n, int position, int rank,
                                           int size)
{
    int nlocal = -1, local = -1;
    if (check_launcher_local(&nlocal, &local, rank, size)) {
        CHECK_DEV(n == nlocal, "mapping-not-hosts",
                  "%s of %d, the launcher says %d ranks on this node", what, n, nlocal);
        CHECK_DEV(position == local, "mapping-not-hosts",
                  "position %d in the %s, the launcher says %d", position, what, local);
    } else {
        CHECKF(check_real_hosts(), "the launcher says nothing of this node's ranks");
    }
}

/* The ranks RANKS[0..N) (what the library says shares this rank's node, WHAT) against the
 * host names. */
static inline void check_local_is_host(const char *what, char **hosts, int size, int rank,
                                       const int *ranks, int n)
{
    char want[1024] = "", got[1024] = "";
    for (int r = 0; r < size; r++)
        if (strcmp(hosts[r], hosts[rank]) == 0)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", want[0] ? "," : "", r);
    for (int i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", i ? "," : "", ranks[i]);
    CHECK_DEV(strcmp(want, got) == 0, "mapping-not-hosts",
              "%.40s on host %.64s is ranks %.900s; the ranks on this host are %.900s", what,
              hosts[rank], got, want);
}

/* The mapping's items up to the closing ')' or ']' (a block "(start,nodes,ppn)", a bare
 * node id, or a repeat group "[items]xK", as MPICH 4.1 and later write them), appended to
 * OUT[*N..CAP) one node id per rank. The end of the items, or NULL when they do not parse
 * or do not fit. */
static inline const char *check_map_items(const char *p, int *out, int *n, int cap, int depth)
{
    for (;;) {
        int a, b, c, used = 0;
        while (*p == ',' || *p == ' ')
            p++;
        if (*p == ')' || *p == ']')
            return p;
        if (sscanf(p, "(%d,%d,%d)%n", &a, &b, &c, &used) == 3 && used > 0 && b >= 1 && c >= 1) {
            for (int node = a; node < a + b; node++)
                for (int k = 0; k < c; k++) {
                    if (*n >= cap)
                        return NULL;
                    out[(*n)++] = node;
                }
            p += used;
        } else if (*p == '[' && depth < 4) {
            int first = *n;
            p = check_map_items(p + 1, out, n, cap, depth + 1);
            if (!p || sscanf(p, "]x%d%n", &a, &used) != 1 || used == 0 || a < 1)
                return NULL;
            for (int len = *n - first, t = 1; t < a; t++)
                for (int i = 0; i < len; i++) {
                    if (*n >= cap)
                        return NULL;
                    out[(*n)++] = out[first + i];
                }
            p += used;
        } else if (sscanf(p, "%d%n", &a, &used) == 1 && used > 0 && a >= 0) {
            if (*n >= cap)
                return NULL;
            out[(*n)++] = a;
            p += used;
        } else {
            return NULL;
        }
    }
}

/* The node of RANK in a PMI_process_mapping "(vector,...)", or -1 when it does not parse.
 * Past the ranks it lists the pattern repeats (as MPICH reads it). */
static inline int check_mapping_node(const char *mapping, int rank)
{
    static int nodes[8192];
    int n = 0;
    const char *p = strstr(mapping, "(vector,");
    if (!p || rank < 0)
        return -1;
    p = check_map_items(p + 8, nodes, &n, (int)(sizeof nodes / sizeof nodes[0]), 0);
    if (!p || *p != ')' || n == 0)
        return -1;
    return nodes[rank % n];
}

/* PMI_process_mapping against the host names: ranks share a node in the mapping exactly
 * when they share a host. */
static inline void check_mapping_is_host(const char *mapping, char **hosts, int size, int rank)
{
    int mine = check_mapping_node(mapping, rank);
    for (int r = 0; r < size; r++) {
        int node = check_mapping_node(mapping, r);
        int same_host = strcmp(hosts[r], hosts[rank]) == 0;
        if (mine < 0 || node < 0 || (node == mine) != same_host) {
            CHECK_DEV(0, "mapping-not-hosts",
                      "PMI_process_mapping %s puts ranks %d and %d on node %d and %d; their "
                      "hosts are %s and %s",
                      mapping, rank, r, mine, node, hosts[rank], hosts[r]);
            return;
        }
    }
}

#ifdef PMI_SUCCESS
/* The MPI_Init exchange through the PMI-1 API: put this rank's two cards under
 * "PREFIX-RANK-WHICH", commit, barrier, read every rank's cards back and compare. key,
 * value and expected are the caller's buffers of keylen, vallen and vallen bytes.
 * Returns how many of the 2 * size cards came back intact; each miss is a failed check. */
/* Set to skip PMI_KVS_Commit in bc_exchange (a program that goes from its puts straight
 * to the barrier: their values must arrive all the same). */
static int bc_skip_commit;

static inline int bc_exchange(const char *prefix, char *kvs, int rank, int size, char *key, int keylen,
                       char *value, char *expected, int vallen)
{
    for (int which = 0; which < 2; which++) {
        snprintf(key, (size_t)keylen, "%s-%d-%d", prefix, rank, which);
        bc_card(value, (size_t)vallen, rank, which);
        CHECK_RC(PMI_KVS_Put(kvs, key, value), PMI_SUCCESS);
    }
    if (!bc_skip_commit)
        CHECK_RC(PMI_KVS_Commit(kvs), PMI_SUCCESS);
    REQUIRE_RC(PMI_Barrier(), PMI_SUCCESS);
    int learned = 0;
    for (int peer = 0; peer < size; peer++)
        for (int which = 0; which < 2; which++) {
            snprintf(key, (size_t)keylen, "%s-%d-%d", prefix, peer, which);
            bc_card(expected, (size_t)vallen, peer, which);
            int rc = PMI_KVS_Get(kvs, key, value, vallen);
            if (rc == PMI_SUCCESS && strcmp(value, expected) == 0)
                learned++;
            else
                check_fail(__FILE__, __LINE__, "get %s: rc %d, \"%s\", expected \"%s\"", key,
                           rc, rc == PMI_SUCCESS ? value : "?", expected);
        }
    return learned;
}
#endif

#endif
