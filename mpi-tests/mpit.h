/* Shared helpers for the MPI programs of `make mpi-check`. Each program's exit status
 * is its verdict: 0 when every check held on every rank, 1 otherwise. */
#ifndef MPIT_H
#define MPIT_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Count a failed check and say which one, with this process's label. */
static int mpit_failures;
static char mpit_label[64] = "?";

/* One line, written at once, so that lines from several processes do not interleave. */
static void mpit_fail(const char *cond, const char *file, int line, const char *fmt, ...)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "%s: FAILED %s (%s:%d): ", mpit_label, cond, file, line);
    if (n < 0 || n >= (int)sizeof buf - 2)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", buf);
    mpit_failures++;
}

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            mpit_fail(#cond, __FILE__, __LINE__, __VA_ARGS__);                \
    } while (0)

/* An MPI call that must succeed (the error handler is set to return). */
#define MPI_OK(call)                                                          \
    do {                                                                      \
        int mpit_rc_ = (call);                                                \
        if (mpit_rc_ != MPI_SUCCESS) {                                        \
            char mpit_msg_[MPI_MAX_ERROR_STRING];                             \
            int mpit_len_ = 0;                                                \
            MPI_Error_string(mpit_rc_, mpit_msg_, &mpit_len_);                \
            fprintf(stderr, "%s: %s failed (%s:%d): %s\n", mpit_label, #call, \
                    __FILE__, __LINE__, mpit_msg_);                           \
            MPI_Abort(MPI_COMM_WORLD, 2);                                     \
        }                                                                     \
    } while (0)

/* Whether every rank of comm passed: 1 on all ranks when every rank's count is 0. */
static int mpit_all_passed(MPI_Comm comm)
{
    int mine = mpit_failures == 0, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    return all;
}

#endif
