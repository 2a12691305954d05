/* MPI-4 sessions over an external libpmi.so.0: no MPI_Init. A session, the process set
 * mpi://WORLD made a group and a communicator (MPICH 5 builds it with
 * PMI_Barrier_group where the library has it), then mpi://SELF the same way (on each, a
 * sum over its ranks and a ring of messages), then a communicator of the even ranks that
 * only they create.
 * Usage: sessions [EXPECTED_SIZE]
 * Exit 0 when every rank passed (MPI-4: MPICH 5 or later). */
#include <string.h>

#define MPIT_ABORT_COMM MPI_COMM_SELF
#include "mpit.h"

/* The communicator of process set pset: its size, and a sum and a ring over it. */
static MPI_Comm from_pset(MPI_Session session, const char *pset, const char *tag, int *size)
{
    MPI_Group group;
    MPI_Comm comm;
    int rank = -1;
    MPI_OK(MPI_Group_from_session_pset(session, pset, &group));
    MPI_OK(MPI_Comm_create_from_group(group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
    MPI_OK(MPI_Group_free(&group));
    MPI_OK(MPI_Comm_size(comm, size));
    MPI_OK(MPI_Comm_rank(comm, &rank));

    long mine = rank + 1, sum = 0, want = (long)*size * (*size + 1) / 2;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm));
    CHECKF(sum == want, "%s: allreduce sum %ld, expected %ld", pset, sum, want);
    int next = (rank + 1) % *size, prev = (rank + *size - 1) % *size, got = -1;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, comm,
                        MPI_STATUS_IGNORE));
    CHECKF(got == prev, "%s: ring got %d from rank %d", pset, got, prev);
    return comm;
}

int main(int argc, char **argv)
{
    MPI_Session session;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));

    /* The process sets the session offers include WORLD and SELF. */
    int npsets = 0, world_seen = 0, self_seen = 0;
    MPI_OK(MPI_Session_get_num_psets(session, MPI_INFO_NULL, &npsets));
    for (int i = 0; i < npsets; i++) {
        char name[256];
        int len = sizeof name;
        MPI_OK(MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, name));
        world_seen |= strcmp(name, "mpi://WORLD") == 0;
        self_seen |= strcmp(name, "mpi://SELF") == 0;
    }
    CHECKF(world_seen && self_seen, "process sets: %d, WORLD %s, SELF %s", npsets,
           world_seen ? "seen" : "missing", self_seen ? "seen" : "missing");

    int size = -1, self_size = -1, rank = -1;
    MPI_Comm world = from_pset(session, "mpi://WORLD", "libpmi.sessions.world", &size);
    MPI_OK(MPI_Comm_rank(world, &rank));
    snprintf(check_label, sizeof check_label, "sessions[%d]", rank);
    if (argc > 1)
        CHECKF(size == atoi(argv[1]), "mpi://WORLD size %d, expected %s", size, argv[1]);
    MPI_Comm self = from_pset(session, "mpi://SELF", "libpmi.sessions.self", &self_size);
    CHECKF(self_size == 1, "mpi://SELF size %d", self_size);
    MPI_OK(MPI_Comm_free(&self));

    /* A communicator of the even ranks alone, made by them only (the odd ones go on). */
    MPI_Group all, evens;
    int neven = (size + 1) / 2, ranks[neven];
    for (int i = 0; i < neven; i++)
        ranks[i] = 2 * i;
    MPI_OK(MPI_Comm_group(world, &all));
    MPI_OK(MPI_Group_incl(all, neven, ranks, &evens));
    if (rank % 2 == 0) {
        MPI_Comm even;
        int even_size = -1;
        MPI_OK(MPI_Comm_create_from_group(evens, "libpmi.sessions.evens", MPI_INFO_NULL,
                                          MPI_ERRORS_RETURN, &even));
        MPI_OK(MPI_Comm_size(even, &even_size));
        long mine = rank, sum = 0, want = (long)neven * (neven - 1);
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, even));
        CHECKF(even_size == neven && sum == want, "even ranks: %d of them, sum %ld (want %d, %ld)",
               even_size, sum, neven, want);
        MPI_OK(MPI_Comm_free(&even));
    }
    MPI_OK(MPI_Group_free(&evens));
    MPI_OK(MPI_Group_free(&all));

    int passed = mpit_all_passed(world);
    if (rank == 0)
        printf("sessions: mpi://WORLD of %d ranks, %d process sets: %s\n", size, npsets,
               passed ? "ok" : "FAILED");
    MPI_OK(MPI_Comm_free(&world));
    MPI_OK(MPI_Session_finalize(&session));
    return passed ? 0 : 1;
}
