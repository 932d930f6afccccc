/* The schema compiler's allocations and strings (alloc.h): out of memory
 * ends the program with exit status 2. */
#include "alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *sc_xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	return p;
}

void *sc_xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "schemac: out of memory\n");
		exit(2);
	}
	return p;
}

char *sc_strdup(const char *s)
{
	size_t n = strlen(s);
	char *d = sc_xmalloc(n + 1);
	memcpy(d, s, n + 1);
	return d;
}

char *sc_vprintf(const char *fmt, va_list ap)
{
	/* Also keeps GCC 12 with UBSan from seeing a NULL format here. */
	if (!fmt)
		abort();
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	char *s = sc_xmalloc((size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *sc_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = sc_vprintf(fmt, ap);
	va_end(ap);
	return s;
}

char *sc_ptr_key(const char *ptr, const char *key)
{
	size_t n = strlen(ptr), extra = 0;
	for (const char *k = key; *k; k++)
		extra += (*k == '~' || *k == '/');
	char *s = sc_xmalloc(n + 1 + strlen(key) + extra + 1);
	char *d = s + n;
	memcpy(s, ptr, n);
	*d++ = '/';
	for (const char *k = key; *k; k++) {
		if (*k == '~' || *k == '/') {
			*d++ = '~';
			*d++ = *k == '~' ? '0' : '1';
		} else {
			*d++ = *k;
		}
	}
	*d = 0;
	return s;
}

char *sc_ptr_index(const char *ptr, int i)
{
	return sc_printf("%s/%d", ptr, i);
}
