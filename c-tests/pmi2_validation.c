/* libpmi2.so.0's contract: codes before PMI2_Init, NULL arguments, lengths, the put-once
 * rule, a value that does not fit (nothing written, the length needed reported), calls
 * after PMI2_Finalize. Each refusal sends nothing: the job goes on. */
#include <limits.h>
#include <pmi2.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(void)
{
    int spawned, size, rank, appnum, len = 0, found = 0, n = 0;
    char jobid[256], value[PMI2_MAX_VALLEN], small[8];
    char key63[64], key64[65], key299[300], val1023[1024], val1024[1025];

    /* Before PMI2_Init. */
    CHECK_RC(PMI2_KVS_Put("k", "v"), PMI2_ERR_INIT);
    CHECK_RC(PMI2_KVS_Fence(), PMI2_ERR_INIT);
    CHECK_RC(PMI2_Job_GetRank(&n), PMI2_ERR_INIT);
    CHECK_RC(PMI2_Job_GetId(jobid, sizeof jobid), PMI2_ERR_INIT);
    CHECK_RC(PMI2_Finalize(), PMI2_ERR_INIT);
    CHECK_RC(PMI2_Init(NULL, &size, &rank, &appnum), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Init(&spawned, &size, &rank, NULL), PMI2_ERR_INVALID_ARG);

    REQUIRE_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_SUCCESS);
    check_rank = rank;
    int r2 = -1, s2 = -1;
    CHECK_RC(PMI2_Init(&spawned, &s2, &r2, &appnum), PMI2_SUCCESS); /* again: the same */
    CHECK(r2 == rank && s2 == size);

    /* NULL pointers (Slurm's library segfaults on PMI2_Job_GetRank(NULL), accepts NULL
     * keys and values). */
    CHECK_RC(PMI2_Job_GetRank(NULL), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Info_GetSize(NULL), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Job_GetId(NULL, 10), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_KVS_Put(NULL, "v"), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_KVS_Put("k", NULL), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, NULL, value, sizeof value, &len),
             PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "k", NULL, 10, &len), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "k", value, sizeof value, NULL),
             PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Info_GetJobAttr(NULL, value, sizeof value, &found), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Info_GetJobAttr("universeSize", value, sizeof value, NULL),
             PMI2_ERR_INVALID_ARG);

    /* Lengths: a key of 63 bytes is the longest, 64 and 299 are refused; a value of 1023
     * bytes is the longest. An empty key, and a ';' anywhere (servers cut at it), too. */
    memset(key63, 'k', 63), key63[63] = '\0';
    memset(key64, 'k', 64), key64[64] = '\0';
    memset(key299, 'k', 299), key299[299] = '\0';
    memset(val1023, 'v', 1023), val1023[1023] = '\0';
    memset(val1024, 'v', 1024), val1024[1024] = '\0';
    key63[0] = (char)('a' + rank % 26);
    key63[1] = (char)('a' + rank / 26 % 26);
    CHECK_RC(PMI2_KVS_Put(key64, "v"), PMI2_ERR_INVALID_KEY_LENGTH);
    CHECK_RC(PMI2_KVS_Put(key299, "v"), PMI2_ERR_INVALID_KEY_LENGTH);
    CHECK_RC(PMI2_KVS_Put("", "v"), PMI2_ERR_INVALID_KEY);
    CHECK_RC(PMI2_KVS_Put("a;b", "v"), PMI2_ERR_INVALID_KEY);
    CHECK_RC(PMI2_KVS_Put("k-semicolon", "v;w"), PMI2_ERR_INVALID_VAL);
    CHECK_RC(PMI2_KVS_Put("k-long", val1024), PMI2_ERR_INVALID_VAL_LENGTH);
    CHECK_RC(PMI2_KVS_Put(key63, val1023), PMI2_SUCCESS);
    /* An empty value is refused, as by libpmi.so.0 (MPICH 5.0.2's mpiexec exits 255 on
     * `value=;`); a ';' in a service name or port too (servers cut the port at it). */
    CHECK_RC(PMI2_KVS_Put("k-empty", ""), PMI2_ERR_INVALID_VAL);
    CHECK_RC(PMI2_Info_PutNodeAttr("na-empty", ""), PMI2_ERR_INVALID_VAL);
    CHECK_RC(PMI2_Nameserv_publish("svc;x", NULL, "port"), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Nameserv_publish("svc-semicolon", NULL, "tcp://h;1"), PMI2_ERR_INVALID_ARG);
    /* Spawn requests a server cannot take, refused before anything is sent: on the PMI-2
     * wire, 1000 arguments (Hydra 4.0.2's mpiexec segfaults on 999, Hydra 5.0.2's aborts
     * on 1000) or 600 info entries (Hydra 5.0.2 aborts); under every server, a ';' in an
     * argument or a preput value (Hydra 5.0.2 segfaults; Hydra 4.0.2 cuts it). PMIx has
     * no such limit: there the large requests are not made (they would start jobs). */
    {
        static const char *many[1000];
        static MPID_Info infos[600];
        const char *cmds[] = {"/bin/true"}, *semi[] = {"a;b"};
        const char **argvs[] = {many}, **argvs_semi[] = {semi};
        int argcs[] = {1000}, one[] = {1}, procs[] = {1}, none[] = {0}, errors[1];
        int info_sizes[] = {600};
        const MPID_Info *info_vec[] = {infos};
        MPID_Info bad = {0, 0, 0, NULL, (char *)"pk", (char *)"x;y"};
        const MPID_Info *preput[] = {&bad};
        for (int i = 0; i < 1000; i++)
            many[i] = "a";
        for (int i = 0; i < 600; i++)
            infos[i].key = (char *)"wdir", infos[i].value = (char *)"/tmp";
        /* Each spawn below is refused before anything is sent. */
#define SPAWN(...) PMI2_Job_Spawn(__VA_ARGS__, jobid, sizeof jobid, errors)
        if (!check_backend_is("pmix")) {
            CHECK_RC(SPAWN(1, cmds, argcs, argvs, procs, none, NULL, 0, NULL),
                     PMI2_ERR_INVALID_ARGS);
            CHECK_RC(SPAWN(1, cmds, none, argvs, procs, info_sizes, info_vec, 0, NULL),
                     PMI2_ERR_INVALID_ARGS);
        }
        CHECK_RC(SPAWN(1, cmds, one, argvs_semi, procs, none, NULL, 0, NULL),
                 PMI2_ERR_INVALID_ARGS);
        CHECK_RC(SPAWN(1, cmds, none, argvs, procs, none, NULL, 1, preput), PMI2_ERR_INVALID_VAL);
        /* NULL pointers, and arguments without their count or a count without them. */
        const char *null_cmd[] = {NULL}, *ok_args[] = {"x"};
        const char **argvs_ok[] = {ok_args};
        MPID_Info null_key = {0, 0, 0, NULL, NULL, (char *)"v"};
        const MPID_Info *preput_null[] = {&null_key};
        CHECK_RC(SPAWN(1, null_cmd, none, argvs, procs, none, NULL, 0, NULL), PMI2_ERR_INVALID_ARG);
        CHECK_RC(SPAWN(1, cmds, NULL, argvs_ok, procs, none, NULL, 0, NULL), PMI2_ERR_INVALID_ARG);
        CHECK_RC(SPAWN(1, cmds, one, NULL, procs, none, NULL, 0, NULL), PMI2_ERR_INVALID_ARG);
        CHECK_RC(SPAWN(1, cmds, none, argvs, procs, none, NULL, 1, preput_null),
                 PMI2_ERR_INVALID_ARG);
        /* As many processes as an int holds, and one more. */
        const char *two_cmds[] = {"/bin/true", "/bin/true"};
        int huge[] = {INT_MAX, 1}, no_args[] = {0, 0};
        CHECK_RC(SPAWN(2, two_cmds, no_args, NULL, huge, no_args, NULL, 0, NULL),
                 PMI2_ERR_INVALID_SIZE);
#undef SPAWN
    }
    char mine[64];
    snprintf(mine, sizeof mine, "mine-%d", rank);
    CHECK_RC(PMI2_KVS_Put(mine, "a b=c\td"), PMI2_SUCCESS);
    /* Put once: the same value again is fine, another is refused. */
    CHECK_RC(PMI2_KVS_Put(mine, "a b=c\td"), PMI2_SUCCESS);
    CHECK_RC(PMI2_KVS_Put(mine, "other"), PMI2_ERR_INVALID_KEY);
    REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);

    /* Reading back: spaces, '=' and tabs intact; the longest key and value. */
    CHECK_RC(PMI2_KVS_Get(NULL, rank, mine, value, sizeof value, &len), PMI2_SUCCESS);
    CHECK(strcmp(value, "a b=c\td") == 0 && len == 7);
    CHECK_RC(PMI2_KVS_Get(NULL, rank, key63, value, sizeof value, &len), PMI2_SUCCESS);
    CHECK(strcmp(value, val1023) == 0 && len == 1023);
    /* ...those were this process's own, from what it put; the next rank's come through
     * the server, with the hint and without. */
    int peer = (rank + 1) % size;
    char theirs[64], key63_peer[64];
    snprintf(theirs, sizeof theirs, "mine-%d", peer);
    memcpy(key63_peer, key63, sizeof key63_peer);
    key63_peer[0] = (char)('a' + peer % 26);
    key63_peer[1] = (char)('a' + peer / 26 % 26);
    CHECK_RC(PMI2_KVS_Get(NULL, peer, theirs, value, sizeof value, &len), PMI2_SUCCESS);
    CHECK(strcmp(value, "a b=c\td") == 0 && len == 7);
    CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, key63_peer, value, sizeof value, &len),
             PMI2_SUCCESS);
    CHECK(strcmp(value, val1023) == 0 && len == 1023);
    /* Too small: nothing written, the length needed, negated. */
    memset(small, 'X', sizeof small);
    len = 0;
    CHECK_RC(PMI2_KVS_Get(NULL, rank, mine, small, sizeof small - 1, &len),
             PMI2_ERR_INVALID_LENGTH);
    CHECK(len == -7 && small[0] == 'X');
    /* No room at all: a way to ask for the length. */
    len = 0;
    CHECK_RC(PMI2_KVS_Get(NULL, rank, mine, small, 0, &len), PMI2_ERR_INVALID_LENGTH);
    CHECK(len == -7 && small[0] == 'X');
    len = 0;
    CHECK_RC(PMI2_KVS_Get(NULL, rank, mine, small, -1, &len), PMI2_ERR_INVALID_LENGTH);
    CHECK(len == -7 && small[0] == 'X');
    /* A key nobody put: PMI2_ERR_INVALID_KEY, where the server answers at all (MPICH
     * 5.0.2's Hydra across two nodes holds the request until someone puts it). */
    if (check_deviation_allowed("get-missing-waits"))
        CHECK_DEV(0, "get-missing-waits", "a get of a key nobody put is not answered: not asked");
    else
        CHECK_RC(PMI2_KVS_Get(NULL, PMI2_ID_NULL, "never-put", value, sizeof value, &len),
                 PMI2_ERR_INVALID_KEY);
    CHECK_RC(PMI2_KVS_Get("another-job", PMI2_ID_NULL, mine, value, sizeof value, &len),
             PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Job_GetId(small, 1), PMI2_ERR_INVALID_LENGTH);
    CHECK_RC(PMI2_Info_GetJobAttr("universeSize", small, 0, &found), PMI2_ERR_INVALID_LENGTH);
    /* No server has job-connect (Slurm's logs "not implemented" and never answers,
     * Hydra ends the job on a command it does not know): refused, nothing sent. */
    PMI2_Connect_comm_t conn;
    memset(&conn, 0, sizeof conn);
    CHECK_RC(PMI2_Job_Connect("another-job", &conn), PMI2_FAIL);
    CHECK_RC(PMI2_Job_Disconnect("another-job"), PMI2_FAIL);
    CHECK_RC(PMI2_Job_Connect(NULL, &conn), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Job_Connect("another-job", NULL), PMI2_ERR_INVALID_ARG);
    CHECK_RC(PMI2_Job_Disconnect(NULL), PMI2_ERR_INVALID_ARG);
    /* The connection still works. */
    REQUIRE_RC(PMI2_KVS_Fence(), PMI2_SUCCESS);

    CHECK_RC(PMI2_Finalize(), PMI2_SUCCESS);
    CHECK_RC(PMI2_Finalize(), PMI2_ERR_INIT);
    CHECK_RC(PMI2_KVS_Fence(), PMI2_ERR_INIT);
    CHECK_RC(PMI2_Init(&spawned, &size, &rank, &appnum), PMI2_FAIL);
    return check_done();
}
