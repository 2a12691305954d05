/* The MPI programs of `make mpi-check` use the one check header (CHECKF, check_label,
 * check_failures); this adds what only MPI needs. Each program's exit status is its
 * verdict: 0 when every check held on every rank, 1 otherwise. */
#ifndef MPIT_H
#define MPIT_H

#include <mpi.h>

#include "../c-tests/check.h"

/* The communicator a failed MPI call aborts (a sessions program has no MPI_COMM_WORLD). */
#ifndef MPIT_ABORT_COMM
#define MPIT_ABORT_COMM MPI_COMM_WORLD
#endif

/* An MPI call that must succeed (the error handler is set to return). */
#define MPI_OK(call)                                                          \
    do {                                                                      \
        int mpit_rc_ = (call);                                                \
        if (mpit_rc_ != MPI_SUCCESS) {                                        \
            char mpit_msg_[MPI_MAX_ERROR_STRING];                             \
            int mpit_len_ = 0;                                                \
            MPI_Error_string(mpit_rc_, mpit_msg_, &mpit_len_);                \
            check_fail(__FILE__, __LINE__, "%s failed: %s", #call, mpit_msg_); \
            MPI_Abort(MPIT_ABORT_COMM, 2);                                    \
        }                                                                     \
    } while (0)

/* Whether every rank of comm passed: 1 on all ranks when every rank's count is 0. */
static inline int mpit_all_passed(MPI_Comm comm)
{
    int mine = check_failures == 0, all = 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    return all;
}

#endif
