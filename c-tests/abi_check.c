/*
 * Compile-only check: a program written against the reference pmi.h (RFC 13, Slurm's
 * libpmi0-dev header) compiles against this header, and every export has the reference
 * prototype. Built with -std=c99 -Wall -Wextra -Werror -pedantic against include/pmi.h
 * and against /usr/include/slurm/pmi.h; an incompatible pointer type is an error.
 */
#include <pmi.h>

#define STATIC_CHECK(name, cond) typedef char name[(cond) ? 1 : -1]

STATIC_CHECK(success_is_0, PMI_SUCCESS == 0);
STATIC_CHECK(fail_is_minus_1, PMI_FAIL == -1);
STATIC_CHECK(err_init_is_1, PMI_ERR_INIT == 1);
STATIC_CHECK(err_nomem_is_2, PMI_ERR_NOMEM == 2);
STATIC_CHECK(err_invalid_arg_is_3, PMI_ERR_INVALID_ARG == 3);
STATIC_CHECK(err_invalid_key_is_4, PMI_ERR_INVALID_KEY == 4);
STATIC_CHECK(err_invalid_key_length_is_5, PMI_ERR_INVALID_KEY_LENGTH == 5);
STATIC_CHECK(err_invalid_val_is_6, PMI_ERR_INVALID_VAL == 6);
STATIC_CHECK(err_invalid_val_length_is_7, PMI_ERR_INVALID_VAL_LENGTH == 7);
STATIC_CHECK(err_invalid_length_is_8, PMI_ERR_INVALID_LENGTH == 8);
STATIC_CHECK(err_invalid_num_args_is_9, PMI_ERR_INVALID_NUM_ARGS == 9);
STATIC_CHECK(err_invalid_args_is_10, PMI_ERR_INVALID_ARGS == 10);
STATIC_CHECK(err_invalid_num_parsed_is_11, PMI_ERR_INVALID_NUM_PARSED == 11);
STATIC_CHECK(err_invalid_keyvalp_is_12, PMI_ERR_INVALID_KEYVALP == 12);
STATIC_CHECK(err_invalid_size_is_13, PMI_ERR_INVALID_SIZE == 13);
STATIC_CHECK(err_invalid_kvs_is_14, PMI_ERR_INVALID_KVS == 14);
STATIC_CHECK(true_is_1, PMI_TRUE == 1);
STATIC_CHECK(false_is_0, PMI_FALSE == 0);
STATIC_CHECK(bool_is_int, sizeof(PMI_BOOL) == sizeof(int));
STATIC_CHECK(keyval_is_two_pointers, sizeof(PMI_keyval_t) == 2 * sizeof(char *));

/* Each export assigned to a pointer typed with the reference prototype. */
int (*const p_init)(int *) = PMI_Init;
int (*const p_initialized)(PMI_BOOL *) = PMI_Initialized;
int (*const p_finalize)(void) = PMI_Finalize;
int (*const p_abort)(int, const char[]) = PMI_Abort;
int (*const p_get_size)(int *) = PMI_Get_size;
int (*const p_get_rank)(int *) = PMI_Get_rank;
int (*const p_get_universe_size)(int *) = PMI_Get_universe_size;
int (*const p_get_appnum)(int *) = PMI_Get_appnum;
int (*const p_get_clique_size)(int *) = PMI_Get_clique_size;
int (*const p_get_clique_ranks)(int[], int) = PMI_Get_clique_ranks;
int (*const p_get_id)(char[], int) = PMI_Get_id;
int (*const p_get_kvs_domain_id)(char[], int) = PMI_Get_kvs_domain_id;
int (*const p_get_id_length_max)(int *) = PMI_Get_id_length_max;
int (*const p_barrier)(void) = PMI_Barrier;
int (*const p_kvs_get_my_name)(char[], int) = PMI_KVS_Get_my_name;
int (*const p_kvs_get_name_length_max)(int *) = PMI_KVS_Get_name_length_max;
int (*const p_kvs_get_key_length_max)(int *) = PMI_KVS_Get_key_length_max;
int (*const p_kvs_get_value_length_max)(int *) = PMI_KVS_Get_value_length_max;
int (*const p_kvs_create)(char[], int) = PMI_KVS_Create;
int (*const p_kvs_destroy)(const char[]) = PMI_KVS_Destroy;
int (*const p_kvs_put)(const char[], const char[], const char[]) = PMI_KVS_Put;
int (*const p_kvs_commit)(const char[]) = PMI_KVS_Commit;
int (*const p_kvs_get)(const char[], const char[], char[], int) = PMI_KVS_Get;
int (*const p_kvs_iter_first)(const char[], char[], int, char[], int) = PMI_KVS_Iter_first;
int (*const p_kvs_iter_next)(const char[], char[], int, char[], int) = PMI_KVS_Iter_next;
int (*const p_publish_name)(const char[], const char[]) = PMI_Publish_name;
int (*const p_unpublish_name)(const char[]) = PMI_Unpublish_name;
int (*const p_lookup_name)(const char[], char[]) = PMI_Lookup_name;
int (*const p_spawn_multiple)(int, const char *[], const char **[], const int[], const int[],
                              const PMI_keyval_t *[], int, const PMI_keyval_t[], int[]) =
    PMI_Spawn_multiple;
int (*const p_parse_option)(int, char *[], int *, PMI_keyval_t **, int *) = PMI_Parse_option;
int (*const p_args_to_keyval)(int *, char *((*)[]), PMI_keyval_t **, int *) = PMI_Args_to_keyval;
int (*const p_free_keyvals)(PMI_keyval_t[], int) = PMI_Free_keyvals;
int (*const p_get_options)(char *, int *) = PMI_Get_options;

/* Typical legacy use compiles: a keyval built with string literals. */
static char value_buffer[] = "v";
const PMI_keyval_t p_example = {"key", value_buffer};

/* PMI 1.2: MPICH 5's pmi.h declares PMI_Barrier_group and its three groups, and says
   version 1.2; a header without them (RFC 13's, Slurm's) does not. */
#ifdef PMI_GROUP_WORLD
STATIC_CHECK(version_is_1_2, PMI_VERSION == 1 && PMI_SUBVERSION == 2);
/* The groups are pointer constants (not integer constant expressions), passed as a group. */
const int *const p_groups[3] = {PMI_GROUP_WORLD, PMI_GROUP_SELF, PMI_GROUP_NODE};
int (*const p_barrier_group)(const int *, int, const char *) = PMI_Barrier_group;
#endif
