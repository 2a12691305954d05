/* PMI-1 wire probe: finds out what the process manager does with requests the library
 * refuses to send (over-long keys and values, a key put twice, a foreign kvsname).
 *
 * It does NOT use libpmi: it speaks the PMI-1.1 wire itself on PMI_FD (or PMI_PORT),
 * one request, one reply, in lock-step, from init to finalize, so no library call can
 * interleave with it on the connection. It only sends commands every PMI-1.1 server
 * knows (init, get_maxes, get_my_kvsname, put, barrier_in, get, finalize), and PMI 1.2's
 * group barriers only to a server that answers init with pmi_subversion=2; it gets only
 * from the job's own kvsname, and keeps every line far below 64 KiB: nothing here can
 * kill a Hydra 4.0.2 job (see FIELD-NOTES, "What kills a whole Hydra 4.0.2 job").
 *
 * Output: the same "@@conf RANK KIND ID TEXT" lines as conform.c, with KIND DEV for a
 * deviation and INFO for facts; a probe that cannot finish says so with DEV
 * probe-incomplete (the server misbehaved; the library is not involved). */
#define _GNU_SOURCE
#include "raw.h"

static void send_line(const char *fmt, ...)
{
    static char out[LINE_MAX_BYTES];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, sizeof out - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof out - 2)
        give_up("request too long");
    out[n++] = '\n';
    send_all(out, (size_t)n);
}

/* The value of `key=` in a reply: up to the next space, or with `rest` to the end of
 * the line (a value may legitimately hold spaces). Empty string when absent. */
static const char *field(const char *line, const char *key, int rest)
{
    static char val[LINE_MAX_BYTES + 1];
    size_t k = strlen(key);
    for (const char *p = line; *p;) {
        while (*p == ' ')
            p++;
        if (strncmp(p, key, k) == 0 && p[k] == '=') {
            const char *v = p + k + 1, *end = rest ? v + strlen(v) : strchr(v, ' ');
            if (!end)
                end = v + strlen(v);
            memcpy(val, v, (size_t)(end - v));
            val[end - v] = '\0';
            return val;
        }
        while (*p && *p != ' ')
            p++;
    }
    val[0] = '\0';
    return val;
}

static int has_field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    return strstr(line, pat) != NULL;
}

/* Send the request FMT (one line; the newline is added). */
static void send_request(const char *fmt, va_list ap)
{
    static char out[LINE_MAX_BYTES];
    vsnprintf(out, sizeof out, fmt, ap);
    send_line("%s", out);
}

/* Send a request and read its reply, which must be `cmd=want`. */
static const char *call(const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    send_request(fmt, ap);
    va_end(ap);
    const char *r = recv_line();
    if (strcmp(field(r, "cmd", 0), want) != 0)
        give_up("expected cmd=%s, got \"%.200s\"", want, r);
    return r;
}

/* The same, but waiting at most 20 s: NULL unless the reply came and is `cmd=want`. */
static const char *soft_call(const char *want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    send_request(fmt, ap);
    va_end(ap);
    const char *r = recv_line_within(20000);
    return r && strcmp(field(r, "cmd", 0), want) == 0 ? r : NULL;
}

static void connect_port(const char *port_env)
{
    const char *id = getenv("PMI_ID");
    if (!id)
        give_up("PMI_PORT without PMI_ID");
    connect_tcp(port_env);
    send_line("cmd=initack pmiid=%s", id);
    int acked = 0, got_size = 0, got_rank = 0, got_debug = 0;
    while (!(acked && got_size && got_rank && got_debug)) {
        const char *r = recv_line();
        const char *cmd = field(r, "cmd", 0);
        if (strcmp(cmd, "initack") == 0)
            acked = 1;
        else if (strcmp(cmd, "set") == 0 && has_field(r, "size"))
            size = atoi(field(r, "size", 0)), got_size = 1;
        else if (strcmp(cmd, "set") == 0 && has_field(r, "rank"))
            rank = atoi(field(r, "rank", 0)), got_rank = 1;
        else if (strcmp(cmd, "set") == 0 && has_field(r, "debug"))
            got_debug = 1;
        else
            give_up("unexpected line in the PMI_PORT handshake: \"%.200s\"", r);
    }
}

int main(void)
{
    const char *fd_env = getenv("PMI_FD"), *port_env = getenv("PMI_PORT");
    if (fd_env) {
        fd = atoi(fd_env);
        rank = getenv("PMI_RANK") ? atoi(getenv("PMI_RANK")) : -1;
        size = getenv("PMI_SIZE") ? atoi(getenv("PMI_SIZE")) : -1;
    } else if (port_env) {
        connect_port(port_env);
    } else {
        emit("SKIP", "probe", "neither PMI_FD nor PMI_PORT: no server to probe");
        return 0;
    }
    if (size < 1 || rank < 0 || rank >= size)
        give_up("rank %d of size %d", rank, size);

    /* The handshake, as a PMI-1.1 client. */
    const char *r = call("response_to_init", "cmd=init pmi_version=1 pmi_subversion=1");
    emit("INFO", "server-version", "response_to_init: \"%s\"", r);
    if (strcmp(field(r, "rc", 0), "0") != 0 && has_field(r, "rc"))
        give_up("init refused: \"%.200s\"", r);
    /* A 1.1 client may be answered 1.1 or a later 1.x (PMI 1.2: the server can do more,
     * and says so, as MPICH 5's Hydra does); anything else is a deviation. */
    int pmi12 = 0;
    if (has_field(r, "pmi_version")) {
        /* field() answers in one static buffer: copy the first before the second. */
        char version[32];
        snprintf(version, sizeof version, "%s", field(r, "pmi_version", 0));
        int subversion = atoi(field(r, "pmi_subversion", 0));
        if (strcmp(version, "1") != 0 || subversion < 1)
            emit("DEV", "version-not-1.x", "a PMI-1.1 client is answered pmi_version=%s "
                 "pmi_subversion=%d", version, subversion);
        pmi12 = strcmp(version, "1") == 0 && subversion >= 2;
    }
    r = call("maxes", "cmd=get_maxes");
    int keymax = atoi(field(r, "keylen_max", 0)), valmax = atoi(field(r, "vallen_max", 0));
    if (keymax < 16 || keymax > 8192 || valmax < 64 || valmax > 16384)
        give_up("unusable maxes \"%.200s\" for probing", r);
    r = call("my_kvsname", "cmd=get_my_kvsname");
    char kvs[1024];
    snprintf(kvs, sizeof kvs, "%s", field(r, "kvsname", 0));
    if (!kvs[0])
        give_up("no kvsname in \"%.200s\"", r);

    /* Puts the library would refuse: each rank its own keys (the over-long ones last). */
    char key[128];
    /* Values a server may not keep verbatim, sent as they are (the library refuses those
     * it knows a server would cut: what the server does is found out here). */
    static const struct {
        const char *want, *id, *what;
    } odd[] = {
        {"hello world", "value-space", "a value with a space"},
        {"tab\there", "value-tab", "a value with a tab"},
        {"\xc6\x92lux-\xc3\xa9t\xc3\xa9", "value-utf8", "a UTF-8 value"},
        {"back\\slash", "value-backslash", "a value with a backslash"},
        {"a=b", "value-equals", "a value with '='"},
    };
    const int n_odd = (int)(sizeof odd / sizeof odd[0]);
    for (int i = 0; i < n_odd; i++) {
        snprintf(key, sizeof key, "probe-odd-%d-%d", i, rank);
        call("put_result", "cmd=put kvsname=%s key=%s value=%s", kvs, key, odd[i].want);
    }
    snprintf(key, sizeof key, "probe-dup-%d", rank);
    call("put_result", "cmd=put kvsname=%s key=%s value=first", kvs, key);
    r = call("put_result", "cmd=put kvsname=%s key=%s value=second", kvs, key);
    int dup_rc = atoi(field(r, "rc", 0));

    snprintf(key, sizeof key, "probe-foreign-%d", rank);
    r = call("put_result", "cmd=put kvsname=probe_not_a_kvs_%d key=%s value=foreign", rank,
             key);
    int foreign_rc = atoi(field(r, "rc", 0));

    call("barrier_out", "cmd=barrier_in");

    /* Read the neighbour's keys back (another node with -hosts a:2,b:2). */
    int peer = (rank + 1) % size;
    snprintf(key, sizeof key, "probe-dup-%d", peer);
    r = call("get_result", "cmd=get kvsname=%s key=%s", kvs, key);
    if (has_field(r, "found"))
        emit("DEV", "get-found-field", "get_result carries an extra found= field: \"%.120s\"",
             r);
    const char *dup = field(r, "value", 0);
    if (dup_rc == 0 && strcmp(dup, "second") == 0)
        emit("DEV", "put-overwrites", "a second put of a key is acknowledged rc=0 and "
                                      "overwrites the first value (RFC 13: put once)");
    else if (dup_rc == 0)
        emit("DEV", "put-twice-ignored", "a second put of a key is acknowledged rc=0 but "
                                         "the value stays \"%s\"", dup);

    for (int i = 0; i < n_odd; i++) {
        snprintf(key, sizeof key, "probe-odd-%d-%d", i, peer);
        r = call("get_result", "cmd=get kvsname=%s key=%s", kvs, key);
        int missing = strcmp(field(r, "rc", 0), "0") != 0 && has_field(r, "rc");
        /* (field() answers in one static buffer: the value is asked for last.) */
        const char *got = field(r, "value", 1);
        if (missing)
            emit("DEV", odd[i].id, "%s put verbatim (\"%s\") was not found: \"%.120s\"",
                 odd[i].what, odd[i].want, r);
        else if (strcmp(got, odd[i].want) != 0)
            emit("DEV", odd[i].id, "%s put verbatim (\"%s\") is stored as \"%s\"",
                 odd[i].what, odd[i].want, got);
    }

    snprintf(key, sizeof key, "probe-foreign-%d", peer);
    r = call("get_result", "cmd=get kvsname=%s key=%s", kvs, key);
    if (foreign_rc == 0 && strcmp(field(r, "rc", 0), "0") == 0)
        emit("DEV", "foreign-put-stored", "a put with a foreign kvsname is acknowledged rc=0 "
                                          "and stored in the job's own KVS");
    else if (foreign_rc == 0)
        emit("DEV", "foreign-put-accepted", "a put with a foreign kvsname is acknowledged "
                                            "rc=0");

    snprintf(key, sizeof key, "probe-never-put-%d", rank);
    r = call("get_result", "cmd=get kvsname=%s key=%s", kvs, key);
    emit("INFO", "missing-key-reply", "\"%s\"", r);
    if (strcmp(field(r, "rc", 0), "0") == 0 || !has_field(r, "rc"))
        emit("DEV", "missing-key-rc0", "a get of a missing key is answered without an error "
                                       "rc: \"%.200s\"", r);

    /* PMI 1.2 (MPICH 5's pmi-1.2.txt), where the server says it speaks it: group
     * barriers named WORLD:<tag>, NODE:<tag> and r1,r2,...:<tag>, each answered by
     * barrier_out with that tag; keys put before a group's barrier readable by its other
     * members after it. The pairs are (0,1), (2,3), ...: a last rank without a partner
     * sits that one out (a group of one is not sent: MPICH 5's Hydra asserts on it). */
    if (pmi12) {
        int tags_ok = 1;
        r = call("barrier_out", "cmd=barrier_in group=WORLD:4242");
        tags_ok &= atoi(field(r, "tag", 0)) == 4242;
        r = call("barrier_out", "cmd=barrier_in group=NODE:17");
        tags_ok &= atoi(field(r, "tag", 0)) == 17;
        int partner = rank ^ 1;
        if (partner < size) {
            snprintf(key, sizeof key, "probe-pair-%d", rank);
            call("put_result", "cmd=put kvsname=%s key=%s value=pair-%d", kvs, key, rank);
            int lo = rank < partner ? rank : partner;
            r = call("barrier_out", "cmd=barrier_in group=%d,%d:%d", lo, lo + 1, 100 + lo);
            tags_ok &= atoi(field(r, "tag", 0)) == 100 + lo;
            snprintf(key, sizeof key, "probe-pair-%d", partner);
            r = call("get_result", "cmd=get kvsname=%s key=%s", kvs, key);
            char want[32];
            snprintf(want, sizeof want, "pair-%d", partner);
            if (strcmp(field(r, "value", 0), want) != 0)
                emit("DEV", "group-keys-unseen", "after the barrier of ranks %d and %d, "
                     "the partner's key is not there: \"%.120s\"", lo, lo + 1, r);
        }
        if (!tags_ok)
            emit("DEV", "group-tag-not-echoed", "a group barrier's barrier_out does not "
                 "carry the tag its name gave");
        emit("INFO", "pmi-1.2", "group barriers of the job, the node and pairs answered");
        call("barrier_out", "cmd=barrier_in");
    }

    /* Last, because they may end the connection: a put of a key longer than keylen_max
     * (RFC 13 lets a server close the connection on a protocol error), then of a value
     * longer than vallen_max. Slurm's server reads a request with one 1024-byte read()
     * and takes the rest of a longer line for the next request (alone or with the next
     * one, as the bytes come): from the first put on, every step is allowed 20 s and
     * the right reply, and the first one that fails means the connection ended. */
    call("barrier_out", "cmd=barrier_in");
    char *longkey = repeat('k', keymax + 8, "");
    snprintf(key, sizeof key, "probe-longkey-%d-", rank);
    memcpy(longkey, key, strlen(key));
    r = soft_call("put_result", "cmd=put kvsname=%s key=%s value=long-key-%d", kvs, longkey,
                  rank);
    int longkey_rc = r ? atoi(field(r, "rc", 0)) : -1;
    snprintf(key, sizeof key, "probe-longkey-%d-", peer);
    memset(longkey, 'k', (size_t)keymax + 8); /* this rank's prefix may be longer */
    memcpy(longkey, key, strlen(key));
    longkey[keymax - 1] = '\0'; /* what a server truncating to keylen_max-1 keeps */
    if (!r || !soft_call("barrier_out", "cmd=barrier_in") ||
        !(r = soft_call("get_result", "cmd=get kvsname=%s key=%s", kvs, longkey))) {
        emit("INFO", "key-long-closes", "after a put with a key of %d bytes (keylen_max %d) "
             "the connection no longer answers (RFC 13: a protocol error may close it)",
             keymax + 8, keymax);
        emit("INFO", "probe-done", "rank %d of %d (the connection is unusable: no finalize)",
             rank, size);
        return 0;
    }
    if (longkey_rc == 0 && strcmp(field(r, "rc", 0), "0") == 0)
        emit("DEV", "key-truncated", "a put with a key of %d bytes (keylen_max %d) is "
                                     "acknowledged rc=0 and stored under its first %d bytes",
             keymax + 8, keymax, keymax - 1);
    else if (longkey_rc == 0)
        emit("DEV", "key-long-accepted", "a put with a key of %d bytes (keylen_max %d) is "
                                         "acknowledged rc=0",
             keymax + 8, keymax);

    call("barrier_out", "cmd=barrier_in");
    char *longval = repeat('v', valmax + 16, "");
    snprintf(key, sizeof key, "probe-longval-%d", rank);
    r = soft_call("put_result", "cmd=put kvsname=%s key=%s value=%s", kvs, key, longval);
    int longval_rc = r ? atoi(field(r, "rc", 0)) : -1;
    snprintf(key, sizeof key, "probe-longval-%d", peer);
    if (!r || !soft_call("my_kvsname", "cmd=get_my_kvsname") ||
        !soft_call("barrier_out", "cmd=barrier_in") ||
        !(r = soft_call("get_result", "cmd=get kvsname=%s key=%s", kvs, key))) {
        emit("DEV", "value-long-lost", "a put with a value of %d bytes (vallen_max %d) "
             "breaks the connection: it no longer answers in step (the server cut the "
             "request line)", valmax + 16, valmax);
        emit("INFO", "probe-done", "rank %d of %d (the connection is unusable: no finalize)",
             rank, size);
        return 0;
    }
    int got_len = (int)strlen(field(r, "value", 0));
    if (longval_rc == 0 && strcmp(field(r, "rc", 0), "0") != 0)
        emit("DEV", "value-long-lost", "a put with a value of %d bytes (vallen_max %d) is "
                                       "acknowledged rc=0 but not stored",
             valmax + 16, valmax);
    else if (longval_rc == 0 && got_len < valmax + 16)
        emit("DEV", "value-truncated", "a put with a value of %d bytes (vallen_max %d) is "
                                       "acknowledged rc=0 and stored as its first %d bytes",
             valmax + 16, valmax, got_len);
    else if (longval_rc == 0)
        emit("DEV", "value-long-accepted", "a put with a value of %d bytes (vallen_max %d) is "
                                           "acknowledged and stored whole",
             valmax + 16, valmax);

    call("barrier_out", "cmd=barrier_in");
    call("finalize_ack", "cmd=finalize");
    emit("INFO", "probe-done", "rank %d of %d", rank, size);
    free(longkey), free(longval);
    return 0;
}
