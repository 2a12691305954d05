/* MPI_Comm_spawn of children that talk to their parents both ways.
 * Usage: spawn [NCHILDREN [CHILD_EXIT [fail]]]   (run it by its absolute path)
 *
 * The parents (all of MPI_COMM_WORLD) spawn NCHILDREN copies of this program (default 2).
 * Over the intercommunicator: an allreduce (each group gets the other group's sum), then
 * parent rank 0 sends each child a token and each child replies with what it saw: its
 * rank and world size, the token doubled, the allreduce over the children's own world,
 * the intercommunicator allreduce, the parent group's size and MPI_APPNUM. The parents
 * check every reply: Hydra does not pass a spawned child's exit status to mpiexec, so
 * the children's verdict reaches the exit status of mpiexec only through the parents.
 * CHILD_EXIT (default 0) makes the children exit with that status after replying: the
 * way to see that mpiexec ignores it. With "fail" each child reports a failed check: the
 * parents must then exit nonzero (the harness's negative control). */
#include "mpit.h"
#include <string.h>

enum { R_RANK, R_SIZE, R_TOKEN2, R_WORLD_SUM, R_INTER_SUM, R_PARENTS, R_APPNUM, R_FAIL, R_N };

static int child(int argc, char **argv, MPI_Comm parent)
{
    int rank = -1, size = -1, nparents = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    snprintf(check_label, sizeof check_label, "spawn child[%d]", rank);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    MPI_OK(MPI_Comm_remote_size(parent, &nparents));
    int expected = argc > 2 ? atoi(argv[2]) : -1;
    int exit_code = argc > 3 ? atoi(argv[3]) : 0;
    CHECKF(!(argc > 4 && strcmp(argv[4], "fail") == 0), "asked to fail");
    CHECKF(expected < 0 || size == expected, "world size %d, expected %d", size, expected);

    int one = rank + 1, world_sum = 0;
    MPI_OK(MPI_Allreduce(&one, &world_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));

    int inter_sum = 0; /* the parents' (rank+1)*10, summed */
    MPI_OK(MPI_Allreduce(&one, &inter_sum, 1, MPI_INT, MPI_SUM, parent));

    int token = -1;
    MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE));
    CHECKF(token == 1000 * (rank + 1) + 7, "token %d", token);

    int *appnum = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));

    int reply[R_N] = {0};
    reply[R_RANK] = rank;
    reply[R_SIZE] = size;
    reply[R_TOKEN2] = 2 * token;
    reply[R_WORLD_SUM] = world_sum;
    reply[R_INTER_SUM] = inter_sum;
    reply[R_PARENTS] = nparents;
    reply[R_APPNUM] = flag ? *appnum : -1;
    reply[R_FAIL] = check_failures;
    MPI_OK(MPI_Send(reply, R_N, MPI_INT, 0, 2, parent));

    MPI_OK(MPI_Comm_disconnect(&parent));
    MPI_OK(MPI_Finalize());
    return exit_code;
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL)
        return child(argc, argv, parent);

    int rank = -1, size = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    snprintf(check_label, sizeof check_label, "spawn parent[%d]", rank);
    int n = argc > 1 ? atoi(argv[1]) : 2;
    const char *child_exit = argc > 2 ? argv[2] : "0";
    const char *fail = argc > 3 ? argv[3] : NULL;

    char count[16];
    snprintf(count, sizeof count, "%d", n);
    char *child_argv[] = {"child", count, (char *)child_exit, (char *)fail, NULL};
    int errcodes[64];
    if (n < 1 || n > 64) {
        fprintf(stderr, "spawn: NCHILDREN must be 1..64\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm inter;
    MPI_OK(MPI_Comm_spawn(argv[0], child_argv, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                          errcodes));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    for (int i = 0; i < n; i++)
        CHECKF(errcodes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, errcodes[i]);
    int remote = -1;
    MPI_OK(MPI_Comm_remote_size(inter, &remote));
    CHECKF(remote == n, "remote group of %d, expected %d", remote, n);

    int mine = (rank + 1) * 10, inter_sum = 0; /* the children's rank+1, summed */
    MPI_OK(MPI_Allreduce(&mine, &inter_sum, 1, MPI_INT, MPI_SUM, inter));
    CHECKF(inter_sum == n * (n + 1) / 2, "intercomm allreduce %d", inter_sum);

    int good = 0;
    if (rank == 0) {
        for (int i = 0; i < n; i++) {
            int token = 1000 * (i + 1) + 7;
            MPI_OK(MPI_Send(&token, 1, MPI_INT, i, 1, inter));
        }
        for (int i = 0; i < n; i++) {
            int r[R_N];
            MPI_OK(MPI_Recv(r, R_N, MPI_INT, i, 2, inter, MPI_STATUS_IGNORE));
            int want_parents_sum = 10 * size * (size + 1) / 2;
            int ok = r[R_RANK] == i && r[R_SIZE] == n && r[R_TOKEN2] == 2 * (1000 * (i + 1) + 7) &&
                     r[R_WORLD_SUM] == n * (n + 1) / 2 && r[R_INTER_SUM] == want_parents_sum &&
                     r[R_PARENTS] == size && r[R_FAIL] == 0;
            /* MPI_APPNUM: the spawn's command index; Slurm gives no appnum (-1). */
            CHECK_DEV(r[R_APPNUM] == 0, "spawn-appnum-unknown", "child %d's appnum %d", i,
                      r[R_APPNUM]);
            CHECKF(ok,
                  "child %d replied rank %d size %d token*2 %d world sum %d inter sum %d "
                  "parents %d appnum %d failures %d",
                  i, r[R_RANK], r[R_SIZE], r[R_TOKEN2], r[R_WORLD_SUM], r[R_INTER_SUM],
                  r[R_PARENTS], r[R_APPNUM], r[R_FAIL]);
            good += ok;
        }
    }
    MPI_OK(MPI_Comm_disconnect(&inter));
    int passed = mpit_all_passed(MPI_COMM_WORLD);
    if (rank == 0)
        printf("spawn: %d parents spawned %d children; %d/%d replies correct: %s\n", size, n,
               good, n, passed ? "ok" : "FAILED");
    MPI_OK(MPI_Finalize());
    return passed ? 0 : 1;
}
