/* JSON escaping shared by the body writer and the logger. */
#ifndef KERNEL_JSON_H
#define KERNEL_JSON_H

#include <stddef.h>

/* Writes s[0..n) escaped for a JSON string body (no quotes) to dst, which
 * must hold 6*n bytes; returns bytes written. Control characters become
 * \uXXXX (or \n, \t ...); bytes >= 0x80 pass through (UTF-8 is the caller's
 * contract). */
size_t ig_json_escape(char *dst, const char *s, size_t n);

#endif
