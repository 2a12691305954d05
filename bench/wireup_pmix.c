/* The MPI_Init pattern as a native PMIx client does it, the reference for the library's
 * PMIx backend: PMIx_Init, the job size, two business cards put (global), commit, a fence
 * collecting data, every rank's cards read by naming their owner, a fence, finalize (a
 * fence first: no process leaves while another may read its cards, as the library's
 * PMI_Finalize does). Linked with libpmix (the bench's reference, not the library).
 * Prints the line wireup_lib.c prints. */
#include <pmix.h>
#include <stdlib.h>
#include <string.h>

#include "wireup.h"

static void fence(int collect)
{
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    REQUIRE(PMIx_Fence(NULL, 0, collect ? &info : NULL, collect ? 1 : 0) == PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&info);
}

int main(void)
{
    pmix_proc_t me, who;
    pmix_value_t *v = NULL, card;
    char key[64], value[128], expected[128];
    long long t0 = wireup_now_ns();
    REQUIRE(PMIx_Init(&me, NULL, 0) == PMIX_SUCCESS);
    long long ti = wireup_now_ns();
    check_rank = (int)me.rank;
    PMIX_PROC_LOAD(&who, me.nspace, PMIX_RANK_WILDCARD);
    REQUIRE(PMIx_Get(&who, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS);
    int size = (int)v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    for (int which = 0; which < 2; which++) {
        snprintf(key, sizeof key, "card-%u-%d", me.rank, which);
        bc_card(value, sizeof value, (int)me.rank, which);
        card.type = PMIX_STRING;
        card.data.string = value;
        REQUIRE(PMIx_Put(PMIX_GLOBAL, key, &card) == PMIX_SUCCESS);
    }
    REQUIRE(PMIx_Commit() == PMIX_SUCCESS);
    fence(1);
    int learned = 0;
    for (int peer = 0; peer < size; peer++)
        for (int which = 0; which < 2; which++) {
            snprintf(key, sizeof key, "card-%d-%d", peer, which);
            bc_card(expected, sizeof expected, peer, which);
            who.rank = (pmix_rank_t)peer;
            if (PMIx_Get(&who, key, NULL, 0, &v) == PMIX_SUCCESS) {
                if (v->type == PMIX_STRING && strcmp(v->data.string, expected) == 0)
                    learned++;
                PMIX_VALUE_RELEASE(v);
            }
        }
    int ok = learned == 2 * size;
    if (!ok)
        check_fail(__FILE__, __LINE__, "read %d of %d cards", learned, 2 * size);
    fence(0);
    long long t1 = wireup_now_ns();
    wireup_report((int)me.rank, t0, ti, t1, ok);
    fence(0);
    PMIx_Finalize(NULL, 0);
    return ok ? 0 : 1;
}
