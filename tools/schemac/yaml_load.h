/* Reads an OpenAPI document written in YAML 1.2 (libyaml parses it) into the
 * cJSON value the same document in JSON gives, so that everything after
 * loading is one path whatever the input's form. */
#ifndef SCHEMAC_YAML_LOAD_H
#define SCHEMAC_YAML_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "alloc.h"

/* Where the nodes of a YAML document were written: each node's JSON
 * pointer (a mapping member's is its key's) with its line and column, so
 * that a message about any place in the document can name one. */
struct sc_pos {
	char *ptr;
	unsigned long line, col;
};
struct sc_yaml_positions {
	struct sc_pos *at;
	size_t n, cap;
};

/* True when the file name says YAML (.yaml or .yml); anything else is JSON. */
bool sc_is_yaml_file(const char *file);

/* Parses text as one YAML document and converts it: scalars by YAML 1.2's
 * core schema (null, booleans, integers in decimal, 0o octal and 0x hex,
 * floats; quoted scalars and everything else are strings), anchors and
 * aliases expanded (at most SC_YAML_MAX_NODES nodes in all, no cycle).
 * Mapping keys are scalars kept as their text, so `200:` is the key "200":
 * JSON keys are strings. Refused, with file:line:col: what JSON cannot hold
 * (.inf, .nan, a collection as a key, U+0000 in a string), tags, duplicate
 * keys, more than one document, each printed as "schemac: file:line:col:
 * message" and counted in *errors. Fills pos (empty on entry). NULL after
 * errors. */
cJSON *sc_yaml_parse(const char *file, const char *text, size_t len, struct sc_yaml_positions *pos,
		     unsigned *errors);

/* Far more than any API's document; a few aliases of aliases ("billion
 * laughs") reach it long before they exhaust memory or time. */
#define SC_YAML_MAX_NODES 200000

/* The source position of the node at ptr, or of its nearest ancestor that
 * has one; false when pos is empty (the document was not YAML) or ptr is
 * no pointer. */
bool sc_yaml_where(const struct sc_yaml_positions *pos, const char *ptr, unsigned long *line, unsigned long *col);

#endif
