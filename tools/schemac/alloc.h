/* Memory and strings for the schema compiler, a short-lived host program:
 * an allocation that fails ends it (exit 2), so no caller checks for NULL,
 * and nothing is freed before exit but what a loop would pile up. Below
 * every other module of schemac. */
#ifndef SCHEMAC_ALLOC_H
#define SCHEMAC_ALLOC_H

#include <stdarg.h>
#include <stddef.h>

/* Zeroed, like calloc. */
void *sc_xmalloc(size_t n);
void *sc_xrealloc(void *p, size_t n);
char *sc_strdup(const char *s);
char *sc_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *sc_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Appends item to the array arr of n items, growing it by one. */
#define SC_APPEND(arr, n, item) \
	do { \
		(arr) = sc_xrealloc((arr), sizeof *(arr) * ((n) + 1)); \
		(arr)[(n)++] = (item); \
	} while (0)

/* The JSON pointer (RFC 6901) of a member / an element of the value at
 * ptr, as every message names a place in the document. */
char *sc_ptr_key(const char *ptr, const char *key);
char *sc_ptr_index(const char *ptr, int i);

#endif
