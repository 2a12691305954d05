/* byrank PROG@DIR...: run the client of this rank: the (rank mod count)-th PROG, with
 * LD_LIBRARY_PATH=DIR alone, by exec (the process stays the launcher's rank). The rank
 * is the launcher's: PMI_RANK (Hydra, Slurm's PMI-1 and PMI-2 server), SLURM_PROCID,
 * PMIX_RANK. For the scale bench's mixed jobs (bench/scale.sh), in which the ranks of
 * one job take the clients in turn, so that every client meets the same load; each
 * rank pays the same exec through this program, as through `env` in the other jobs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static const char *vars[] = {"PMI_RANK", "SLURM_PROCID", "PMIX_RANK"};
    const char *rank = NULL;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !rank; i++)
        rank = getenv(vars[i]);
    if (argc < 2 || !rank) {
        fprintf(stderr, "byrank: %s\n",
                argc < 2 ? "usage: byrank PROG@DIR..." : "no rank (PMI_RANK, SLURM_PROCID, PMIX_RANK)");
        return 2;
    }
    char *spec = argv[1 + atoi(rank) % (argc - 1)], *at = strrchr(spec, '@');
    if (!at) {
        fprintf(stderr, "byrank: %s: not PROG@DIR\n", spec);
        return 2;
    }
    *at = '\0';
    if (setenv("LD_LIBRARY_PATH", at + 1, 1) != 0) {
        perror("byrank: setenv");
        return 2;
    }
    char *args[] = {spec, NULL};
    execv(spec, args);
    fprintf(stderr, "byrank: %s: ", spec);
    perror("exec");
    return 127;
}
