/* A fake PMIx client library for core/tests/pmix_fake.rs: the seventeen functions the
 * PMIx backend loads, with the PMIx 4 layouts (core/tests/pmix_abi.rs checks ours
 * against the real pmix.h), serving a job of FAKE_PMIX_SIZE processes (default 1) in
 * namespace PMIX_NAMESPACE from memory, and logging each call as one line to the file
 * FAKE_PMIX_LOG. Not a PMIx: no server, no other process; what another rank put is
 * never found, but for the text of every other rank's first key directory entry
 * (FAKE_PMIX_PEER_DIR, when set). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSLEN 256
#define KEYLEN 512
#define STRING 3
#define BOOL 1
#define UINT32 14
#define PROC 22
#define NOT_FOUND (-46)
#define TIMEOUT (-24)
#define UNDEF 0xffffffffu
#define WILDCARD 0xfffffffeu

typedef struct { char nspace[NSLEN]; uint32_t rank; } proc_t;
typedef struct {
    uint16_t type;
    union { char *string; uint32_t u32; bool flag; proc_t *proc; uint64_t words[3]; } data;
} value_t;
typedef struct { char key[KEYLEN]; uint32_t flags; value_t value; } info_t;
typedef struct { proc_t proc; char key[KEYLEN]; value_t value; } pdata_t;
typedef struct {
    char *cmd; char **argv; char **env; char *cwd; int maxprocs; info_t *info; size_t ninfo;
} app_t;

static proc_t me;
static struct { char key[KEYLEN]; char *value; } store[64], names[8];
static size_t nstore, nnames;

static void say(const char *fmt, ...)
{
    const char *path = getenv("FAKE_PMIX_LOG");
    FILE *log = path ? fopen(path, "a") : NULL;
    if (!log)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(log, fmt, ap);
    va_end(ap);
    fputc('\n', log);
    fclose(log);
}

static uint32_t size(void)
{
    const char *s = getenv("FAKE_PMIX_SIZE");
    return s ? (uint32_t)atoi(s) : 1;
}

int PMIx_Value_load(value_t *v, const void *data, uint16_t type)
{
    v->type = type;
    if (type == STRING)
        v->data.string = strdup(data);
    else if (type == BOOL)
        v->data.flag = *(const bool *)data;
    else if (type == UINT32)
        v->data.u32 = *(const uint32_t *)data;
    else
        return -27;
    return 0;
}

int PMIx_Value_unload(value_t *v, void **data, size_t *sz)
{
    if (v->type == STRING) {
        *data = strdup(v->data.string);
        *sz = strlen(v->data.string) + 1;
    } else if (v->type == BOOL) {
        memcpy(*data, &v->data.flag, sizeof(bool));
        *sz = sizeof(bool);
    } else if (v->type == UINT32) {
        memcpy(*data, &v->data.u32, 4);
        *sz = 4;
    } else {
        return -27;
    }
    return 0;
}

void PMIx_Value_destruct(value_t *v)
{
    if (v->type == STRING)
        free(v->data.string);
    v->type = 0;
}

int PMIx_Info_load(info_t *info, const char *key, const void *data, uint16_t type)
{
    snprintf(info->key, KEYLEN, "%s", key);
    return PMIx_Value_load(&info->value, data, type);
}

const char *PMIx_Error_string(int status)
{
    return status == NOT_FOUND ? "NOT-FOUND" : "FAKE-ERROR";
}

const char *PMIx_Get_version(void) { return "fake PMIx 4.2"; }

int PMIx_Init(proc_t *proc, info_t *info, size_t ninfo)
{
    (void)info;
    const char *ns = getenv("PMIX_NAMESPACE"), *rank = getenv("PMIX_RANK");
    snprintf(me.nspace, NSLEN, "%s", ns ? ns : "fake-ns");
    me.rank = rank ? (uint32_t)atoi(rank) : 0;
    *proc = me;
    say("init %s %u ninfo=%zu", me.nspace, me.rank, ninfo);
    /* Stuck where no socket of its own can be shut. */
    while (getenv("FAKE_PMIX_INIT_HANGS"))
        sleep(1);
    return 0;
}

int PMIx_Finalize(const info_t *info, size_t ninfo)
{
    (void)info;
    say("finalize ninfo=%zu", ninfo);
    return 0;
}

int PMIx_Abort(int status, const char *msg, proc_t *procs, size_t nprocs)
{
    say("abort %d \"%s\" %s:%u nprocs=%zu", status, msg ? msg : "", procs ? procs->nspace : "-",
        procs ? procs->rank : 0, nprocs);
    /* A server that never takes the request. */
    while (getenv("FAKE_PMIX_ABORT_HANGS"))
        sleep(1);
    return 0;
}

int PMIx_Put(uint8_t scope, const char *key, value_t *v)
{
    say("put scope=%u %s=%s", scope, key, v->type == STRING ? v->data.string : "?");
    if (nstore == 64 || v->type != STRING)
        return -1;
    snprintf(store[nstore].key, KEYLEN, "%s", key);
    store[nstore++].value = strdup(v->data.string);
    return 0;
}

int PMIx_Commit(void)
{
    say("commit");
    return 0;
}

int PMIx_Fence(const proc_t *procs, size_t nprocs, const info_t *info, size_t ninfo)
{
    (void)procs;
    say("fence nprocs=%zu ninfo=%zu%s%s", nprocs, ninfo, ninfo ? " " : "", ninfo ? info[0].key : "");
    /* A server gone during the fence. */
    return getenv("FAKE_PMIX_FENCE_FAILS") ? -1 : 0;
}

static value_t *answer(uint16_t type, const void *data)
{
    value_t *v = calloc(1, sizeof *v);
    PMIx_Value_load(v, data, type);
    return v;
}

int PMIx_Get(const proc_t *proc, const char *key, const info_t *info, size_t ninfo, value_t **val)
{
    (void)info;
    say("get %u %s ninfo=%zu", proc->rank, key, ninfo);
    uint32_t n = size(), univ = 2 * size(), appnum = 0;
    bool no = false;
    char text[64];
    if (!strcmp(key, "pmix.job.size"))
        *val = answer(UINT32, &n);
    else if (!strcmp(key, "pmix.univ.size"))
        *val = answer(UINT32, &univ);
    else if (!strcmp(key, "pmix.appnum"))
        *val = answer(UINT32, &appnum);
    else if (!strcmp(key, "pmix.spawned"))
        *val = answer(BOOL, &no);
    else if (!strcmp(key, "pmix.hname") && proc->rank < n) {
        /* Two ranks a host. */
        snprintf(text, sizeof text, "host%u", proc->rank / 2);
        *val = answer(STRING, text);
    } else if (!strcmp(key, "pmix.lpeers")) {
        uint32_t first = me.rank / 2 * 2;
        if (first + 1 < n)
            snprintf(text, sizeof text, "%u,%u", first, first + 1);
        else
            snprintf(text, sizeof text, "%u", first);
        *val = answer(STRING, text);
    } else {
        /* Another rank's first directory entry, when the test gives one; the first
         * FAKE_PMIX_DIR_FAILS gets of one fail as a server that timed out would. */
        const char *peer_dir = getenv("FAKE_PMIX_PEER_DIR");
        if (peer_dir && proc->rank != me.rank && proc->rank < n && !strcmp(key, "libpmi:dir:0")) {
            static int failed;
            const char *fails = getenv("FAKE_PMIX_DIR_FAILS");
            if (fails && failed < atoi(fails)) {
                failed++;
                return TIMEOUT;
            }
            *val = answer(STRING, peer_dir);
            return 0;
        }
        for (size_t i = 0; i < nstore; i++)
            if ((proc->rank == me.rank || proc->rank == UNDEF) && !strcmp(store[i].key, key)) {
                *val = answer(STRING, store[i].value);
                return 0;
            }
        return NOT_FOUND;
    }
    return 0;
}

int PMIx_Publish(const info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo && nnames < 8; i++) {
        say("publish %s=%s", info[i].key, info[i].value.data.string);
        snprintf(names[nnames].key, KEYLEN, "%s", info[i].key);
        names[nnames++].value = strdup(info[i].value.data.string);
    }
    return 0;
}

int PMIx_Lookup(pdata_t *data, size_t ndata, const info_t *info, size_t ninfo)
{
    (void)info;
    say("lookup %s ninfo=%zu", ndata ? data[0].key : "-", ninfo);
    for (size_t i = 0; i < nnames; i++)
        if (ndata && names[i].value && !strcmp(names[i].key, data[0].key)) {
            data[0].proc = me;
            PMIx_Value_load(&data[0].value, names[i].value, STRING);
            return 0;
        }
    return NOT_FOUND;
}

int PMIx_Unpublish(char **keys, const info_t *info, size_t ninfo)
{
    (void)info;
    say("unpublish %s ninfo=%zu", keys && keys[0] ? keys[0] : "-", ninfo);
    for (size_t i = 0; keys && keys[0] && i < nnames; i++)
        if (names[i].value && !strcmp(names[i].key, keys[0])) {
            free(names[i].value);
            names[i].value = NULL;
            return 0;
        }
    return NOT_FOUND;
}

int PMIx_Spawn(const info_t *job_info, size_t ninfo, const app_t *apps, size_t napps, char *nspace)
{
    (void)job_info;
    say("spawn ninfo=%zu napps=%zu", ninfo, napps);
    for (size_t a = 0; a < napps; a++) {
        say("app %s maxprocs=%d cwd=%s ninfo=%zu", apps[a].cmd, apps[a].maxprocs,
            apps[a].cwd ? apps[a].cwd : "-", apps[a].ninfo);
        for (char **arg = apps[a].argv; arg && *arg; arg++)
            say("argv %s", *arg);
        for (char **env = apps[a].env; env && *env; env++)
            say("env %s", *env);
        for (size_t i = 0; i < apps[a].ninfo; i++)
            say("info %s=%s", apps[a].info[i].key,
                apps[a].info[i].value.type == STRING ? apps[a].info[i].value.data.string : "?");
    }
    snprintf(nspace, NSLEN, "fake-child");
    return 0;
}
