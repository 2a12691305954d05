/* MPI_Publish_name + MPI_Comm_accept against MPI_Lookup_name + MPI_Comm_connect between
 * the two halves of one job (the lower half serves, the upper half connects).
 * Usage: pubname [SERVICE]   (needs an even number of ranks, at least 2)
 *
 * The servers' root opens a port and publishes it (PMI_Publish_name to mpiexec); after
 * a barrier over the whole job the clients' root looks it up (PMI_Lookup_name) and the
 * halves connect. Then the roots exchange a message both ways, both groups run an
 * allreduce over the new intercommunicator, and the name is unpublished (a second lookup
 * must then fail). Exit 0 when every rank passed. */
#include "mpit.h"
#include <string.h>

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank = -1, size = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2 || size % 2) {
        fprintf(stderr, "pubname: needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *service = argc > 1 ? argv[1] : "libpmi-mpi-check";
    int server = rank < size / 2;
    snprintf(check_label, sizeof check_label, "pubname %s[%d]", server ? "server" : "client", rank);

    MPI_Comm half, inter;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, server, rank, &half));
    int hrank = -1, hsize = -1;
    MPI_OK(MPI_Comm_rank(half, &hrank));
    MPI_OK(MPI_Comm_size(half, &hsize));

    char port[MPI_MAX_PORT_NAME] = "";
    if (server) {
        if (hrank == 0) {
            MPI_OK(MPI_Open_port(MPI_INFO_NULL, port));
            MPI_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* published */
        MPI_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (hrank == 0) {
            MPI_OK(MPI_Lookup_name(service, MPI_INFO_NULL, port));
            CHECKF(strlen(port) > 0, "empty port name from MPI_Lookup_name");
        }
        MPI_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
    }
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int remote = -1;
    MPI_OK(MPI_Comm_remote_size(inter, &remote));
    CHECKF(remote == size / 2, "remote group of %d", remote);

    /* The roots: server sends, client answers with the message extended. */
    char msg[128] = "";
    if (hrank == 0) {
        if (server) {
            snprintf(msg, sizeof msg, "hello from the server, port %.60s", port);
            MPI_OK(MPI_Send(msg, (int)strlen(msg) + 1, MPI_CHAR, 0, 11, inter));
            char answer[160] = "";
            MPI_OK(MPI_Recv(answer, sizeof answer, MPI_CHAR, 0, 12, inter, MPI_STATUS_IGNORE));
            char want[160];
            snprintf(want, sizeof want, "ack: %s", msg);
            CHECKF(strcmp(answer, want) == 0, "answer '%s'", answer);
        } else {
            MPI_OK(MPI_Recv(msg, sizeof msg, MPI_CHAR, 0, 11, inter, MPI_STATUS_IGNORE));
            CHECKF(strncmp(msg, "hello from the server", 21) == 0, "message '%s'", msg);
            char answer[160];
            snprintf(answer, sizeof answer, "ack: %s", msg);
            MPI_OK(MPI_Send(answer, (int)strlen(answer) + 1, MPI_CHAR, 0, 12, inter));
        }
    }

    /* Every rank over the intercommunicator: each side gets the other side's sum. */
    int mine = server ? 100 * (hrank + 1) : hrank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    int want = server ? hsize * (hsize + 1) / 2 : 100 * hsize * (hsize + 1) / 2;
    CHECKF(sum == want, "intercomm allreduce %d, expected %d", sum, want);
    MPI_OK(MPI_Comm_disconnect(&inter));

    if (server && hrank == 0) {
        MPI_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        MPI_OK(MPI_Close_port(port));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* unpublished */
    if (!server && hrank == 0) {
        char again[MPI_MAX_PORT_NAME] = "";
        int rc = MPI_Lookup_name(service, MPI_INFO_NULL, again);
        CHECKF(rc != MPI_SUCCESS, "lookup after unpublish found '%s'", again);
    }
    MPI_OK(MPI_Comm_free(&half));

    int passed = mpit_all_passed(MPI_COMM_WORLD);
    if (rank == 0)
        printf("pubname: %d servers accepted %d clients through service '%s': %s\n", size / 2,
               size / 2, service, passed ? "ok" : "FAILED");
    MPI_OK(MPI_Finalize());
    return passed ? 0 : 1;
}
