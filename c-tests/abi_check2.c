/*
 * Compile-only check for libpmi2.so.0: a program written against Slurm's pmi2.h (Debian
 * libpmi2-0-dev) or MPICH's compiles against include/pmi2.h, and every export has the
 * reference prototype. Built with -std=c99 -Wall -Wextra -Werror -pedantic against
 * include/pmi2.h and against /usr/include/slurm/pmi2.h; an incompatible pointer type is
 * an error.
 */
#include <stddef.h>
#include <pmi2.h>

#define STATIC_CHECK(name, cond) typedef char name[(cond) ? 1 : -1]

STATIC_CHECK(success_is_0, PMI2_SUCCESS == 0);
STATIC_CHECK(fail_is_minus_1, PMI2_FAIL == -1);
STATIC_CHECK(err_init_is_1, PMI2_ERR_INIT == 1);
STATIC_CHECK(err_nomem_is_2, PMI2_ERR_NOMEM == 2);
STATIC_CHECK(err_invalid_arg_is_3, PMI2_ERR_INVALID_ARG == 3);
STATIC_CHECK(err_invalid_key_is_4, PMI2_ERR_INVALID_KEY == 4);
STATIC_CHECK(err_invalid_key_length_is_5, PMI2_ERR_INVALID_KEY_LENGTH == 5);
STATIC_CHECK(err_invalid_val_is_6, PMI2_ERR_INVALID_VAL == 6);
STATIC_CHECK(err_invalid_val_length_is_7, PMI2_ERR_INVALID_VAL_LENGTH == 7);
STATIC_CHECK(err_invalid_length_is_8, PMI2_ERR_INVALID_LENGTH == 8);
STATIC_CHECK(err_invalid_num_args_is_9, PMI2_ERR_INVALID_NUM_ARGS == 9);
STATIC_CHECK(err_invalid_args_is_10, PMI2_ERR_INVALID_ARGS == 10);
STATIC_CHECK(err_invalid_num_parsed_is_11, PMI2_ERR_INVALID_NUM_PARSED == 11);
STATIC_CHECK(err_invalid_keyvalp_is_12, PMI2_ERR_INVALID_KEYVALP == 12);
STATIC_CHECK(err_invalid_size_is_13, PMI2_ERR_INVALID_SIZE == 13);
STATIC_CHECK(err_other_is_14, PMI2_ERR_OTHER == 14);
STATIC_CHECK(max_keylen_is_64, PMI2_MAX_KEYLEN == 64);
STATIC_CHECK(max_vallen_is_1024, PMI2_MAX_VALLEN == 1024);
STATIC_CHECK(max_attrvalue_is_1024, PMI2_MAX_ATTRVALUE == 1024);
STATIC_CHECK(id_null_is_minus_1, PMI2_ID_NULL == -1);
STATIC_CHECK(info_layout_key, offsetof(MPID_Info, key) == offsetof(MPID_Info, next) + sizeof(void *));
STATIC_CHECK(info_layout_value, offsetof(MPID_Info, value) == offsetof(MPID_Info, key) + sizeof(char *));
STATIC_CHECK(connect_is_master, offsetof(PMI2_Connect_comm_t, isMaster) == 3 * sizeof(void *));
#ifndef HAVE_PMIX_RING
#error "HAVE_PMIX_RING is not defined"
#endif

/* Each export, typed with the reference prototype. */
int (*const p_init)(int *, int *, int *, int *) = PMI2_Init;
int (*const p_finalize)(void) = PMI2_Finalize;
int (*const p_initialized)(void) = PMI2_Initialized;
int (*const p_abort)(int, const char[]) = PMI2_Abort;
int (*const p_spawn)(int, const char *[], int[], const char **[], const int[], const int[],
                     const struct MPID_Info *[], int, const struct MPID_Info *[], char[], int,
                     int[]) = PMI2_Job_Spawn;
int (*const p_getid)(char[], int) = PMI2_Job_GetId;
int (*const p_getrank)(int *) = PMI2_Job_GetRank;
int (*const p_getsize)(int *) = PMI2_Info_GetSize;
int (*const p_connect)(const char[], PMI2_Connect_comm_t *) = PMI2_Job_Connect;
/* The structure's tag, as programs written against the reference header spell it. */
int (*const p_connect_tag)(const char[], struct PMI2_Connect_comm *) = PMI2_Job_Connect;
int (*const p_disconnect)(const char[]) = PMI2_Job_Disconnect;
int (*const p_ring)(const char[], int *, int *, char[], char[], int) = PMIX_Ring;
int (*const p_put)(const char[], const char[]) = PMI2_KVS_Put;
int (*const p_fence)(void) = PMI2_KVS_Fence;
int (*const p_get)(const char *, int, const char[], char[], int, int *) = PMI2_KVS_Get;
int (*const p_getnode)(const char[], char[], int, int *, int) = PMI2_Info_GetNodeAttr;
int (*const p_getnodeints)(const char[], int[], int, int *, int *) = PMI2_Info_GetNodeAttrIntArray;
int (*const p_putnode)(const char[], const char[]) = PMI2_Info_PutNodeAttr;
int (*const p_getjob)(const char[], char[], int, int *) = PMI2_Info_GetJobAttr;
int (*const p_getjobints)(const char[], int[], int, int *, int *) = PMI2_Info_GetJobAttrIntArray;
int (*const p_publish)(const char[], const struct MPID_Info *, const char[]) = PMI2_Nameserv_publish;
int (*const p_lookup)(const char[], const struct MPID_Info *, char[], int) = PMI2_Nameserv_lookup;
int (*const p_unpublish)(const char[], const struct MPID_Info *) = PMI2_Nameserv_unpublish;
/* Slurm's other name for the info structure. */
int (*const p_unpublish_u)(const char[], const PMI2U_Info *) = PMI2_Nameserv_unpublish;
