/* What the two raw wire probes share (probe.c speaks PMI-1.1, probe2.c PMI-2): the
 * connection to the server on PMI_FD or PMI_PORT, lock-step reads with a deadline, and
 * the verdict lines. Neither probe uses any libpmi. */
#ifndef RAW_H
#define RAW_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../c-tests/check.h"

#define LINE_MAX_BYTES 65536

static int fd = -1, rank = -1, size = -1;
static char inbuf[LINE_MAX_BYTES + 1];
static size_t inlen;
static char reply[LINE_MAX_BYTES + 1];

static void emit(const char *kind, const char *id, const char *fmt, ...)
{
    char who[32];
    snprintf(who, sizeof who, "p%d", rank);
    va_list ap;
    va_start(ap, fmt);
    check_report(who, kind, id, fmt, ap);
    va_end(ap);
}

/* The probe cannot go on: say why and leave. Exiting without finalize makes Hydra end
 * the job, which is what should happen when the wire is broken anyway. */
static void give_up(const char *fmt, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    emit("DEV", "probe-incomplete", "the raw wire probe stopped: %s", why);
    exit(4);
}

static void send_all(const char *out, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, out + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            give_up("write: %s", strerror(errno));
        off += (size_t)w;
    }
}

/* Read what the server sent into inbuf, waiting at most `ms`: 0 when nothing came. */
static int read_more(int ms)
{
    if (inlen >= LINE_MAX_BYTES)
        give_up("a reply longer than 64 KiB");
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return 0;
        ssize_t got = read(fd, inbuf + inlen, LINE_MAX_BYTES - inlen);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            give_up("the server closed the connection");
        inlen += (size_t)got;
        return 1;
    }
}

/* Move the first n bytes of inbuf into `reply`, NUL-terminated, and drop `skip` more. */
static const char *take(size_t n, size_t skip)
{
    memcpy(reply, inbuf, n);
    reply[n] = '\0';
    memmove(inbuf, inbuf + n + skip, inlen - n - skip);
    inlen -= n + skip;
    return reply;
}

/* One reply line into `reply` (without the newline), waiting at most `ms`; NULL when
 * none came in time. */
static const char *recv_line_within(int ms)
{
    for (;;) {
        char *nl = memchr(inbuf, '\n', inlen);
        if (nl) {
            size_t n = (size_t)(nl - inbuf);
            take(n, 1);
            if (n > 0 && reply[n - 1] == '\r')
                reply[n - 1] = '\0';
            return reply;
        }
        if (!read_more(ms))
            return NULL;
    }
}

static const char *recv_line(void)
{
    const char *r = recv_line_within(60000);
    if (!r)
        give_up("no reply in 60 s");
    return r;
}

/* Connect to PMI_PORT (host:port, [v6]:port) by TCP. */
static void connect_tcp(const char *port_env)
{
    char host[512];
    const char *colon = strrchr(port_env, ':');
    if (!colon || (size_t)(colon - port_env) >= sizeof host)
        give_up("PMI_PORT=\"%s\" unusable", port_env);
    memcpy(host, port_env, (size_t)(colon - port_env));
    host[colon - port_env] = '\0';
    if (host[0] == '[') {
        memmove(host, host + 1, strlen(host));
        host[strcspn(host, "]")] = '\0';
    }
    struct addrinfo hints, *res, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        give_up("cannot resolve PMI_PORT %s", port_env);
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        give_up("cannot connect to PMI_PORT %s", port_env);
}

/* n bytes of c, NUL-terminated, starting with `prefix` (malloc'd). */
static char *repeat(char c, int n, const char *prefix)
{
    char *s = malloc((size_t)n + 1);
    if (!s)
        give_up("out of memory");
    memset(s, c, (size_t)n);
    s[n] = '\0';
    memcpy(s, prefix, strlen(prefix) < (size_t)n ? strlen(prefix) : (size_t)n);
    return s;
}

#endif
