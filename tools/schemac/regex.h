/* Build-time compilation of JSON Schema "pattern" regular expressions
 * (an ECMA-262 subset, documented in regex.c and the README) into C
 * matchers that run in linear time: the pattern becomes an NFA, then a DFA
 * by subset construction, then a table or switch in generated C. No
 * backtracking exists at run time, so no input can blow it up.
 *
 * Semantics: JSON Schema patterns are not anchored: the matcher answers
 * whether the pattern matches anywhere in the string, unless ^ or $ anchor
 * it. Input is UTF-8 and the pattern works on code points. */
#ifndef SCHEMAC_REGEX_H
#define SCHEMAC_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#include "emit.h"

struct sc_regex;

/* Compiles pattern; on unsupported or invalid syntax returns NULL and
 * writes a message naming the construct to err (e.g. "backreference \1 is
 * not supported"). */
struct sc_regex *regex_compile(const char *pattern, char *err, size_t errlen);

/* Emits `static bool <fn_name>(const char *s, size_t n)` into o. The input
 * is assumed to be valid UTF-8 (the JSON reader checked it). */
void regex_emit(const struct sc_regex *re, const char *fn_name, struct sc_out *o);

void regex_free(struct sc_regex *re);

#endif
