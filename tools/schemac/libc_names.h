/* The names that the C library's headers, as the generated api.h includes
 * them (api_includes.h), declare or define: a table generated at build time
 * by tools/schemac/libc-names from musl's headers, never kept by hand. */
#ifndef SCHEMAC_LIBC_NAMES_H
#define SCHEMAC_LIBC_NAMES_H

#include <stddef.h>

struct sc_libc_name {
	const char *name;
	const char *header; /* where it is declared, as an #include names it */
};

/* Sorted by name (strcmp). */
extern const struct sc_libc_name sc_libc_names[];
extern const size_t sc_libc_nnames;

#endif
