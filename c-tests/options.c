/* The option helpers: PMI_Parse_option, PMI_Args_to_keyval, PMI_Free_keyvals and
 * PMI_Get_options. Local calls, no process manager needed; run under valgrind by the
 * test suite to show that a parse/free cycle leaks nothing. */
#include <pmi.h>
#include <string.h>

#include "check.h"

static int is(const PMI_keyval_t *kv, const char *key, const char *val)
{
    return strcmp(kv->key, key) == 0 && strcmp(kv->val, val) == 0;
}

static void parse_option(void)
{
    char *args[] = {"PMI_A=1", "-PMI_B", "two words", "--PMI_C=x=y", "prog", "PMI_D=4", NULL};
    PMI_keyval_t *kv = (PMI_keyval_t *)1;
    int parsed = -1, size = -1;

    CHECK_RC(PMI_Parse_option(6, args, &parsed, &kv, &size), PMI_SUCCESS);
    CHECK(parsed == 4 && size == 3);
    if (size == 3) {
        CHECK(is(&kv[0], "PMI_A", "1"));
        CHECK(is(&kv[1], "PMI_B", "two words"));
        CHECK(is(&kv[2], "PMI_C", "x=y"));
    }
    CHECK_RC(PMI_Free_keyvals(kv, size), PMI_SUCCESS);

    /* Not a PMI option first: success, nothing parsed. */
    CHECK_RC(PMI_Parse_option(2, args + 4, &parsed, &kv, &size), PMI_SUCCESS);
    CHECK(parsed == 0 && size == 0 && kv == NULL);
    CHECK_RC(PMI_Free_keyvals(kv, size), PMI_SUCCESS);
    CHECK_RC(PMI_Parse_option(0, NULL, &parsed, &kv, &size), PMI_SUCCESS);
    CHECK(parsed == 0 && size == 0);
    /* Only num_args arguments are looked at: -PMI_B without its value. */
    CHECK_RC(PMI_Parse_option(2, args, &parsed, &kv, &size), PMI_SUCCESS);
    CHECK(parsed == 2 && size == 2);
    if (size == 2)
        CHECK(is(&kv[1], "PMI_B", ""));
    CHECK_RC(PMI_Free_keyvals(kv, size), PMI_SUCCESS);

    /* Each bad argument has its own code. */
    char *with_null[] = {"PMI_A=1", NULL};
    CHECK_RC(PMI_Parse_option(-1, args, &parsed, &kv, &size), PMI_ERR_INVALID_NUM_ARGS);
    CHECK_RC(PMI_Parse_option(1, NULL, &parsed, &kv, &size), PMI_ERR_INVALID_ARGS);
    CHECK_RC(PMI_Parse_option(2, with_null, &parsed, &kv, &size), PMI_ERR_INVALID_ARGS);
    CHECK_RC(PMI_Parse_option(1, args, NULL, &kv, &size), PMI_ERR_INVALID_NUM_PARSED);
    CHECK_RC(PMI_Parse_option(1, args, &parsed, NULL, &size), PMI_ERR_INVALID_KEYVALP);
    CHECK_RC(PMI_Parse_option(1, args, &parsed, &kv, NULL), PMI_ERR_INVALID_SIZE);
}

static void args_to_keyval(void)
{
    char *storage[] = {"prog", "in", "PMI_A=1", "-v", "--PMI_B", "2", "PMI_BARE", "out", NULL};
    char **argv = storage;
    int argc = 8, size = -1;
    PMI_keyval_t *kv = NULL;

    CHECK_RC(PMI_Args_to_keyval(&argc, (char *(*)[])&argv, &kv, &size), PMI_SUCCESS);
    CHECK(size == 2);
    if (size == 2) {
        CHECK(is(&kv[0], "PMI_A", "1"));
        CHECK(is(&kv[1], "PMI_B", "2"));
    }
    const char *rest[] = {"prog", "in", "-v", "PMI_BARE", "out"};
    CHECK(argc == 5);
    for (int i = 0; i < 5 && i < argc; i++)
        CHECK(strcmp(argv[i], rest[i]) == 0);
    CHECK(argv[argc] == NULL);
    CHECK_RC(PMI_Free_keyvals(kv, size), PMI_SUCCESS);

    /* No options: nothing changes, no array. */
    CHECK_RC(PMI_Args_to_keyval(&argc, (char *(*)[])&argv, &kv, &size), PMI_SUCCESS);
    CHECK(argc == 5 && size == 0 && kv == NULL);

    CHECK_RC(PMI_Args_to_keyval(NULL, (char *(*)[])&argv, &kv, &size), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Args_to_keyval(&argc, NULL, &kv, &size), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Args_to_keyval(&argc, (char *(*)[])&argv, NULL, &size), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Args_to_keyval(&argc, (char *(*)[])&argv, &kv, NULL), PMI_ERR_INVALID_ARG);
    int negative = -1;
    CHECK_RC(PMI_Args_to_keyval(&negative, (char *(*)[])&argv, &kv, &size), PMI_ERR_INVALID_ARG);
}

static void free_keyvals(void)
{
    CHECK_RC(PMI_Free_keyvals(NULL, 0), PMI_SUCCESS);
    CHECK_RC(PMI_Free_keyvals(NULL, 2), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Free_keyvals(NULL, -1), PMI_ERR_INVALID_ARG);
}

static void get_options(void)
{
    char buf[1024];
    int length = sizeof buf;

    CHECK_RC(PMI_Get_options(buf, &length), PMI_SUCCESS);
    CHECK(length == (int)strlen(buf) + 1);
    CHECK(strstr(buf, "PMI_KEY=VALUE") != NULL);
    int needed = length, shorter = needed - 1;
    memset(buf, 'X', sizeof buf);
    CHECK_RC(PMI_Get_options(buf, &shorter), PMI_ERR_NOMEM);
    CHECK(shorter == needed);
    CHECK(buf[0] == 'X');
    CHECK_RC(PMI_Get_options(NULL, &length), PMI_ERR_INVALID_ARG);
    CHECK_RC(PMI_Get_options(buf, NULL), PMI_ERR_INVALID_ARG);
    int zero = 0;
    CHECK_RC(PMI_Get_options(buf, &zero), PMI_ERR_INVALID_LENGTH);
    /* Asked for the size alone: no buffer, a length of 0. */
    CHECK_RC(PMI_Get_options(NULL, &zero), PMI_ERR_NOMEM);
    CHECK(zero == needed);
}

int main(void)
{
    /* Repeated so that valgrind would see a leak per cycle. */
    for (int i = 0; i < 3; i++) {
        parse_option();
        args_to_keyval();
        free_keyvals();
        get_options();
    }
    return check_done();
}
