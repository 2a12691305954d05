/* PMI-2 wire probe: finds out what the process manager does with PMI-2 requests the
 * library refuses to send or cannot see through its API (over-long keys and values, a key
 * put twice, a doubled ';', whether a fence waits for everyone, how "not found" is said).
 *
 * It does NOT use libpmi2: it speaks the PMI-2 wire itself on PMI_FD (or PMI_PORT), one
 * framed request, one framed reply, in lock-step, from init to finalize. It sends only
 * commands every PMI-2 server knows (init, fullinit, job-getid, kvs-put, kvs-fence,
 * kvs-get, info-getjobattr, info-getnodeattr, finalize): Hydra 4.0.2 ends the whole job
 * on a command it does not know. The requests whose reply may never come (a get of a key
 * that is not there: MPICH 5.0.2's Hydra across two nodes holds it) come last, each
 * with a deadline; after one goes unanswered the probe says so and stops.
 *
 * Output: "@@conf RANK KIND ID TEXT" lines, as probe.c. */
#define _GNU_SOURCE
#include <time.h>

#include "raw.h"

/* Build one framed command from "cmd=...;key=value;..." text in which ';' inside a value
 * is already doubled, and send it. */
static void send_frame(const char *fmt, ...)
{
    static char out[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + 6, sizeof out - 7, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof out - 7 || n > 999999)
        give_up("request too long");
    char prefix[8];
    snprintf(prefix, sizeof prefix, "%-6d", n);
    memcpy(out, prefix, 6);
    send_all(out, (size_t)n + 6);
}

/* One framed reply into `reply` (without its length), waiting at most `ms`; NULL when
 * none came in time. */
static const char *recv_frame_within(int ms)
{
    for (;;) {
        if (inlen >= 6) {
            char prefix[7];
            memcpy(prefix, inbuf, 6);
            prefix[6] = '\0';
            /* Digits, blank-padded on either side (servers differ). */
            const char *start = prefix + strspn(prefix, " ");
            char *end;
            long len = strtol(start, &end, 10);
            int digits = *start >= '0' && *start <= '9';
            while (*end == ' ')
                end++;
            if (!digits || *end || len < 0 || len > LINE_MAX_BYTES - 6)
                give_up("a reply without a PMI-2 length prefix: \"%.40s\"", inbuf);
            if (inlen >= (size_t)len + 6) {
                memmove(inbuf, inbuf + 6, inlen - 6);
                inlen -= 6;
                return take((size_t)len, 0);
            }
        }
        if (!read_more(ms))
            return NULL;
    }
}

/* The value of `key=` in a framed reply, ";;" undoubled; NULL when absent. */
static const char *field(const char *msg, const char *key)
{
    static char val[LINE_MAX_BYTES + 1];
    size_t k = strlen(key);
    const char *p = msg;
    while (*p) {
        int match = strncmp(p, key, k) == 0 && p[k] == '=';
        const char *v = strchr(p, '=');
        if (!v)
            return NULL;
        size_t n = 0;
        for (v++; *v && !(v[0] == ';' && v[1] != ';'); v++) {
            if (v[0] == ';')
                v++;
            val[n++] = *v;
        }
        val[n] = '\0';
        if (match)
            return val;
        p = *v ? v + 1 : v;
    }
    return NULL;
}

/* Whether `key=TRUE` (field() answers in one static buffer: compare at once). */
static int is_true(const char *msg, const char *key)
{
    const char *v = field(msg, key);
    return v && strcmp(v, "TRUE") == 0;
}

static int rc_of(const char *msg)
{
    const char *rc = field(msg, "rc");
    return rc ? atoi(rc) : 0;
}

/* The reply's cmd= must be `want`: else the probe stops. */
static const char *expect_cmd(const char *r, const char *want)
{
    const char *cmd = field(r, "cmd");
    if (!cmd || strcmp(cmd, want) != 0)
        give_up("expected cmd=%s, got \"%.200s\"", want, r);
    return r;
}

/* Send a request and read its reply, which must come and be `cmd=want`; a request
 * whose reply may never come goes through soft_call. */
static const char *send_request(int ms, const char *want, const char *fmt, va_list ap)
{
    static char out[LINE_MAX_BYTES];
    vsnprintf(out, sizeof out, fmt, ap);
    send_frame("%s", out);
    const char *r = recv_frame_within(ms);
    return r ? expect_cmd(r, want) : NULL;
}

static const char *call(const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *r = send_request(60000, want, fmt, ap);
    va_end(ap);
    if (!r)
        give_up("no reply in 60 s");
    return r;
}

/* A request whose reply may never come: NULL after `ms`. */
static const char *soft_call(int ms, const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *r = send_request(ms, want, fmt, ap);
    va_end(ap);
    return r;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char jobid[1024];

/* The value of a key a peer put, found: polled for up to 20 s, since a fence need not be
 * a barrier. */
static const char *get_polled(const char *key)
{
    static char last[512];
    for (int tries = 0; tries < 1000; tries++) {
        const char *r = call("kvs-get-response", "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;",
                             jobid, key);
        if (rc_of(r) == 0 && is_true(r, "found")) {
            const char *v = field(r, "value");
            if (!v)
                give_up("%s is found but the reply has no value: \"%.200s\"", key, r);
            return v;
        }
        snprintf(last, sizeof last, "%s", r);
        struct timespec pause = {0, 20000000};
        nanosleep(&pause, NULL);
    }
    give_up("%s, put before a fence, is not found 20 s after it: \"%.200s\"", key, last);
    return NULL;
}

int main(void)
{
    const char *fd_env = getenv("PMI_FD"), *port_env = getenv("PMI_PORT");
    const char *pmirank = getenv("PMI_RANK");
    if (fd_env) {
        fd = atoi(fd_env);
        rank = pmirank ? atoi(pmirank) : -1;
    } else if (port_env) {
        connect_tcp(port_env);
        pmirank = getenv("PMI_ID");
    } else {
        emit("SKIP", "probe", "neither PMI_FD nor PMI_PORT: no server to probe");
        return 0;
    }
    if (!pmirank)
        give_up("no PMI_RANK (PMI_FD) or PMI_ID (PMI_PORT)");

    /* The handshake: one PMI-1 style line, then fullinit. */
    const char *hello = "cmd=init pmi_version=2 pmi_subversion=0\n";
    send_all(hello, strlen(hello));
    const char *r = recv_line();
    emit("INFO", "server-version", "response_to_init: \"%s\"", r);
    if (!strstr(r, "cmd=response_to_init") || !strstr(r, "pmi_version=2"))
        give_up("no PMI-2: \"%.200s\"", r);
    const char *slurm_jobid = getenv("PMI_JOBID");
    char jobfield[300] = "";
    if (slurm_jobid)
        snprintf(jobfield, sizeof jobfield, "pmijobid=%s;", slurm_jobid);
    r = call("fullinit-response", "cmd=fullinit;%spmirank=%s;threaded=FALSE;", jobfield,
             pmirank);
    emit("INFO", "fullinit", "\"%s\"", r);
    if (rc_of(r) != 0 || !field(r, "size") || !field(r, "rank"))
        give_up("fullinit refused: \"%.200s\"", r);
    size = atoi(field(r, "size"));
    rank = atoi(field(r, "rank"));
    if (size < 1 || rank < 0 || rank >= size)
        give_up("rank %d of size %d", rank, size);
    if (!field(r, "appnum"))
        emit("DEV", "fullinit-no-appnum", "fullinit-response carries no appnum");
    r = call("job-getid-response", "cmd=job-getid;");
    if (rc_of(r) != 0 || !field(r, "jobid") || !field(r, "jobid")[0])
        give_up("no jobid in \"%.200s\"", r);
    snprintf(jobid, sizeof jobid, "%s", field(r, "jobid"));
    /* The wire text: a command after init may carry a thrid (the client's thread), and
     * its response carries the same one back. */
    r = call("job-getid-response", "cmd=job-getid;thrid=p2-%d;", rank);
    char thrid[32];
    snprintf(thrid, sizeof thrid, "p2-%d", rank);
    if (!field(r, "thrid") || strcmp(field(r, "thrid"), thrid) != 0)
        emit("DEV", "thrid-not-echoed", "job-getid with thrid=%s is answered without it: "
             "\"%.120s\"", thrid, r);

    /* Puts the library would refuse or cannot send: each rank its own keys. */
    char key[128];
    char *longkey = repeat('k', 64 + 8, "");
    snprintf(key, sizeof key, "p2-longkey-%d-", rank);
    memcpy(longkey, key, strlen(key));
    r = call("kvs-put-response", "cmd=kvs-put;key=%s;value=long-key;", longkey);
    int longkey_rc = rc_of(r);
    snprintf(key, sizeof key, "p2-dup-%d", rank);
    call("kvs-put-response", "cmd=kvs-put;key=%s;value=first;", key);
    r = call("kvs-put-response", "cmd=kvs-put;key=%s;value=second;", key);
    int dup_rc = rc_of(r);
    snprintf(key, sizeof key, "p2-semi-%d", rank);
    r = call("kvs-put-response", "cmd=kvs-put;key=%s;value=a;;b;", key);
    int semi_rc = rc_of(r);
    char *longval = repeat('v', 1024 + 16, "");
    snprintf(key, sizeof key, "p2-longval-%d", rank);
    r = call("kvs-put-response", "cmd=kvs-put;key=%s;value=%s;", key, longval);
    int longval_rc = rc_of(r);
    snprintf(key, sizeof key, "p2-ready-%d", rank);
    call("kvs-put-response", "cmd=kvs-put;key=%s;value=yes;", key);

    /* The fence: rank 0 comes 1 s late; a fence that is a barrier holds the others. A
     * fence first, not timed: where it is a barrier, it lines the ranks up (the launch
     * and a busy machine leave them far apart before it). */
    call("kvs-fence-response", "cmd=kvs-fence;");
    if (rank == 0) {
        struct timespec late = {1, 0};
        nanosleep(&late, NULL);
    }
    double t0 = now();
    call("kvs-fence-response", "cmd=kvs-fence;");
    double waited = now() - t0;
    if (rank != 0 && size > 1 && waited < 0.5)
        emit("DEV", "fence-not-barrier", "kvs-fence returned after %.0f ms while rank 0 "
             "entered it 1 s late: a fence does not wait for every process",
             waited * 1e3);

    /* The neighbour's keys (on another node with two simulated nodes). */
    int peer = (rank + 1) % size;
    snprintf(key, sizeof key, "p2-ready-%d", peer);
    get_polled(key);
    snprintf(key, sizeof key, "p2-dup-%d", peer);
    const char *dup = get_polled(key);
    if (dup_rc == 0 && strcmp(dup, "second") == 0)
        emit("DEV", "pmi2-put-overwrites", "a second kvs-put of a key is acknowledged rc=0 "
                                          "and overwrites the first value");
    else if (dup_rc == 0)
        emit("DEV", "pmi2-put-twice-ignored", "a second kvs-put of a key is acknowledged "
                                             "rc=0 but the value stays \"%s\"", dup);
    snprintf(key, sizeof key, "p2-semi-%d", peer);
    const char *semi = semi_rc == 0 ? get_polled(key) : NULL;
    if (semi_rc != 0)
        emit("DEV", "semicolon-refused", "a value with a doubled ';' is refused (rc=%d)",
             semi_rc);
    else if (strcmp(semi, "a") == 0)
        emit("DEV", "semicolon-cut", "a value with a doubled ';' (\"a;;b\" on the wire, "
                                     "\"a;b\" meant) is stored cut at the ';': \"a\"");
    else if (strcmp(semi, "a;b") != 0)
        emit("DEV", "semicolon-mangled", "a value with a doubled ';' (\"a;b\" meant) is "
                                         "read back as \"%s\"", semi);
    if (longval_rc == 0) {
        snprintf(key, sizeof key, "p2-longval-%d", peer);
        int got_len = (int)strlen(get_polled(key));
        if (got_len < 1024 + 16)
            emit("DEV", "pmi2-value-truncated", "a kvs-put with a value of %d bytes "
                 "(PMI2_MAX_VALLEN 1024) is acknowledged rc=0 and stored as its first %d "
                 "bytes", 1024 + 16, got_len);
        else
            emit("DEV", "pmi2-value-long-accepted", "a kvs-put with a value of %d bytes "
                 "(PMI2_MAX_VALLEN 1024) is acknowledged and stored whole", 1024 + 16);
    }

    /* Attributes nobody has: the spec's answer is found=FALSE. */
    r = call("info-getjobattr-response", "cmd=info-getjobattr;key=p2-no-such-attribute;");
    emit("INFO", "missing-attr-reply", "\"%s\"", r);
    if (is_true(r, "found"))
        emit("DEV", "jobattr-unknown-found", "an unknown job attribute is found: \"%.200s\"",
             r);
    r = call("info-getnodeattr-response",
             "cmd=info-getnodeattr;key=p2-no-such-node-attr;wait=FALSE;");
    if (is_true(r, "found"))
        emit("DEV", "nodeattr-unknown-found", "an unknown node attribute is found without "
                                              "waiting: \"%.200s\"", r);
    call("kvs-fence-response", "cmd=kvs-fence;");

    /* Last: gets whose answer may never come. The peer's over-long key, whole; then its
     * first 63 bytes; then a key nobody put. */
    int answered = 1;
    if (longkey_rc == 0) {
        snprintf(key, sizeof key, "p2-longkey-%d-", peer);
        memset(longkey, 'k', 64 + 8); /* this rank's prefix may be longer than the peer's */
        memcpy(longkey, key, strlen(key));
        r = soft_call(10000, "kvs-get-response", "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;",
                      jobid, longkey);
        if (r && is_true(r, "found")) {
            emit("DEV", "pmi2-key-long-accepted", "a kvs-put with a key of %d bytes "
                 "(PMI2_MAX_KEYLEN 64) is acknowledged and stored whole", 64 + 8);
        } else if (r) {
            longkey[63] = '\0';
            r = soft_call(10000, "kvs-get-response", "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;",
                          jobid, longkey);
            if (r && is_true(r, "found"))
                emit("DEV", "pmi2-key-truncated", "a kvs-put with a key of %d bytes "
                     "(PMI2_MAX_KEYLEN 64) is acknowledged rc=0 and stored under its first "
                     "63 bytes", 64 + 8);
            else if (r)
                emit("DEV", "pmi2-key-long-lost", "a kvs-put with a key of %d bytes is "
                     "acknowledged rc=0 but stored under neither that key nor its first 63 "
                     "bytes", 64 + 8);
        }
        answered = r != NULL;
    }
    if (answered) {
        snprintf(key, sizeof key, "p2-never-put-%d", rank);
        r = soft_call(10000, "kvs-get-response", "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;",
                      jobid, key);
        if (r) {
            emit("INFO", "missing-key-reply", "\"%s\"", r);
            if (!field(r, "found") && rc_of(r) != 0)
                emit("DEV", "missing-key-rc-only", "a get of a missing key is answered with "
                     "an error rc and no found=FALSE: \"%.200s\"", r);
            else if (!field(r, "found") || strcmp(field(r, "found"), "FALSE") != 0)
                emit("DEV", "missing-key-found", "a get of a missing key is not answered "
                     "found=FALSE: \"%.200s\"", r);
        }
        answered = r != NULL;
    }
    if (!answered) {
        emit("DEV", "get-missing-waits", "a kvs-get of a key nobody put is not answered in "
                                         "10 s (the server holds it)");
        emit("INFO", "probe-done", "rank %d of %d (a request is pending: no finalize)", rank,
             size);
        /* The others started theirs within a second: let them see it too before this
         * process leaves (a launcher may end the job when one does). */
        struct timespec grace = {3, 0};
        nanosleep(&grace, NULL);
        return 0;
    }
    call("finalize-response", "cmd=finalize;");
    emit("INFO", "probe-done", "rank %d of %d", rank, size);
    free(longkey), free(longval);
    return 0;
}
