/* A canned PMI-1 server for the client benchmarks: it answers every request at once
 * with Hydra 4.0.2's verbatim reply, so a round trip costs only the two processes and
 * the socket, never a process manager.
 *
 *   canned_server [-s CPU] [-c CPU] -- PROGRAM ARGS...
 *
 * Makes three socketpairs, forks, and in the child sets PMI_FD (the library's
 * connection), BENCH_RAW_FD (the raw client's connection), BENCH_REF_FD (a reference
 * client library's: MPICH's simple client), PMI_RANK/PMI_SIZE (0 and 1
 * unless already set), pins itself to CPU -c and execs PROGRAM (which may be strace or
 * valgrind wrapping the client, so the server itself is never traced). The parent pins
 * itself to CPU -s and serves both connections until both close; it exits with the
 * child's status. All three connections get the same answers.
 *
 * Environment: BENCH_VALUE is the value every get answers (default: a 64-byte business
 * card); BENCH_MAPPING the value of PMI_process_mapping (default (vector,(0,1,1))).
 * Keys starting with "missing" are answered as Hydra answers a missing key.
 * `cmd=bench_count` (on any connection) answers `cmd=bench_count lib=L raw=R ref=F`:
 * the request lines received so far on each connection, this one excluded.
 *
 * A connection whose first line is `cmd=init pmi_version=2 ...` speaks PMI-2 from then
 * on: framed requests, answered with the framed replies Hydra 4.0.2 gives (the value
 * with every ';' made a ','). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define BUFSZ 65536

struct peer {
    int fd;
    char buf[BUFSZ];
    size_t len;
    long lines;
    int open;
    int framed; /* PMI-2 after its init line */
};

#define NPEERS 3
static struct peer peers[NPEERS]; /* the library (PMI_FD), the raw client, the reference */
static const char *value, *mapping;
static char value2[BUFSZ]; /* value for PMI-2: no ';' */
static char out[BUFSZ + 256];

static void pin(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("canned_server: sched_setaffinity (continuing unpinned)");
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* the client is gone; its read will tell it */
        }
        p += w, n -= (size_t)w;
    }
}

static int starts(const char *line, const char *prefix)
{
    return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* One request line (NUL-terminated, newline removed) → one reply in `out`. */
static size_t answer(struct peer *p, const char *line)
{
    if (starts(line, "cmd=get ")) {
        const char *key = strstr(line, " key=");
        key = key ? key + 5 : "";
        size_t klen = strcspn(key, " ");
        if (klen == 19 && starts(key, "PMI_process_mapping"))
            return (size_t)sprintf(out, "cmd=get_result rc=0 msg=success value=%s\n", mapping);
        if (starts(key, "missing"))
            return (size_t)sprintf(out,
                                   "cmd=get_result rc=-1 msg=key_%.*s_not_found value=unknown\n",
                                   (int)klen, key);
        return (size_t)sprintf(out, "cmd=get_result rc=0 msg=success value=%s\n", value);
    }
    if (starts(line, "cmd=put "))
        return (size_t)sprintf(out, "cmd=put_result rc=0 msg=success\n");
    if (strcmp(line, "cmd=barrier_in") == 0)
        return (size_t)sprintf(out, "cmd=barrier_out\n");
    if (starts(line, "cmd=init pmi_version=2")) {
        p->framed = 1;
        return (size_t)sprintf(out, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
    }
    if (starts(line, "cmd=init "))
        return (size_t)sprintf(out, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    if (strcmp(line, "cmd=get_maxes") == 0)
        return (size_t)sprintf(out, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    if (strcmp(line, "cmd=get_my_kvsname") == 0)
        return (size_t)sprintf(out, "cmd=my_kvsname kvsname=kvs_bench_0\n");
    if (strcmp(line, "cmd=get_universe_size") == 0)
        return (size_t)sprintf(out, "cmd=universe_size size=-1\n");
    if (strcmp(line, "cmd=get_appnum") == 0)
        return (size_t)sprintf(out, "cmd=appnum appnum=0\n");
    if (strcmp(line, "cmd=finalize") == 0)
        return (size_t)sprintf(out, "cmd=finalize_ack\n");
    if (strcmp(line, "cmd=bench_count") == 0) {
        p->lines--; /* not counted */
        return (size_t)sprintf(out, "cmd=bench_count lib=%ld raw=%ld ref=%ld\n", peers[0].lines,
                               peers[1].lines, peers[2].lines);
    }
    fprintf(stderr, "canned_server: no canned answer for \"%.200s\"\n", line);
    return (size_t)sprintf(out, "cmd=unknown rc=1 msg=no_canned_answer\n");
}

/* The value of `key=` in a PMI-2 frame's text (no ';;' in the canned traffic). */
static const char *field2(const char *text, const char *key, size_t *len)
{
    size_t k = strlen(key);
    for (const char *f = text; *f; f += strcspn(f, ";") + (f[strcspn(f, ";")] != 0)) {
        if (strncmp(f, key, k) == 0 && f[k] == '=') {
            *len = strcspn(f + k + 1, ";");
            return f + k + 1;
        }
    }
    *len = 0;
    return "";
}

/* One PMI-2 frame's text (NUL-terminated) → one framed reply in `out`. */
static size_t answer2(const char *text)
{
    char body[BUFSZ + 128];
    size_t clen, klen;
    const char *cmd = field2(text, "cmd", &clen), *key = field2(text, "key", &klen);
#define IS(name) (clen == strlen(name) && strncmp(cmd, name, clen) == 0)
    int n;
    if (IS("kvs-get") && klen >= 7 && starts(key, "missing"))
        n = snprintf(body, sizeof body, "cmd=kvs-get-response;found=FALSE;rc=0;");
    else if (IS("kvs-get"))
        n = snprintf(body, sizeof body, "cmd=kvs-get-response;found=TRUE;value=%s;rc=0;", value2);
    else if (IS("kvs-put"))
        n = snprintf(body, sizeof body, "cmd=kvs-put-response;rc=0;");
    else if (IS("kvs-fence"))
        n = snprintf(body, sizeof body, "cmd=kvs-fence-response;rc=0;");
    else if (IS("fullinit"))
        n = snprintf(body, sizeof body, "cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=0;size=1;"
                          "appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;");
    else if (IS("job-getid"))
        n = snprintf(body, sizeof body, "cmd=job-getid-response;jobid=kvs_bench_0;rc=0;");
    else if (IS("info-getjobattr") && klen == 19 && starts(key, "PMI_process_mapping"))
        n = snprintf(body, sizeof body, "cmd=info-getjobattr-response;found=TRUE;value=%s;rc=0;", mapping);
    else if (IS("info-getjobattr") || IS("info-getnodeattr"))
        n = snprintf(body, sizeof body, "cmd=%.*s-response;found=FALSE;rc=0;", (int)clen, cmd);
    else if (IS("finalize"))
        n = snprintf(body, sizeof body, "cmd=finalize-response;rc=0;");
    else {
        fprintf(stderr, "canned_server: no canned answer for \"%.200s\"\n", text);
        n = snprintf(body, sizeof body, "cmd=%.*s-response;rc=1;", (int)clen, cmd);
    }
#undef IS
    return (size_t)sprintf(out, "%-6d%s", n, body);
}

/* Answer every whole PMI-2 frame at the front of p->buf; returns the bytes used. */
static size_t serve_frames(struct peer *p)
{
    size_t used = 0;
    while (p->len - used >= 6) {
        char prefix[7], *end;
        memcpy(prefix, p->buf + used, 6);
        prefix[6] = 0;
        long len = strtol(prefix, &end, 10);
        if (end == prefix || len < 0 || len > BUFSZ - 7) {
            fprintf(stderr, "canned_server: a frame without a usable length: \"%s\"\n", prefix);
            return p->len; /* dropped: the client will see no reply */
        }
        size_t n = (size_t)len;
        if (p->len - used < 6 + n)
            break;
        char save = p->buf[used + 6 + n];
        p->buf[used + 6 + n] = 0;
        p->lines++;
        size_t m = answer2(p->buf + used + 6);
        p->buf[used + 6 + n] = save;
        write_all(p->fd, out, m);
        used += 6 + n;
    }
    return used;
}

/* Read what is there and answer every whole line (or frame). */
static void serve(struct peer *p)
{
    ssize_t n = read(p->fd, p->buf + p->len, BUFSZ - 1 - p->len);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        close(p->fd);
        p->open = 0;
        return;
    }
    p->len += (size_t)n;
    char *start = p->buf, *nl;
    while (!p->framed &&
           (nl = memchr(start, '\n', p->len - (size_t)(start - p->buf))) != NULL) {
        *nl = 0;
        p->lines++;
        size_t m = answer(p, start);
        write_all(p->fd, out, m);
        start = nl + 1;
    }
    p->len -= (size_t)(start - p->buf);
    memmove(p->buf, start, p->len);
    if (p->framed) {
        size_t used = serve_frames(p);
        p->len -= used;
        memmove(p->buf, p->buf + used, p->len);
    }
    if (p->len == BUFSZ - 1) {
        fprintf(stderr, "canned_server: request line too long\n");
        p->len = 0;
    }
}

int main(int argc, char **argv)
{
    int server_cpu = -1, client_cpu = -1, opt;
    while ((opt = getopt(argc, argv, "+s:c:")) != -1) {
        if (opt == 's')
            server_cpu = atoi(optarg);
        else if (opt == 'c')
            client_cpu = atoi(optarg);
        else
            return 2;
    }
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc) {
        fprintf(stderr, "usage: canned_server [-s CPU] [-c CPU] -- PROGRAM ARGS...\n");
        return 2;
    }
    value = getenv("BENCH_VALUE");
    if (!value)
        value = "tcp://10.0.0.1:40001;shm:/dev/shm/mpich-bench-0;pid-slot=00000007";
    snprintf(value2, sizeof value2, "%s", value);
    for (char *c = value2; *c; c++)
        if (*c == ';')
            *c = ',';
    mapping = getenv("BENCH_MAPPING");
    if (!mapping)
        mapping = "(vector,(0,1,1))";
    if (strlen(value) > 4096 || strlen(mapping) > 4096) {
        fprintf(stderr, "canned_server: BENCH_VALUE and BENCH_MAPPING hold at most 4096 bytes\n");
        return 2;
    }

    int sp[NPEERS][2];
    for (int i = 0; i < NPEERS; i++)
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp[i])) {
            perror("canned_server: socketpair");
            return 1;
        }
    signal(SIGPIPE, SIG_IGN);
    pid_t child = fork();
    if (child < 0) {
        perror("canned_server: fork");
        return 1;
    }
    if (child == 0) {
        static const char *names[NPEERS] = {"PMI_FD", "BENCH_RAW_FD", "BENCH_REF_FD"};
        char num[32];
        signal(SIGPIPE, SIG_DFL);
        for (int i = 0; i < NPEERS; i++) {
            close(sp[i][0]);
            snprintf(num, sizeof num, "%d", sp[i][1]);
            setenv(names[i], num, 1);
        }
        setenv("PMI_RANK", "0", 0);
        setenv("PMI_SIZE", "1", 0);
        pin(client_cpu);
        execvp(argv[optind], argv + optind);
        perror("canned_server: exec");
        _exit(127);
    }
    pin(server_cpu);
    for (int i = 0; i < NPEERS; i++) {
        close(sp[i][1]);
        peers[i].fd = sp[i][0];
        peers[i].open = 1;
    }
    while (peers[0].open || peers[1].open || peers[2].open) {
        struct pollfd pfd[NPEERS];
        for (int i = 0; i < NPEERS; i++) {
            pfd[i].fd = peers[i].open ? peers[i].fd : -1;
            pfd[i].events = POLLIN;
            pfd[i].revents = 0;
        }
        if (poll(pfd, NPEERS, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror("canned_server: poll");
            break;
        }
        for (int i = 0; i < NPEERS; i++)
            if (pfd[i].revents)
                serve(&peers[i]);
    }
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
