/* A whole job as its user waits for it: run COMMAND, wait for it, and print
 * `job wall_ns=W cpu_us=C status=S` on stderr: W from fork to the end of the wait, C the
 * CPU time (user and system) of COMMAND and every descendant it waited for (Hydra's
 * proxies and ranks on this host, srun itself but not slurmstepd's ranks), S its exit
 * status. Exits with COMMAND's status. Usage: jobtime COMMAND [ARG]... */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: jobtime COMMAND [ARG]...\n");
        return 2;
    }
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("jobtime: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("jobtime: exec");
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) != pid) {
        perror("jobtime: wait4");
        return 2;
    }
    long long wall = now_ns() - t0;
    /* wait4's usage is the child's and its waited-for descendants'. */
    long cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec +
               ru.ru_stime.tv_usec;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(stderr, "job wall_ns=%lld cpu_us=%ld status=%d\n", wall, cpu, code);
    return code;
}
