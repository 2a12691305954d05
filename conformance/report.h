/* The report line both conformance programs print: "@@conf WHO KIND ID TEXT", with
 * newlines in TEXT flattened, written with one write() (retried on EINTR and short
 * writes) so that lines from several processes never interleave. run.sh matches the
 * marker anywhere in a line, so launcher prefixes (srun --label) do not matter. */
#ifndef CONF_REPORT_H
#define CONF_REPORT_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void report_line(const char *who, const char *kind, const char *id, const char *fmt,
                        va_list ap)
{
    char line[3072];
    int n = snprintf(line, sizeof line, "@@conf %s %s %s ", who, kind, id);
    if (n < 0 || (size_t)n >= sizeof line - 1)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = strlen(line);
    for (size_t i = 0; i < len; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[len++] = '\n';
    for (size_t off = 0; off < len;) {
        ssize_t w = write(1, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

#endif
