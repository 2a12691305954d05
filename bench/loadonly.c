/* A process that loads libpmi.so.0 and exits, for `pmi_bench load`: built with -DLOAD_PMI
 * and linked with the library (which it never calls), and without, as the baseline. */
#ifdef LOAD_PMI
#include <pmi.h>
#endif

int main(int argc, char **argv)
{
    (void)argv;
#ifdef LOAD_PMI
    /* Never true: the reference keeps the library linked (a NEEDED entry). */
    if (argc < 0)
        return PMI_Init(&argc);
#endif
    return argc < 0;
}
