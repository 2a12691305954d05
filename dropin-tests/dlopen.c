/* dlopen("libpmi.so.0", RTLD_NOW | RTLD_LOCAL), as MPI libraries that load their PMI at
 * run time do: the file found must be the one expected (dlinfo RTLD_DI_LINKMAP, and
 * dladdr on a symbol), and dlsym must find every function of the symbol list.
 * This program is not linked with any libpmi.
 *
 * Usage: dlopen SYMBOLS_FILE EXPECTED_LIBPMI [--init]
 *   --init: also PMI_Init / rank / size / barrier / PMI_Finalize through the pointers
 *           (run it under a launcher).
 * Exit 0 only if every check holds. */
#define _GNU_SOURCE /* dlinfo, dladdr, RTLD_DI_LINKMAP, realpath */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../c-tests/check.h"

/* A data pointer from dlsym as a function pointer, without a cast ISO C forbids. */
typedef int (*fn_int_p)(int *);
typedef int (*fn_void)(void);
static void *as_ptr(void *p) { return p; }

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: dlopen SYMBOLS_FILE EXPECTED_LIBPMI [--init]\n");
        return 2;
    }
    char want[PATH_MAX], got[PATH_MAX] = "?";
    if (!realpath(argv[2], want)) {
        fprintf(stderr, "dlopen: %s does not exist\n", argv[2]);
        return 2;
    }
    void *h = dlopen("libpmi.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen: dlopen(\"libpmi.so.0\") failed: %s\n", dlerror());
        return 1;
    }
    struct link_map *map = NULL;
    CHECKF(dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name,
           "dlinfo RTLD_DI_LINKMAP: %s", dlerror());
    if (map && map->l_name && !realpath(map->l_name, got))
        snprintf(got, sizeof got, "%s", map->l_name);
    CHECKF(strcmp(got, want) == 0, "dlopen(\"libpmi.so.0\") loaded %s, not %s", got, want);

    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "dlopen: cannot open %s\n", argv[1]);
        return 2;
    }
    char name[256];
    int count = 0, found = 0;
    while (fscanf(f, "%255s", name) == 1) {
        count++;
        dlerror();
        void *sym = dlsym(h, name);
        CHECKF(sym != NULL, "dlsym(\"%s\"): %s", name, dlerror());
        if (!sym)
            continue;
        found++;
        /* The symbol is defined in the library dlopen found, not elsewhere. */
        Dl_info info;
        char from[PATH_MAX] = "?";
        if (dladdr(sym, &info) && info.dli_fname && !realpath(info.dli_fname, from))
            snprintf(from, sizeof from, "%s", info.dli_fname);
        CHECKF(strcmp(from, want) == 0, "%s comes from %s", name, from);
    }
    fclose(f);
    /* RFC 13's 33 functions and PMI 1.2's PMI_Barrier_group. */
    CHECKF(count == 34, "%s lists %d functions, expected 34", argv[1], count);
    printf("dlopen(\"libpmi.so.0\", RTLD_NOW | RTLD_LOCAL) loaded %s; dlsym found %d/%d "
           "functions\n", got, found, count);

    if (argc > 3 && strcmp(argv[3], "--init") == 0) {
        fn_int_p init, rank_fn, size_fn;
        fn_void barrier, fin;
        void *p;
        p = as_ptr(dlsym(h, "PMI_Init")), memcpy(&init, &p, sizeof p);
        p = as_ptr(dlsym(h, "PMI_Get_rank")), memcpy(&rank_fn, &p, sizeof p);
        p = as_ptr(dlsym(h, "PMI_Get_size")), memcpy(&size_fn, &p, sizeof p);
        p = as_ptr(dlsym(h, "PMI_Barrier")), memcpy(&barrier, &p, sizeof p);
        p = as_ptr(dlsym(h, "PMI_Finalize")), memcpy(&fin, &p, sizeof p);
        int spawned = -1, rank = -1, size = -1;
        CHECKF(init && init(&spawned) == 0, "PMI_Init through dlsym failed");
        CHECKF(rank_fn && rank_fn(&rank) == 0 && size_fn && size_fn(&size) == 0 &&
                   rank >= 0 && rank < size,
               "rank %d of size %d", rank, size);
        CHECKF(barrier && barrier() == 0, "PMI_Barrier through dlsym failed");
        CHECKF(fin && fin() == 0, "PMI_Finalize through dlsym failed");
        printf("rank %d of %d: PMI_Init, PMI_Barrier and PMI_Finalize through dlsym\n", rank,
               size);
    }
    dlclose(h);
    return check_done();
}
