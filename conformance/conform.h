/* What the two conformance programs share (conform.c through libpmi.so.0, conform2.c
 * through libpmi2.so.0): the verdict lines and the RFC 13 process mapping. Each process
 * prints "@@conf WHO KIND ID TEXT" lines in single writes; conformance/run.sh gathers
 * them into the report. */
#ifndef CONFORM_H
#define CONFORM_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../c-tests/check.h"

/* Who this process is: its rank and size, and whether it is a spawned child. */
static int g_rank = -1, g_size = -1, g_child;

/* ---- output ------------------------------------------------------------------------ */

static void emit(const char *kind, const char *id, const char *fmt, ...)
{
    char who[32];
    snprintf(who, sizeof who, "%s%d", g_child ? "c" : "", g_rank);
    va_list ap;
    va_start(ap, fmt);
    check_report(who, kind, id, fmt, ap);
    va_end(ap);
}

/* One test: its first failed check is the reason given. */
struct test {
    const char *id;
    int failed;
    char why[512];
};

static void fail_(struct test *t, const char *fmt, ...)
{
    if (t->failed++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

#define EXPECT(t, cond, ...)                                                             \
    do {                                                                                 \
        if (!(cond))                                                                     \
            fail_((t), __VA_ARGS__);                                                     \
    } while (0)
/* A call that must return the code given. */
#define EXPECT_RC(t, call, want)                                                         \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ != (want))                                                               \
            fail_((t), "%s returned %d, expected %s (%d)", #call, rc_, #want, (int)(want)); \
    } while (0)

/* CONFORMANCE_SKIP (comma-separated) names what is not run: its text where it names
 * `what`, else NULL. */
static const char *conformance_skips(const char *what)
{
    const char *skip = getenv("CONFORMANCE_SKIP");
    return skip && strstr(skip, what) ? skip : NULL;
}

/* A call the library must refuse before anything is sent: a NULL pointer, a key or a
 * value the wire cannot carry, a foreign kvsname. CONFORMANCE_SKIP=refusals leaves these
 * checks out, for a client that does not refuse them and so crashes or sends them on,
 * which may end the job (MPICH 5's own client, where the kit runs it as a reference:
 * PMI_Init(NULL) crashes, and a key with a space ends MPICH 5's Hydra's proxy). */
static int refusals_skipped(void)
{
    return conformance_skips("refusals") != NULL;
}

/* A call that some clients lack (weak in the programs), and whether this one has it. */
struct call {
    const char *name;
    int present;
};

/* The report's "left out" lines: the calls this library lacks (their checks are not
 * made) and the refusals, when skipped. */
static void report_left_out(const struct call *calls, int n)
{
    char missing[512] = "";
    for (int i = 0; i < n; i++)
        if (!calls[i].present && strlen(missing) + strlen(calls[i].name) + 2 < sizeof missing)
            strcat(strcat(missing, missing[0] ? " " : ""), calls[i].name);
    if (missing[0])
        emit("INFO", "missing-calls", "%s", missing);
    if (refusals_skipped())
        emit("INFO", "refusals", "the calls that must be refused (CONFORMANCE_SKIP=%s)",
             getenv("CONFORMANCE_SKIP"));
}

#define EXPECT_REFUSED(t, call, want)                                                    \
    do {                                                                                 \
        if (!refusals_skipped())                                                        \
            EXPECT_RC(t, call, want);                                                    \
    } while (0)

static void verdict(struct test *t, const char *what)
{
    if (t->failed)
        emit("FAIL", t->id, "%s -- %s", what, t->why);
    else
        emit("PASS", t->id, "%s", what);
}

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* The clique implied by an RFC 13 PMI_process_mapping (also MPICH 4.1's bare node ids and
 * [..]xK repeat groups). Returns the number of ranks on rank `me`'s node written to
 * `out`, or -1 if the mapping does not parse. */
struct block {
    long start, nnodes, ppn;
};

static int parse_items(const char **p, struct block *b, int max, int n);

static int parse_item(const char **p, struct block *b, int max, int n)
{
    const char *s = *p;
    if (*s == '(') {
        long v[3];
        s++;
        for (int i = 0; i < 3; i++) {
            char *end;
            v[i] = strtol(s, &end, 10);
            if (end == s || v[i] < 0)
                return -1;
            s = end;
            if (*s != (i < 2 ? ',' : ')'))
                return -1;
            s++;
        }
        if (n >= max || v[1] < 1 || v[2] < 1)
            return -1;
        b[n].start = v[0], b[n].nnodes = v[1], b[n].ppn = v[2];
        *p = s;
        return n + 1;
    }
    if (*s == '[') {
        s++;
        int first = n;
        n = parse_items(&s, b, max, n);
        if (n < 0 || *s != ']' || s[1] != 'x')
            return -1;
        s += 2;
        char *end;
        long k = strtol(s, &end, 10);
        if (end == s || k < 1)
            return -1;
        s = end;
        int len = n - first;
        for (long r = 1; r < k; r++)
            for (int i = 0; i < len; i++) {
                if (n >= max)
                    return -1;
                b[n++] = b[first + i];
            }
        *p = s;
        return n;
    }
    char *end;
    long id = strtol(s, &end, 10);
    if (end == s || id < 0 || n >= max)
        return -1;
    b[n].start = id, b[n].nnodes = 1, b[n].ppn = 1;
    *p = end;
    return n + 1;
}

static int parse_items(const char **p, struct block *b, int max, int n)
{
    n = parse_item(p, b, max, n);
    while (n >= 0 && **p == ',') {
        (*p)++;
        n = parse_item(p, b, max, n);
    }
    return n;
}

static int mapping_clique(const char *map, int me, int size, int *out)
{
    struct block b[256];
    const char *p = map;
    while (*p == ' ')
        p++;
    if (strncmp(p, "(vector,", 8) != 0)
        return -1;
    p += 8;
    int n = parse_items(&p, b, 256, 0);
    if (n < 1 || *p != ')')
        return -1;
    long *node = malloc(sizeof(long) * size);
    int placed = 0;
    while (placed < size)
        for (int i = 0; i < n && placed < size; i++)
            for (long j = 0; j < b[i].nnodes && placed < size; j++)
                for (long k = 0; k < b[i].ppn && placed < size; k++)
                    node[placed++] = b[i].start + j;
    int count = 0;
    for (int r = 0; r < size; r++)
        if (node[r] == node[me])
            out[count++] = r;
    free(node);
    return count;
}

/* Whether the kit's spawn test runs: not skipped by CONFORMANCE_SKIP, and this
 * program's path found (into `self`, PATH_MAX bytes); else the SKIP line says why. */
static int spawn_may_run(char *self)
{
    const char *skip = conformance_skips("spawn");
    if (skip) {
        emit("SKIP", "spawn", "not run: CONFORMANCE_SKIP=%s", skip);
        return 0;
    }
    if (!realpath("/proc/self/exe", self)) {
        emit("SKIP", "spawn", "cannot find this program's path");
        return 0;
    }
    return 1;
}

#endif
