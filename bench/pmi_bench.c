/* The client side of the canned-server benchmarks (run it under bench/canned_server,
 * which provides PMI_FD for the library and BENCH_RAW_FD for the raw client).
 *
 *   pmi_bench overhead ROUNDS N   per round and per operation: N raw round trips and N
 *                                 library calls, in alternating order; medians
 *   pmi_bench count OP N          PMI_Init, a warm-up, then N operations of one kind
 *                                 (for strace and valgrind at two values of N); OP
 *                                 prefixed raw or ref: by the raw or reference client
 *   pmi_bench init [raw-first] [ref]  PMI_Init's time (the reference's with ref), the
 *                                 lines it sent, its page faults, and the raw client's
 *                                 two round trips after (or before) it
 *   pmi_bench clique              the first PMI_Get_clique_size + PMI_Get_clique_ranks
 *   pmi_bench load B K PROG@DIR...  K batches: B processes of each PROG started at once
 *                                 with LD_LIBRARY_PATH=DIR alone, each PROG first in
 *                                 turn; per batch, the CPU time per process
 *
 * The raw client is the least a lock-step client can do: one preformatted write, then
 * read until the newline. The library gets the same keys and values, preformatted too,
 * and sends the same bytes.
 *
 * Built with -DBENCH_PMI2 (pmi_bench2) it measures libpmi2.so.0 the same way (overhead
 * and count): the PMI-2 calls (PMI2_KVS_Get with the source-rank hint, PMI2_KVS_Put,
 * PMI2_KVS_Fence) against a raw client writing the same preformatted frames and reading
 * each framed reply.
 *
 * With BENCH_REF_LIB naming another client library of the same API (MPICH's simple
 * client, libpmi.so.0 or libpmi2.so.0), the overhead run measures it too, as a third
 * client on its own connection (BENCH_REF_FD), loaded with dlopen(RTLD_DEEPBIND) so that
 * its symbols stay its own; `count refOP` runs it alone. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KVS "kvs_bench_0"
#define VALMAX 1024
#ifdef BENCH_PMI2
#include <pmi2.h>
/* A PMI-2 value holds no ';' (servers cut at it): the same card with commas. */
#define CARD "tcp://10.0.0.1:40001,shm:/dev/shm/mpich-bench-0,pid-slot=00000007"
#else
#include <pmi.h>
#define CARD "tcp://10.0.0.1:40001;shm:/dev/shm/mpich-bench-0;pid-slot=00000007"
#endif

enum op { GET, PUT, BARRIER, CACHED, MISSING, NOPS };
static const char *op_name[NOPS] = {"get", "put", "barrier", "getcached", "getmissing"};

static int rawfd = -1;
static char kvsname[256];
static char value[VALMAX];

static void die(const char *what)
{
    fprintf(stderr, "pmi_bench: %s\n", what);
    exit(1);
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One raw round trip: one write of the preformatted request, then read the reply: up to
 * the newline, or (framed, PMI-2) the six-character length and that many bytes. */
static char rbuf[65536];
static size_t raw_rt_as(const char *line, size_t len, int framed)
{
    if (write(rawfd, line, len) != (ssize_t)len)
        die("raw write failed");
    size_t got = 0;
    for (;;) {
        ssize_t n = read(rawfd, rbuf + got, sizeof rbuf - 1 - got);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            die("raw read failed");
        }
        if (!framed && memchr(rbuf + got, '\n', (size_t)n)) {
            rbuf[got + (size_t)n] = 0;
            return got + (size_t)n;
        }
        got += (size_t)n;
        if (framed && got >= 6 && got >= 6 + (size_t)atoi(rbuf)) {
            rbuf[got] = 0;
            return got;
        }
    }
}

/* A client library: this one (linked) or the reference (BENCH_REF_LIB, loaded with
 * dlopen(RTLD_DEEPBIND) so that its symbols stay its own), called through one table. */
#ifdef BENCH_PMI2
#define raw_rt(line, len) raw_rt_as(line, len, 1)
#define API(X)                                                                                    \
    X(init, PMI2_Init) X(get, PMI2_KVS_Get) X(put, PMI2_KVS_Put) X(sync, PMI2_KVS_Fence)          \
        X(finalize, PMI2_Finalize)
#define OK PMI2_SUCCESS
#define MISSING_RC PMI2_ERR_INVALID_KEY
#else
#define raw_rt(line, len) raw_rt_as(line, len, 0)
#define API(X)                                                                                    \
    X(init, PMI_Init) X(get, PMI_KVS_Get) X(put, PMI_KVS_Put) X(sync, PMI_Barrier)                \
        X(finalize, PMI_Finalize)
#define OK PMI_SUCCESS
#define MISSING_RC PMI_ERR_INVALID_KEY
#endif

struct client {
    const char *name;
    /* Whether a get of a missing key must give MISSING_RC (else any failure will do:
     * MPICH's simple client answers PMI_FAIL). */
    int strict;
#define FIELD(f, sym) __typeof__(&sym) f;
    API(FIELD)
#undef FIELD
};

#define DIRECT(f, sym) .f = sym,
static struct client lib = {.name = "library", .strict = 1, API(DIRECT)};
#undef DIRECT
static struct client ref = {.name = "reference"};
static int have_ref;

/* One call of `op` for `key` by client c, its return code as is. */
static int call(const struct client *c, int op, const char *key)
{
    switch (op) {
    case PUT:
#ifdef BENCH_PMI2
        return c->put(key, CARD);
#else
        return c->put(kvsname, key, CARD);
#endif
    case BARRIER:
        return c->sync();
    default: {
#ifdef BENCH_PMI2
        int len;
        return c->get(NULL, 0, key, value, VALMAX, &len);
#else
        return c->get(kvsname, key, value, VALMAX);
#endif
    }
    }
}

static void client_op(const struct client *c, int op, const char *key)
{
    int rc = call(c, op, key);
    if (op == MISSING && (c->strict ? rc == MISSING_RC : rc != OK))
        return;
    if (rc != OK) {
        fprintf(stderr, "pmi_bench: %s: %s of %s: rc %d\n", c->name, op_name[op], key, rc);
        exit(1);
    }
}

static int client_init(const struct client *c)
{
#ifdef BENCH_PMI2
    int spawned, size, rank, appnum;
    return c->init(&spawned, &size, &rank, &appnum);
#else
    int spawned;
    return c->init(&spawned);
#endif
}

static void lib_init(void)
{
    if (client_init(&lib) != OK)
        die("the library's init failed");
#ifdef BENCH_PMI2
    int rc = PMI2_Job_GetId(kvsname, sizeof kvsname);
#else
    int rc = PMI_KVS_Get_my_name(kvsname, sizeof kvsname);
#endif
    if (rc != OK || strcmp(kvsname, KVS) != 0)
        die("no kvsname, or an unexpected one");
    const char *fd = getenv("BENCH_RAW_FD");
    if (!fd)
        die("BENCH_RAW_FD not set: run under canned_server");
    rawfd = atoi(fd);
#ifdef BENCH_PMI2
    /* The raw connection speaks PMI-2 from its first line on. */
    static const char init[] = "cmd=init pmi_version=2 pmi_subversion=0\n";
    raw_rt_as(init, sizeof init - 1, 0);
#endif
}

static void *ref_sym(void *h, const char *name)
{
    void *f = dlsym(h, name);
    if (!f)
        die(dlerror());
    return f;
}

/* The k-th of n clients to run in round r: each starts in turn, the rotation forward in
 * one cycle of n rounds and backward in the next, so that over 2n rounds each client runs
 * before each other as often as after it (a plain rotation of three puts one of each
 * pair first in two rounds of three). */
static int turn(int r, int k, int n)
{
    int start = r % n;
    return (r / n) % 2 ? (start + n - 1 - k) % n : (start + k) % n;
}

/* Load the reference library, when BENCH_REF_LIB names one; its connection is
 * BENCH_REF_FD. Returns whether it did. */
static int ref_load(void)
{
    const char *path = getenv("BENCH_REF_LIB");
    if (!path || !*path)
        return 0;
    if (!getenv("BENCH_REF_FD"))
        die("BENCH_REF_LIB without BENCH_REF_FD: run under canned_server");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h)
        die(dlerror());
#define LOOKUP(f, sym) *(void **)&ref.f = ref_sym(h, #sym);
    API(LOOKUP)
#undef LOOKUP
    return 1;
}

/* Point PMI_FD at BENCH_REF_FD (for the reference's init), or back at `saved`. */
static void ref_fd(char *saved, size_t size, int to_ref)
{
    if (to_ref) {
        snprintf(saved, size, "%s", getenv("PMI_FD"));
        setenv("PMI_FD", getenv("BENCH_REF_FD"), 1);
    } else {
        setenv("PMI_FD", saved, 1);
    }
}

/* Load the reference library, when there is one, and run its init on BENCH_REF_FD. */
static void ref_init(void)
{
    if (!ref_load())
        return;
    char ours[32];
    ref_fd(ours, sizeof ours, 1);
    if (client_init(&ref) != OK)
        die("the reference library's init failed");
    ref_fd(ours, sizeof ours, 0);
    have_ref = 1;
}

/* The request the library sends for one call: a line, or a PMI-2 frame. */
static int format_request(char *line, size_t size, int op, const char *key)
{
#ifdef BENCH_PMI2
    char body[152];
    int m = op == PUT       ? snprintf(body, sizeof body, "cmd=kvs-put;key=%s;value=" CARD ";", key)
            : op == BARRIER ? snprintf(body, sizeof body, "cmd=kvs-fence;")
                            : snprintf(body, sizeof body,
                                       "cmd=kvs-get;jobid=" KVS ";srcid=0;key=%s;", key);
    return snprintf(line, size, "%-6d%s", m, body);
#else
    return op == PUT ? snprintf(line, size, "cmd=put kvsname=" KVS " key=%s value=" CARD "\n", key)
           : op == BARRIER ? snprintf(line, size, "cmd=barrier_in\n")
                           : snprintf(line, size, "cmd=get kvsname=" KVS " key=%s\n", key);
#endif
}

/* Keys and raw request lines for one batch, formatted before the clock starts. */
struct batch {
    int n;
    char (*key)[32];
    char (*line)[160];
    size_t *len;
};

static void prepare(struct batch *b, int op, const char *tag, int n)
{
    for (int i = 0; i < n; i++) {
        switch (op) {
        case GET:
            snprintf(b->key[i], 32, "g%s_%d", tag, i);
            break;
        case PUT:
            snprintf(b->key[i], 32, "p%s_%d", tag, i);
            break;
        case MISSING:
            snprintf(b->key[i], 32, "missing%s_%d", tag, i);
            break;
        default:
            snprintf(b->key[i], 32, "cached");
            break;
        }
        int m = format_request(b->line[i], 160, op, b->key[i]);
        b->len[i] = (size_t)m;
    }
    b->n = n;
}

/* ns per operation for one batch by a client library. */
static double run_with(const struct client *c, int op, const struct batch *b)
{
    long long t0 = now_ns();
    for (int i = 0; i < b->n; i++)
        client_op(c, op, b->key[i]);
    return (double)(now_ns() - t0) / b->n;
}

static double run_raw(const struct batch *b)
{
    long long t0 = now_ns();
    for (int i = 0; i < b->n; i++)
        raw_rt(b->line[i], b->len[i]);
    return (double)(now_ns() - t0) / b->n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void alloc_batch(struct batch *b, int n)
{
    b->key = malloc(sizeof *b->key * (size_t)n);
    b->line = malloc(sizeof *b->line * (size_t)n);
    b->len = malloc(sizeof *b->len * (size_t)n);
    if (!b->key || !b->line || !b->len)
        die("out of memory");
}

/* The quartiles and median of v (sorted in place). */
static void spread(double *v, int n, double *q1, double *mid, double *q3)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *q1 = v[n / 4], *q3 = v[(3 * n) / 4];
    *mid = median(v, n);
}

/* One batch of `op` by client c: 0 raw, 1 the library, 2 the reference. */
static double run_client(int c, int op, const struct batch *b)
{
    return c == 0 ? run_raw(b) : run_with(c == 1 ? &lib : &ref, op, b);
}

static int overhead(int rounds, int n)
{
    struct batch b;
    alloc_batch(&b, n);
    ref_init();
    int nclients = 2 + have_ref;
    /* t[c][op][r]: ns per call of client c; the ratios per round. */
    double *t[3][NOPS], *ratio[NOPS], *ref_raw[NOPS], *lib_ref[NOPS];
    for (int op = 0; op < NOPS; op++) {
        for (int c = 0; c < 3; c++)
            t[c][op] = malloc(sizeof(double) * (size_t)rounds);
        ratio[op] = malloc(sizeof(double) * (size_t)rounds);
        ref_raw[op] = malloc(sizeof(double) * (size_t)rounds);
        lib_ref[op] = malloc(sizeof(double) * (size_t)rounds);
        if (!t[0][op] || !t[1][op] || !t[2][op] || !ratio[op] || !ref_raw[op] || !lib_ref[op])
            die("out of memory");
    }
    /* Warm-up: fault in every path, fetch the cached key once. */
    for (int op = 0; op < NOPS; op++) {
        prepare(&b, op, "warm", n < 200 ? n : 200);
        for (int c = 0; c < nclients; c++)
            run_client(c, op, &b);
    }
    for (int r = 0; r < rounds; r++) {
        char tag[16];
        snprintf(tag, sizeof tag, "%d", r);
        for (int op = 0; op < NOPS; op++) {
            prepare(&b, op, tag, n);
            /* Each client goes first, second and last in turn. */
            for (int k = 0; k < nclients; k++) {
                int c = turn(r + op, k, nclients);
                t[c][op][r] = run_client(c, op, &b);
            }
            /* getcached: how many times faster than a round trip; else library/raw. */
            double raw = t[0][op][r], lib = t[1][op][r];
            ratio[op][r] = op == CACHED ? raw / lib : lib / raw;
            if (nclients == 3)
                ref_raw[op][r] = t[2][op][r] / raw, lib_ref[op][r] = lib / t[2][op][r];
        }
    }
    for (int op = 0; op < NOPS; op++) {
        double q1, mid, q3, raw, lib, x, y;
        spread(t[0][op], rounds, &x, &raw, &y);
        spread(t[1][op], rounds, &x, &lib, &y);
        spread(ratio[op], rounds, &q1, &mid, &q3);
        printf("op=%s raw_ns=%.0f lib_ns=%.1f ratio=%.4f ratio_q1=%.4f ratio_q3=%.4f",
               op_name[op], raw, lib, mid, q1, q3);
        if (nclients == 3) {
            double ref;
            spread(t[2][op], rounds, &x, &ref, &y);
            printf(" ref_ns=%.1f", ref);
            spread(ref_raw[op], rounds, &q1, &mid, &q3);
            printf(" ref_ratio=%.4f ref_ratio_q1=%.4f ref_ratio_q3=%.4f", mid, q1, q3);
            spread(lib_ref[op], rounds, &q1, &mid, &q3);
            printf(" lib_ref=%.4f lib_ref_q1=%.4f lib_ref_q3=%.4f", mid, q1, q3);
        }
        printf("\n");
    }
    lib.finalize();
    if (have_ref)
        ref.finalize();
    return 0;
}

/* N operations of one kind after a warm-up of the same kind: for strace -c and for
 * valgrind's heap summary, run at two values of N; the difference is per operation. */
static int count(const char *what, int n)
{
    char key[32];
    int is_raw = strncmp(what, "raw", 3) == 0, is_ref = strncmp(what, "ref", 3) == 0;
    const char *kind = is_raw || is_ref ? what + 3 : what;
    enum op op;
    int missing = 0;
    if (strcmp(kind, "get") == 0)
        op = GET;
    else if (strcmp(kind, "getmissing") == 0)
        op = GET, missing = 1;
    else if (strcmp(kind, "put") == 0)
        op = PUT;
    else if (strcmp(kind, "barrier") == 0)
        op = BARRIER;
    else if (strcmp(kind, "getcached") == 0)
        op = CACHED;
    else
        die("count: OP is get, getmissing, put, barrier, getcached, alone or after raw or ref");
    if (is_ref) {
        ref_init();
        if (!have_ref)
            die("count ref...: BENCH_REF_LIB is not set");
    }
    const char *prefix = missing ? "missing" : op == PUT ? "p" : "g";
    char line[160];
    for (int phase = 0; phase < 2; phase++) {
        int reps = phase == 0 ? 100 : n;
        for (int i = 0; i < reps; i++) {
            if (op == CACHED)
                snprintf(key, sizeof key, "cached");
            else
                snprintf(key, sizeof key, "%s%s%d", prefix, phase ? "" : "w", i);
            if (is_raw) {
                int m = format_request(line, sizeof line, op, key);
                raw_rt(line, (size_t)m);
            } else {
                client_op(is_ref ? &ref : &lib, missing ? MISSING : op, key);
            }
        }
    }
    lib.finalize();
    if (have_ref)
        ref.finalize();
    return 0;
}

#ifndef BENCH_PMI2

/* The request lines the canned server received on one connection (`field` is " lib="
 * or " ref="). */
static long bench_count(const char *field)
{
    static const char q[] = "cmd=bench_count\n";
    raw_rt(q, sizeof q - 1);
    const char *at = strstr(rbuf, field);
    return at ? atol(at + strlen(field)) : -1;
}

/* PMI_Init, cold, and the same two round trips by the raw client; with raw_first the raw
 * client goes first (it then meets the server cold), else after. */
static int init_bench(int raw_first, int use_ref)
{
    static const char init[] = "cmd=init pmi_version=1 pmi_subversion=1\n";
    static const char maxes[] = "cmd=get_maxes\n";
    long long t2 = 0, t3 = 0;
    rawfd = atoi(getenv("BENCH_RAW_FD"));
    /* A process reaches PMI_Init with its heap set up (MPI_Init allocates before it): the
     * first allocation's brk and glibc's tcache key (getrandom) are the process's, not
     * the client's. */
    free(malloc(64));
    const struct client *c = &lib;
    char ours[32];
    if (use_ref) {
        if (!ref_load())
            die("init ref: BENCH_REF_LIB is not set");
        c = &ref;
        ref_fd(ours, sizeof ours, 1);
    }
    if (raw_first) {
        t2 = now_ns();
        raw_rt(init, sizeof init - 1);
        raw_rt(maxes, sizeof maxes - 1);
        t3 = now_ns();
    }
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    long long t0 = now_ns();
    int rc = client_init(c);
    long long t1 = now_ns();
    getrusage(RUSAGE_SELF, &after);
    if (rc != PMI_SUCCESS)
        die("PMI_Init failed");
    long lines = bench_count(use_ref ? " ref=" : " lib=");
    if (!raw_first) {
        t2 = now_ns();
        raw_rt(init, sizeof init - 1);
        raw_rt(maxes, sizeof maxes - 1);
        t3 = now_ns();
    }
    printf("init_ns=%lld init_lines=%ld raw2_ns=%lld init_faults=%ld raw_first=%d client=%s\n",
           t1 - t0, lines, t3 - t2, after.ru_minflt - before.ru_minflt, raw_first,
           use_ref ? "ref" : "lib");
    c->finalize();
    if (use_ref)
        ref_fd(ours, sizeof ours, 0);
    return 0;
}

static int clique_bench(void)
{
    int size, rank, nclique;
    lib_init();
    PMI_Get_size(&size);
    PMI_Get_rank(&rank);
    int *ranks = malloc(sizeof(int) * (size_t)size);
    if (!ranks)
        die("out of memory");
    long long t0 = now_ns();
    if (PMI_Get_clique_size(&nclique) != PMI_SUCCESS)
        die("PMI_Get_clique_size failed");
    if (PMI_Get_clique_ranks(ranks, nclique) != PMI_SUCCESS)
        die("PMI_Get_clique_ranks failed");
    long long t1 = now_ns();
    /* Once cached: the second call. */
    if (PMI_Get_clique_size(&nclique) != PMI_SUCCESS ||
        PMI_Get_clique_ranks(ranks, nclique) != PMI_SUCCESS)
        die("second clique call failed");
    long long t2 = now_ns();
    static const char q[] = "cmd=get kvsname=" KVS " key=PMI_process_mapping\n";
    long long t3 = now_ns();
    raw_rt(q, sizeof q - 1);
    long long t4 = now_ns();
    printf("clique_ns=%lld again_ns=%lld rawget_ns=%lld rank=%d size=%d clique=%d first=%d "
           "last=%d\n",
           t1 - t0, t2 - t1, t4 - t3, rank, size, nclique, ranks[0], ranks[nclique - 1]);
    PMI_Finalize();
    free(ranks);
    return 0;
}

#endif

#ifndef BENCH_PMI2
/* The CPU time (user and system) of the children waited for so far, in ns. */
static long long children_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* What loading a library costs when many processes start at once, as in a job's launch:
 * per batch, `batch` processes of one program spawned together and waited for. */
static int load_bench(int batch, int batches, int nprog, char **progs)
{
    if (batch < 1 || batches < 1 || nprog < 1)
        die("load: a batch size, a batch count and programs are needed");
    for (int k = 0; k < batches; k++)
        for (int j = 0; j < nprog; j++) {
            int p = turn(k, j, nprog);
            char prog[4096], env[4200];
            if ((size_t)snprintf(prog, sizeof prog, "%s", progs[p]) >= sizeof prog)
                die("load: program name too long");
            char *at = strchr(prog, '@');
            if (!at)
                die("load: PROG@DIR expected");
            *at = '\0';
            snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s", at + 1);
            char *envp[] = {env, NULL}, *args[] = {prog, NULL};
            long long before = children_cpu_ns();
            for (int i = 0; i < batch; i++) {
                pid_t pid;
                if (posix_spawn(&pid, prog, NULL, NULL, args, envp) != 0)
                    die("load: cannot start a program");
            }
            for (int i = 0; i < batch; i++) {
                int status;
                if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    die("load: a program failed");
            }
            printf("load prog=%d batch=%d cpu_ns=%lld\n", p, k, (children_cpu_ns() - before) / batch);
        }
    return 0;
}
#endif

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 4 && strcmp(argv[1], "overhead") == 0) {
        lib_init();
        return overhead(atoi(argv[2]), atoi(argv[3]));
    }
    if (argc >= 4 && strcmp(argv[1], "count") == 0) {
        lib_init();
        return count(argv[2], atoi(argv[3]));
    }
#ifdef BENCH_PMI2
    fprintf(stderr, "usage: pmi_bench2 overhead ROUNDS N | count OP N\n");
    return 2;
#else
    if (argc >= 2 && strcmp(argv[1], "init") == 0) {
        int raw_first = 0, use_ref = 0;
        for (int i = 2; i < argc; i++)
            raw_first |= strcmp(argv[i], "raw-first") == 0, use_ref |= strcmp(argv[i], "ref") == 0;
        return init_bench(raw_first, use_ref);
    }
    if (argc >= 2 && strcmp(argv[1], "clique") == 0)
        return clique_bench();
    if (argc >= 5 && strcmp(argv[1], "load") == 0)
        return load_bench(atoi(argv[2]), atoi(argv[3]), argc - 4, argv + 4);
    fprintf(stderr,
            "usage: pmi_bench overhead ROUNDS N | count OP N | init | clique | load B K PROG@DIR...\n");
    return 2;
#endif
}
