/* MPI_Lookup_name of a published name longer than MPI_MAX_PORT_NAME.
 * Usage: longport [LENGTH]   (one rank is enough; default LENGTH 600)
 *
 * MPI_Lookup_name's port argument is a caller's buffer of MPI_MAX_PORT_NAME (256) bytes,
 * and MPICH hands it straight to PMI_Lookup_name, which has no length argument. MPICH's
 * own PMI client writes at most MPI_MAX_PORT_NAME bytes there (it truncates). This
 * program publishes a LENGTH-byte name (MPI_Publish_name does not check the length),
 * looks it up into a 256-byte buffer followed by guard bytes, and checks that nothing
 * was written past the buffer. Exit 0 when the guard is intact. With this library the
 * publish itself is refused (ports are at most 255 bytes); before that fix the lookup
 * wrote 345 bytes past MPICH's buffer. */
#include "mpit.h"
#include <string.h>

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int rank = -1;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    snprintf(check_label, sizeof check_label, "longport[%d]", rank);
    int len = argc > 1 ? atoi(argv[1]) : 600;
    if (len < 1 || len > 900)
        len = 600;

    static struct {
        char port[MPI_MAX_PORT_NAME];
        char guard[1024];
    } out;
    memset(out.guard, 'G', sizeof out.guard);
    char name[1024];
    memset(name, 'p', (size_t)len);
    name[len] = '\0';
    char service[64];
    snprintf(service, sizeof service, "longport-%d", rank);

    int rc = MPI_Publish_name(service, MPI_INFO_NULL, name);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Lookup_name(service, MPI_INFO_NULL, out.port);
        /* the last guard byte changed shows how far the write went */
        size_t past = 0;
        for (size_t i = 0; i < sizeof out.guard; i++)
            if (out.guard[i] != 'G')
                past = i + 1;
        CHECKF(past == 0, "MPI_Lookup_name wrote %zu bytes past the %d-byte port buffer", past,
              MPI_MAX_PORT_NAME);
        const char *nul = memchr(out.port, '\0', sizeof out.port);
        size_t in_buf = nul ? (size_t)(nul - out.port) : sizeof out.port;
        printf("longport: published %d bytes; lookup rc %d, %zu bytes in the buffer, "
               "%zu written past it\n",
               len, rc, in_buf, past);
        MPI_Unpublish_name(service, MPI_INFO_NULL, name);
    } else {
        printf("longport: MPI_Publish_name of %d bytes refused (rc %d)\n", len, rc);
    }
    int passed = mpit_all_passed(MPI_COMM_WORLD);
    MPI_OK(MPI_Finalize());
    return passed ? 0 : 1;
}
