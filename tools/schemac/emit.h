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
/* The member/variable type of a value of schema s ("int64_t", "struct Post",
 * "const ig_json_value *"). */
char *c_type(const struct sc_schema *s);
/* Slots: where a value sits (a property has room for a null flag beside
 * it; array items, bodies and responses do not). A slot holds an
 * ig_json_value when its schema is free-form, or nullable without a flag. */
bool slot_is_value(const struct sc_schema *s, bool null_flag);
char *slot_type(const struct sc_schema *s, bool null_flag);
/* The typed object or array a slot holds by value as a struct, or NULL. */
const struct sc_schema *slot_struct(const struct sc_schema *s, bool null_flag);
bool prop_has_flag(const struct sc_prop *p);   /* has_<name> */
bool prop_null_flag(const struct sc_prop *p);  /* null_<name> */
bool param_has_flag(const struct sc_param *p); /* has_<name> */
/* JSON text of a key with a prefix and ':' (e.g. ,"title":), as a C literal. */
char *json_key_literal(const char *prefix, const char *key);

/* The generated files' header comment. */
void emit_banner(struct sc_model *m, struct sc_out *o, const char *role);

/* The emitters, in the order the files hold their output. */
void emit_types(struct sc_model *m, struct sc_out *h);     /* api.h */
void emit_encoders(struct sc_model *m, struct sc_out *c);  /* api.c: response writers */
void emit_decoders(struct sc_model *m, struct sc_out *c);  /* api.c: parameter decoders and checks */
void emit_router(struct sc_model *m, struct sc_out *c);    /* api.c: operation descriptors and ig_route() */
/* The rate limits' data (rate_limit_ext.c), before the descriptors. */
void emit_rate_limits(struct sc_model *m, struct sc_out *c);
/* pubsub_ext.c: x-ingot-subscriptions' handler prototypes (api.h), and
 * the topics' and subscriptions' table (api.c, net/pubsub/topics.h). */
void emit_pubsub_prototypes(struct sc_model *m, struct sc_out *h);
void emit_pubsub_table(struct sc_model *m, struct sc_out *c);
/* sse_ext.c: the typed sends' prototypes (api.h) and bodies (api.c, after
 * the encoders' writers). */
void emit_sse_prototypes(struct sc_model *m, struct sc_out *h);
void emit_sse_sends(struct sc_model *m, struct sc_out *c);
/* ws_ext.c: the WebSocket operations' upgrades, sends and message
   handlers' prototypes (api.h), and their code (api.c). */
void emit_ws_prototypes(struct sc_model *m, struct sc_out *h);
void emit_ws_code(struct sc_model *m, struct sc_out *c);
void emit_cron_jobs(struct sc_model *m, struct sc_out *c); /* api.c: x-ingot-cron's table, if any */
void emit_app(struct sc_model *m, struct sc_out *c);       /* api.c: document, ig_api_app */
/* x-ingot-hooks (hooks_ext.c): api.h's prototypes; an operation's table
 * (ig_hooks_<id>, when sc_op_has_hooks), before its descriptor; the app's
 * (ig_api_hooks, when the document names any hook), before ig_api_app. */
void emit_hook_prototypes(struct sc_model *m, struct sc_out *h);
bool sc_op_has_hooks(const struct sc_model *m, const struct sc_op *op);
void emit_op_hooks(struct sc_model *m, struct sc_out *c, const struct sc_op *op);
void emit_app_hooks(struct sc_model *m, struct sc_out *c);

/* cron_export.c: the jobs' PingSources (YAML documents, for the Knative
 * Service app) into y, returning how many; and job i's EventBridge
 * schedule (JSON) into o, or false. A job left out is warned about on
 * stderr, naming it and why; a conversion that fails its own check is an
 * error (m->errors). */
size_t sc_cron_pingsources(struct sc_model *m, const char *app, struct sc_out *y);
bool sc_cron_eventbridge(struct sc_model *m, size_t i, const char *app, struct sc_out *o);

/* emit_validate.c: validators over ig_json_value and what the decoders
 * share with them. */
enum { VALIDATE_REQUEST = 1, VALIDATE_RESPONSE = 2 };
void mark_validator(struct sc_schema *s, unsigned use);
/* Pattern matchers, member lookups, constants and validate_<name> for
 * every marked schema; those whose use is only check_only are marked unused. */
void emit_validators(struct sc_model *m, struct sc_out *c, unsigned check_only);
void emit_standalone(struct sc_model *m, struct sc_out *c, const char *name);
bool always_valid(const struct sc_schema *s);
char *validator_call(const struct sc_schema *s, const char *v, const char *x, const char *at);
char *msg_type(unsigned types);
char *msg_keyword(const struct sc_schema *s, const char *kw);
void emit_fail(struct sc_out *c, bool validator, const char *cond, const char *at, const char *kw, const char *msg);
void emit_keyword_fail(struct sc_out *c, bool validator, const char *cond, const char *at,
		       const struct sc_schema *s, const char *kw);
void emit_string_checks(struct sc_out *c, const struct sc_schema *s, bool validator, const char *ptr,
			const char *len, const char *at);
bool has_string_checks(const struct sc_schema *s);
bool has_number_checks(const struct sc_schema *s);

/* emit_body.c: request body decoders, and typed checks shared with
 * parameters. report_fmt is the statement that reports a violation, with
 * two %s for the keyword and message literals. */
void mark_body_decoders(struct sc_model *m);
/* A property a json or jsonb column fills through the generated decoder
 * (a typed object, or an array of them): api.h declares, and api.c
 * defines, ig_json_decode_<name> for each such property of a component's
 * object (emit_json_prototypes; mark_json_decoders before emitting). */
bool json_struct_slot(const struct sc_schema *slot);
void emit_json_prototypes(struct sc_model *m, struct sc_out *h);
void mark_json_decoders(struct sc_model *m);
void emit_body_decoders(struct sc_model *m, struct sc_out *c);
void emit_slot_decode(struct sc_out *c, const struct sc_schema *slot, bool null_flag, const char *target,
		      const char *null_target, const char *at);
void emit_scalar_checks(struct sc_out *c, const struct sc_schema *s, const char *var, const char *raw,
			const char *report_fmt);
bool has_scalar_checks(const struct sc_schema *s);
void emit_null_checks(struct sc_out *c, const struct sc_schema *s, const char *report_fmt);

/* emit_decode.c */
char *default_literal(const struct sc_schema *r, const cJSON *d, bool value);
bool op_has_path_params(const struct sc_op *op);
bool op_has_decoder(const struct sc_op *op);
void mark_param_schemas(struct sc_model *m);

/* emit_encode.c */
void mark_response_validators(struct sc_model *m);
/* How many of op's responses debug builds check (ig_responses_<op>). */
size_t op_checked_responses(const struct sc_op *op);

/* Emits v as static ig_json_value definitions; returns the C name. */
char *emit_json_constant(struct sc_out *c, const cJSON *v, const char *base);

/* Facts the emitters ask of the model. */
bool op_has_encoder(const struct sc_op *op);
bool model_has_params(const struct sc_model *m);

#endif
