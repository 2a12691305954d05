/* MPI_Init and MPI_Allreduce under an external libpmi.so.0.
 * Usage: allreduce [EXPECTED_SIZE [EXPECTED_LOCAL_SIZE]]
 * Checks MPI_Comm_size (against EXPECTED_SIZE), the sum of rank+1 over all ranks, a
 * ring of point-to-point messages (every rank's business card is used), and the size of
 * this node's shared-memory communicator (against EXPECTED_LOCAL_SIZE: MPICH derives it
 * from PMI_process_mapping). Exit 0 when every rank passed. */
#include "mpit.h"

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank = -1, size = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    snprintf(check_label, sizeof check_label, "allreduce[%d]", rank);

    if (argc > 1)
        CHECKF(size == atoi(argv[1]), "MPI_Comm_size %d, expected %s", size, argv[1]);
    CHECKF(rank >= 0 && rank < size, "rank %d of %d", rank, size);

    long mine = rank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    long want = (long)size * (size + 1) / 2;
    CHECKF(sum == want, "allreduce sum %ld, expected %ld", sum, want);

    /* A ring: each rank sends its rank to the next and receives from the previous. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    MPI_OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECKF(got == prev, "ring: got %d from rank %d", got, prev);

    MPI_Comm node;
    int local = -1;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_size(node, &local));
    if (argc > 2)
        CHECKF(local == atoi(argv[2]), "ranks on my node %d, expected %s", local, argv[2]);
    MPI_OK(MPI_Comm_free(&node));

    int universe_flag = 0, *universe = NULL;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &universe_flag));

    int passed = mpit_all_passed(MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce: %d ranks, sum %ld (want %ld), %d on rank 0's node, universe %d: %s\n",
               size, sum, want, local, universe_flag ? *universe : -1, passed ? "ok" : "FAILED");
    MPI_OK(MPI_Finalize());
    return passed ? 0 : 1;
}
