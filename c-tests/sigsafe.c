/* Tracing (PMI_DEBUG=1) is safe from signal handlers and never raises SIGPIPE. Run as a
 * singleton, with PMI_DEBUG=1 in the environment:
 *   sigsafe handler N   N traced calls while a SIGALRM every 200 us makes traced calls
 *                       from its handler (stderr to /dev/null); exit 0
 *   sigsafe abort       a SIGTERM handler calls PMI_Abort(3, "terminated by SIGTERM")
 *                       while the main thread makes traced calls; exit 3
 *   sigsafe pipe        stderr is a pipe whose reader is gone: traced calls and a
 *                       failure line get EPIPE, not SIGPIPE; exit 0 */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <pmi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
    int v;
    (void)sig;
    if (PMI_Get_rank(&v) == PMI_SUCCESS && PMI_Get_size(&v) == PMI_SUCCESS)
        handled++;
}

static void on_term(int sig)
{
    (void)sig;
    PMI_Abort(3, "terminated by SIGTERM");
}

static void traced_calls(long n)
{
    int v;
    for (long i = 0; i < n; i++) {
        PMI_Get_universe_size(&v);
        PMI_Get_appnum(&v);
    }
}

int main(int argc, char **argv)
{
    int spawned;
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "pipe") == 0) {
        int fds[2];
        signal(SIGPIPE, SIG_DFL); /* as in a C program, whatever the runner set */
        REQUIRE(pipe(fds) == 0);
        close(fds[0]);
        int saved = dup(2);
        REQUIRE(dup2(fds[1], 2) == 2);
        close(fds[1]);
        int rc = PMI_Init(&spawned); /* traced: "singleton mode" */
        traced_calls(10);
        int publish = PMI_Publish_name("svc", "port"); /* a failure line, traced or not */
        dup2(saved, 2);
        CHECK_RC(rc, PMI_SUCCESS);
        CHECK_RC(publish, PMI_FAIL);
        CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
        return check_done();
    }
    REQUIRE_RC(PMI_Init(&spawned), PMI_SUCCESS);
    if (strcmp(mode, "handler") == 0) {
        long n = argc > 2 ? atol(argv[2]) : 20000;
        int null = open("/dev/null", O_WRONLY);
        REQUIRE(null >= 0 && dup2(null, 2) == 2);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_alarm;
        REQUIRE(sigaction(SIGALRM, &sa, NULL) == 0);
        struct itimerval every = {{0, 200}, {0, 200}};
        REQUIRE(setitimer(ITIMER_REAL, &every, NULL) == 0);
        traced_calls(n);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        CHECK(handled > 0);
        CHECK_RC(PMI_Finalize(), PMI_SUCCESS);
        return check_done();
    }
    if (strcmp(mode, "abort") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        REQUIRE(sigaction(SIGTERM, &sa, NULL) == 0);
        pid_t parent = getpid(), pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            struct timespec t = {0, 50000000};
            nanosleep(&t, NULL);
            kill(parent, SIGTERM);
            _exit(0);
        }
        traced_calls(100000000L); /* interrupted by the abort */
        fprintf(stderr, "sigsafe: survived SIGTERM\n");
        return 1;
    }
    fprintf(stderr, "usage: sigsafe handler N | abort | pipe\n");
    return 2;
}
