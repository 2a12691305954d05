/* The other PMI API's "initialized" query when it is linked into the same program as
 * this copy of the core: both static archives, libpmi.a and libpmi2.a, in one
 * executable. Weak references: they pull nothing in and need nothing; without the
 * other library they are NULL. (Rust has no weak references on stable;
 * core/src/sibling.rs asks these first, then the loader for a shared library.) */
typedef int (*pmi1_initialized)(int *initialized);
typedef int (*pmi2_initialized)(void);

extern int PMI_Initialized(int *initialized) __attribute__((weak));
extern int PMI2_Initialized(void) __attribute__((weak));

/* The function, or NULL when no such function is linked into the program. */
__attribute__((visibility("hidden"))) pmi1_initialized pmi_core_weak_pmi_initialized(void)
{
    return PMI_Initialized;
}

__attribute__((visibility("hidden"))) pmi2_initialized pmi_core_weak_pmi2_initialized(void)
{
    return PMI2_Initialized;
}
