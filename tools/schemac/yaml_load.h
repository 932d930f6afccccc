/* Reads an OpenAPI document written in YAML 1.2 (libyaml parses it) into the
 * cJSON value the same document in JSON gives, so that everything after
 * loading is one path whatever the input's form. */
#ifndef SCHEMAC_YAML_LOAD_H
#define SCHEMAC_YAML_LOAD_H

#include "model.h"

/* True when the file name says YAML (.yaml or .yml); anything else is JSON. */
bool sc_is_yaml_file(const char *file);

/* Parses text as one YAML document and converts it: scalars by YAML 1.2's
 * core schema (null, booleans, integers in decimal, 0o octal and 0x hex,
 * floats; quoted scalars and everything else are strings), anchors and
 * aliases expanded (at most SC_YAML_MAX_NODES nodes in all, no cycle).
 * Mapping keys are scalars kept as their text, so `200:` is the key "200":
 * JSON keys are strings. Refused, with file:line:col: what JSON cannot hold
 * (.inf, .nan, a collection as a key, U+0000 in a string), tags, duplicate
 * keys, more than one document. Fills m->pos so that sc_error names the
 * line and column of every JSON pointer it reports. NULL after errors. */
cJSON *sc_yaml_parse(struct sc_model *m, const char *text, size_t len);

/* Far more than any API's document; a few aliases of aliases ("billion
 * laughs") reach it long before they exhaust memory or time. */
#define SC_YAML_MAX_NODES 200000

/* The source position of the node at ptr, or of its nearest ancestor that
 * has one; false when the document was not YAML or ptr is no pointer. */
bool sc_yaml_where(const struct sc_model *m, const char *ptr, unsigned long *line, unsigned long *col);

#endif
