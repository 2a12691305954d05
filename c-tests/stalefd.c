/* A stale PMI_FD: a rank execs a helper, which inherits PMI_FD=N in its environment but
 * not the fd (the library made it close-on-exec), and opens sockets of its own at N. The
 * helper's PMI_Init must refuse each of them with PMI_FAIL, leave it open and unwritten,
 * and never block: a listening socket, a UDP socket, a socketpair of its own, and a
 * connected TCP socket with the PMI_FD's close-on-exec flag set by this process; and
 * the fd closed, as inherited.
 * Usage: stalefd            (under a launcher: each rank runs the helper)
 *        stalefd --helper   (the helper; exit 0 when every case held) */
#define _GNU_SOURCE /* dup3 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pmi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Put `sock` at fd number `n` (inheritable), and close the original. */
static void place(int sock, int n)
{
    REQUIRE(sock >= 0);
    if (sock != n) {
        REQUIRE(dup2(sock, n) == n);
        close(sock);
    }
}

/* PMI_Init refuses fd n, which stays open and (for a pair) receives nothing. */
static void refused(const char *what, int n, int other_end)
{
    int spawned = -1;
    CHECKF(PMI_Init(&spawned) == PMI_FAIL, "PMI_Init adopted %s at PMI_FD=%d", what, n);
    CHECKF(fcntl(n, F_GETFD) != -1, "PMI_Init closed %s at PMI_FD=%d", what, n);
    if (other_end >= 0) {
        char byte;
        ssize_t got = recv(other_end, &byte, 1, MSG_DONTWAIT);
        CHECKF(got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
               "PMI_Init wrote into %s (recv gave %zd)", what, got);
    }
    close(n);
}

static int helper(void)
{
    const char *env = getenv("PMI_FD");
    REQUIRE(env != NULL);
    int n = atoi(env);
    REQUIRE(fcntl(n, F_GETFD) == -1); /* the launcher's fd did not survive exec */
    /* Closed, as inherited: refused (beside an outer job's PMIx variables too, whose rank
     * the helper must not take). */
    int spawned = -1;
    CHECK_RC(PMI_Init(&spawned), PMI_FAIL);

    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    REQUIRE(bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(listener, 1) == 0);
    place(listener, n);
    refused("a listening socket", n, -1);

    place(socket(AF_INET, SOCK_DGRAM, 0), n);
    refused("a UDP socket", n, -1);

    int pair[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    if (pair[1] == n) { /* keep the other end off the number under test */
        int moved = dup(pair[1]);
        REQUIRE(moved >= 0);
        close(pair[1]);
        pair[1] = moved;
    }
    place(pair[0], n);
    refused("a socketpair of this process", n, pair[1]);
    close(pair[1]);

    /* A TCP connection this process opened: its fd is close-on-exec. */
    listener = socket(AF_INET, SOCK_STREAM, 0);
    socklen_t len = sizeof addr;
    REQUIRE(bind(listener, (struct sockaddr *)&addr, sizeof addr) == 0 && listen(listener, 1) == 0);
    REQUIRE(getsockname(listener, (struct sockaddr *)&addr, &len) == 0);
    int tcp = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(connect(tcp, (struct sockaddr *)&addr, sizeof addr) == 0);
    int accepted = accept(listener, NULL, NULL);
    REQUIRE(accepted >= 0);
    if (tcp != n) {
        REQUIRE(dup3(tcp, n, O_CLOEXEC) == n);
        close(tcp);
    } else {
        REQUIRE(fcntl(n, F_SETFD, FD_CLOEXEC) == 0);
    }
    refused("a TCP socket opened by this process", n, accepted);
    return check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--helper") == 0)
        return helper();
    int spawned, rank;
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    REQUIRE_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    check_rank = rank;
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--helper", (char *)NULL);
        _exit(127);
    }
    int status = -1;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the helper failed (status %d)",
           status);
    /* The rank's own connection is untouched. */
    CHECK_RC(PMI_Barrier(), PMI_SUCCESS);
    CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
    return check_done();
}
