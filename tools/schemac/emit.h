/* What the C emitters share: a growable text buffer that indents, C
 * literal and comment escaping, and the C spelling of a schema's type.
 * Each emit_*.c writes one concern of the generated files from the model. */
#ifndef SCHEMAC_EMIT_H
#define SCHEMAC_EMIT_H

#include "model.h"

struct sc_out {
	char *buf;
	size_t len, cap;
	int indent; /* tabs before each line written with out_line */
};

void out_raw(struct sc_out *o, const char *s, size_t n);
void out_f(struct sc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line at the current indent. */
void out_line(struct sc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_blank(struct sc_out *o);
/* Fixed text: a NULL-terminated list of lines, each at the current indent. */
void out_lines(struct sc_out *o, const char *const *lines);
void out_open(struct sc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* line, indent++ */
void out_close(struct sc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* indent--, line */

/* The bytes s[0..n) as a C string literal, quotes included. */
char *c_string(const char *s, size_t n);
static inline char *c_str(const char *s)
{
	return c_string(s, __builtin_strlen(s));
}
/* Text that can sit inside a C comment on one line. */
char *c_comment(const char *s);
/* The member/variable type of a value of schema s ("int64_t", "struct Post"). */
char *c_type(const struct sc_schema *s);
/* JSON text of a key with a prefix and ':' (e.g. ,"title":), as a C literal. */
char *json_key_literal(const char *prefix, const char *key);

/* The generated files' header comment. */
void emit_banner(struct sc_model *m, struct sc_out *o, const char *role);

/* The emitters, in the order the files hold their output. */
void emit_types(struct sc_model *m, struct sc_out *h);     /* api.h */
void emit_encoders(struct sc_model *m, struct sc_out *c);  /* api.c: response writers */
void emit_decoders(struct sc_model *m, struct sc_out *c);  /* api.c: parameter decoders and checks */
void emit_router(struct sc_model *m, struct sc_out *c);    /* api.c: run_<op> and route() */
void emit_app(struct sc_model *m, struct sc_out *c);       /* api.c: document, app, main */

/* Facts the emitters ask of the model. */
bool op_has_encoder(const struct sc_op *op);
bool model_has_param_kind(const struct sc_model *m, enum sc_kind kind);

#endif
