/* The layouts and constants of the real pmix.h that src/backends/pmix_lib.rs declares,
 * one "name value" line each, for tests/pmix_abi.rs to compare. Built against Debian's
 * libpmix-dev (pkg-config pmix). */
#include <pmix.h>
#include <stddef.h>
#include <stdio.h>

#define SHOW(expr) printf("%s %zu\n", #expr, (size_t)(expr))

int main(void)
{
    SHOW(sizeof(pmix_proc_t));
    SHOW(offsetof(pmix_proc_t, rank));
    SHOW(sizeof(pmix_value_t));
    SHOW(offsetof(pmix_value_t, type));
    SHOW(sizeof(pmix_info_t));
    SHOW(offsetof(pmix_info_t, flags));
    SHOW(offsetof(pmix_info_t, value));
    SHOW(sizeof(pmix_pdata_t));
    SHOW(offsetof(pmix_pdata_t, key));
    SHOW(offsetof(pmix_pdata_t, value));
    SHOW(sizeof(pmix_app_t));
    SHOW(offsetof(pmix_app_t, argv));
    SHOW(offsetof(pmix_app_t, env));
    SHOW(offsetof(pmix_app_t, cwd));
    SHOW(offsetof(pmix_app_t, maxprocs));
    SHOW(offsetof(pmix_app_t, info));
    SHOW(offsetof(pmix_app_t, ninfo));
    SHOW(PMIX_MAX_NSLEN);
    SHOW(PMIX_MAX_KEYLEN);
    SHOW(PMIX_RANK_UNDEF);
    SHOW(PMIX_RANK_WILDCARD);
    SHOW(PMIX_GLOBAL);
    SHOW(PMIX_LOCAL);
    SHOW(PMIX_BOOL);
    SHOW(PMIX_STRING);
    SHOW(PMIX_INT);
    SHOW(PMIX_UINT32);
    SHOW(PMIX_PROC_RANK);
    SHOW(PMIX_PROC);
    SHOW(PMIX_SIZE);
    SHOW(PMIX_PID);
    SHOW(PMIX_INT8);
    SHOW(PMIX_INT16);
    SHOW(PMIX_INT32);
    SHOW(PMIX_INT64);
    SHOW(PMIX_UINT);
    SHOW(PMIX_UINT8);
    SHOW(PMIX_UINT16);
    SHOW(PMIX_UINT64);
    SHOW(-PMIX_ERR_BAD_PARAM);
    SHOW(PMIX_SUCCESS);
    SHOW(-PMIX_ERR_NOT_FOUND);
    SHOW(-PMIX_ERR_TIMEOUT);
    return 0;
}
