/* The schema compiler's model: the OpenAPI document parsed into paths,
 * operations, parameters, request bodies, responses and a tree of schema
 * nodes, checked and named, with no C text in it. The emitters (emit_*.c)
 * read only this model; cJSON stays inside model.c and schema.c (and the
 * embedding of the document and of enum/const/default values). */
#ifndef SCHEMAC_MODEL_H
#define SCHEMAC_MODEL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "alloc.h"
#include "kernel/runtime/cron_expr.h"
#include "yaml_load.h"

/* How a value of a schema is held in C: a typed member (string ->
 * ig_str, integer -> int64_t, ...) decoded in one pass from the bytes, or
 * a free-form ig_json_value checked by a generated validator. A schema is
 * typed when it has one type (or one type and "null", see nullable) and
 * only keywords a one-pass decoder checks; anything else (no type, several
 * types, anyOf/oneOf/not/allOf, a $ref beside other keywords, ...) is a
 * value. */
enum sc_kind {
	SC_REF,     /* only a $ref (and annotations): see target */
	SC_STRING,
	SC_INTEGER,
	SC_NUMBER,
	SC_BOOLEAN,
	SC_OBJECT,
	SC_ARRAY,
	SC_VALUE,   /* const ig_json_value *, walked by validate_<name> */
};

/* JSON types, as a set ("type": [...]). */
enum {
	SC_T_NULL = 1,
	SC_T_BOOLEAN = 2,
	SC_T_OBJECT = 4,
	SC_T_ARRAY = 8,
	SC_T_NUMBER = 16,  /* any number, integers included */
	SC_T_STRING = 32,
	SC_T_INTEGER = 64, /* only integers (1.0 is one) */
	SC_T_ALL = 127 - SC_T_INTEGER,
};

/* A number of the schema (minimum, maximum, ..., multipleOf). */
struct sc_number {
	bool set;
	double d;
	bool is_int;     /* integral and within int64: i holds it exactly */
	int64_t i;
	char *text;      /* as written in messages ("1", "0.01") */
	/* multipleOf only: the value is digits * 10^-scale, exactly. */
	uint64_t digits;
	int scale;
};

enum sc_format { SC_FMT_NONE, SC_FMT_DATE_TIME, SC_FMT_DATE, SC_FMT_EMAIL, SC_FMT_UUID, SC_FMT_URI };

enum sc_additional {
	SC_AP_ABSENT, /* not written: other members are allowed and skipped */
	SC_AP_FALSE,  /* no other members */
	SC_AP_SCHEMA, /* other members are kept and checked (true is the schema {}) */
};

struct sc_schema;
struct sc_regex;

struct sc_prop {
	char *name;   /* the JSON key */
	char *cname;  /* the C member name */
	bool required;
	struct sc_schema *schema;
};

struct sc_pattern_prop {
	char *pattern;
	struct sc_regex *re;
	char *fn;     /* its matcher's name */
	struct sc_schema *schema;
};

struct sc_dep_required {
	char *name;
	char **names;
	size_t n;
};

struct sc_dep_schema {
	char *name;
	struct sc_schema *schema;
};

struct sc_mapping {
	char *value;               /* the discriminator's value */
	struct sc_schema *target;  /* the branch it selects */
};

struct sc_schema {
	enum sc_kind kind;
	char *ptr;          /* JSON pointer of its definition, for messages and $ref */
	char *component;    /* its name under components/schemas, or NULL */
	char *name;         /* base of its generated names (validate_<name>, ...) */
	char *cname;        /* struct name (typed objects and arrays only) */
	char *doc;          /* title or description, for a comment; may be NULL */
	struct sc_schema *target; /* SC_REF only */
	char *ref_text;     /* the $ref as written, until resolved */
	bool annotations_only; /* only annotations: accepts every value */

	unsigned types;     /* SC_T_* allowed by "type"; 0 when there is no "type" */
	bool nullable;      /* typed kind that also takes null: a null_<name> flag beside it */
	bool never;         /* the schema false: no value is valid */
	struct sc_schema *ref; /* a $ref beside other keywords: applies like allOf */

	/* objects */
	struct sc_prop *props; /* in document order */
	size_t nprops;
	char **required;    /* every name of "required", in or out of properties */
	size_t nrequired;
	enum sc_additional additional;
	struct sc_schema *additional_schema; /* SC_AP_SCHEMA */
	struct sc_pattern_prop *pattern_props;
	size_t npattern_props;
	struct sc_schema *property_names;
	struct sc_dep_required *dep_required;
	size_t ndep_required;
	struct sc_dep_schema *dep_schemas;
	size_t ndep_schemas;
	bool has_min_props, has_max_props;
	uint64_t min_props, max_props;

	/* arrays */
	struct sc_schema *items; /* NULL: any items */
	struct sc_schema **prefix_items;
	size_t nprefix_items;
	struct sc_schema *contains;
	bool has_min_contains, has_max_contains;
	uint64_t min_contains, max_contains;
	bool has_min_items, has_max_items;
	uint64_t min_items, max_items;
	bool unique_items;

	/* numbers */
	struct sc_number minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;

	/* strings */
	bool has_min_length, has_max_length;
	uint64_t min_length, max_length; /* in code points */
	char *pattern;
	struct sc_regex *regex;
	char *pattern_fn;   /* its matcher's name */
	enum sc_format format;

	/* any type */
	const cJSON *enum_values; /* the "enum" array, or NULL */
	const cJSON *const_value; /* "const", or NULL */
	const cJSON *default_value;
	struct sc_schema **all_of, **any_of, **one_of;
	size_t nall_of, nany_of, none_of;
	struct sc_schema *not_schema;
	struct sc_schema *if_schema, *then_schema, *else_schema;
	struct sc_schema **defs; /* $defs, compiled only when referred to */
	size_t ndefs;
	char *discriminator;  /* its propertyName, or NULL */
	struct sc_mapping *mapping; /* explicit and implicit (by component name) */
	size_t nmapping;

	/* Emitter state. */
	int type_mark;      /* emit_types: 0 new, 1 being emitted, 2 emitted, 3 declared */
	bool swept;         /* emit_types: its struct and the ones below are out */
	bool encoder_used;  /* emit_encode: some response reaches it */
	bool encoder_hot;   /* emit_encode: a response or a topic (not only events) reaches it */
	bool writer_listed; /* emit_encode: in the list of writers */
	bool decoder_used;  /* emit_body: some request body decodes it typed */
	bool decoder_hot;   /* emit_body: a request's path reaches it (not only a WebSocket's messages) */
	bool param_used;    /* emit_decode: a parameter (or its items) has it */
	bool decoder_listed;
	unsigned validator_use; /* emit_validate: VALIDATE_* bits */
	bool validator_listed;
	bool regex_emitted;
	int const_id;       /* emit_validate: first of its constants, or 0 */
};

enum sc_param_in { SC_IN_PATH, SC_IN_QUERY, SC_IN_HEADER };

struct sc_param {
	char *name;   /* as in the document and in error reports */
	char *cname;  /* the member of the in struct */
	enum sc_param_in in;
	bool required;
	bool explode; /* query arrays: repeated keys (true) or one comma-separated value */
	struct sc_schema *schema;
	size_t segment; /* SC_IN_PATH: index of its path segment */
	char *ptr;
};

struct sc_header {
	char *name;
	bool required;
	struct sc_schema *schema;
	char *ptr;
};

/* How a response is keyed: one status ("404"), a range ("4XX") or
 * "default"; an exact status wins over its range, a range over default. */
enum sc_resp_key { SC_RESP_STATUS, SC_RESP_RANGE, SC_RESP_DEFAULT };

struct sc_response {
	enum sc_resp_key key_kind;
	int status;      /* SC_RESP_STATUS: the status; SC_RESP_RANGE: its first digit (2 for 2XX); 0 */
	char *key;       /* as the document writes it: "404", "4XX", "default" (r<key> in the out struct) */
	struct sc_schema *schema; /* application/json (or problem+json) schema, or NULL */
	/* application/problem+json: the runtime's problem (no schema, or the
	 * Problem schema schemac provides), written by ig_encode_problem or
	 * answered by ig_respond_problem; no member in the out struct. */
	bool problem;
	/* The app's own schema under application/problem+json: its encoder
	 * sets that Content-Type. */
	bool problem_type;
	/* A text/plain or text/html body instead: the media type as the
	 * document writes it ("text/html; charset=utf-8"), sent as the
	 * Content-Type; the handler hands the body over as an ig_str. */
	char *text_type;
	/* text/event-stream (sse_ext.c): the component each event is, and
	 * where the document names it; the operation is a stream. */
	struct sc_schema *event;
	char *event_ptr;
	struct sc_header *headers; /* declared response headers (documentation) */
	size_t nheaders;
	char *ptr;
};

struct sc_path;

/* An x-ingot-rate-limit (rate_limit_ext.c). */
struct sc_rate_limit {
	char *name;   /* its policy's name: the operationId, or "global" */
	unsigned id;  /* its index in the model's list */
	uint32_t rate, burst;
	uint64_t per_us, interval_us;
	char *header; /* keyed by this request header; NULL: by the client's address, or: */
	bool subject; /* by the principal's subject (without one: the client's address) */
	char *ptr;
};

/* x-ingot-hooks (hooks_ext.c): the C functions named, in order. */
struct sc_hooks {
	char **before, **after;
	size_t nbefore, nafter;
};

/* An x-ingot-cron job (cron_ext.c): the operation it calls, and when. */
struct sc_cron_job {
	char *name;
	char *schedule;  /* as written: the `every` period or the cron expression */
	bool every;
	struct ig_cron_expr expr; /* parsed by the runtime's kernel/runtime/cron_expr.c */
	struct sc_op *op;
	char *ptr;       /* the job's JSON pointer (/x-ingot-cron/N) */
};

/* An x-ingot-topics topic (pubsub_ext.c): its messages are one component,
 * a typed object. */
struct sc_topic {
	char *name;      /* the document's: lower-case, digits, '-' */
	char *cname;     /* in C names: '-' as '_' (ig_publish_<cname>) */
	struct sc_schema *message; /* the component under components/schemas */
	char *ordering_key; /* a required string or integer member of the message, or NULL */
	char *ptr;
};

/* An x-ingot-subscriptions subscription (pubsub_ext.c). */
struct sc_subscription {
	char *name, *cname;
	struct sc_topic *topic;
	char *handler;   /* the app's C function */
	uint32_t max_attempts, max_concurrency;
	uint64_t min_backoff_us, max_backoff_us, ack_deadline_us;
	struct sc_topic *dead_letter; /* NULL: a message out of attempts is dropped, logged */
	char *ptr;
};

struct sc_op {
	char *id;         /* operationId: the handler's name */
	const char *method; /* "GET", "POST", ...; HEAD and OPTIONS are implied */
	struct sc_path *path;
	char *summary;
	struct sc_param *params;
	size_t nparams;
	struct sc_schema *body;   /* requestBody application/json schema, or NULL */
	bool body_required;
	char *body_ptr;
	bool validate;            /* false: x-ingot-validate: false */
	struct sc_rate_limit *rate_limit; /* its own, or the root's; NULL: none */
	bool param_failed;        /* a parameter was refused (and reported): no more about them */
	struct sc_response *responses;
	size_t nresponses;
	char *ptr;
	const cJSON *security_json; /* its own security, or NULL: the document's */
	struct sc_security *security; /* NULL: open (none, or []) */
	/* x-ingot-access-token-query: true (security.c): a stream whose bearer
	   token may come as ?access_token= (RFC 6750 2.3); where it says so, or
	   NULL */
	char *query_token_ptr;
	struct sc_hooks hooks; /* its own x-ingot-hooks (the root's are m->hooks) */
	/* x-ingot-websocket (ws_ext.c): each inbound and outbound message's
	   component, and where the document declares them; NULL: not one. */
	struct sc_schema *ws_in, *ws_out;
	char *ws_ptr;
	/* x-ingot-stream-body (stream_body_ext.c): the body's limit in bytes,
	   and where the document says so; NULL: the body (if any) is JSON. */
	uint64_t stream_body_max;
	char *stream_body_ptr;
};

/* components/securitySchemes (security.c); oauth2 and openIdConnect are
 * bearer JWTs. In net/api/security.h's enum ig_sec_type's order. */
enum sc_scheme_type { SC_SEC_BEARER, SC_SEC_API_KEY, SC_SEC_BASIC, SC_SEC_MUTUAL_TLS };
struct sc_scheme {
	char *name;
	size_t index; /* in the model's schemes: the table's number */
	enum sc_scheme_type type;
	int in;       /* SC_SEC_API_KEY: 0 header, 1 query, 2 cookie */
	char *param;  /* SC_SEC_API_KEY: the field's name */
	char *oidc_url; /* openIdConnect: its openIdConnectUrl (the runtime's discovery) */
	bool oauth2;  /* its flows declare the scopes a requirement may name */
	char **scopes;
	size_t nscopes;
};
struct sc_sec_use {
	struct sc_scheme *scheme;
	char **scopes;
	size_t nscopes;
};
struct sc_sec_alt {
	struct sc_sec_use *uses;
	size_t nuses;
};
struct sc_security {
	struct sc_sec_alt *alts;
	size_t nalts;
};

struct sc_segment {
	char *text;  /* literal text, or the parameter name */
	bool param;
};

struct sc_path {
	char *tmpl; /* "/blog/{id}" */
	struct sc_segment *segs;
	size_t nsegs;
	struct sc_op **ops; /* in the order of the methods table */
	size_t nops;
	bool builtin_openapi; /* the path serving the document itself */
	char *ptr;
	size_t index; /* in the model's paths: the route's number at run time */
};

struct sc_model {
	const char *file;
	cJSON *doc;
	struct sc_yaml_positions pos; /* YAML input only */
	char *title, *version;
	/* x-ingot-cors (cors_ext.c): the runtime's CORS defaults */
	struct {
		bool present, credentials;
		char *origins, *expose_headers; /* ", "-joined; expose_headers may be NULL */
		long max_age;
	} cors;
	/* x-ingot-rate-limit (rate_limit_ext.c): every limit stated, and the
	   root's (NULL: none) */
	struct sc_rate_limit **rate_limits, *rate_global;
	size_t nrate_limits;
	/* x-ingot-hooks at the root (hooks_ext.c): every operation's */
	struct sc_hooks hooks;
	/* x-ingot-cron (cron_ext.c): the jobs, in document order */
	struct sc_cron_job **cron_jobs;
	size_t ncron_jobs;
	/* x-ingot-topics and x-ingot-subscriptions (pubsub_ext.c), in document order */
	struct sc_topic **topics;
	size_t ntopics;
	struct sc_subscription **subs;
	size_t nsubs;
	bool standalone;    /* a bare JSON Schema (--validator), not an OpenAPI document */
	struct sc_schema *root; /* standalone: the document's schema */

	struct sc_scheme **schemes; /* components/securitySchemes, document order */
	size_t nschemes;
	bool bearer_used;    /* some operation takes a bearer JWT (http bearer, oauth2, openIdConnect) */
	char *discovery_url; /* the openIdConnectUrl of the openIdConnect scheme operations use, or NULL */
	/* The root's x-ingot-principal (security.c): the component schema
	   (a typed object) the principal's data is, or NULL */
	struct sc_schema *principal;
	bool handler_used;   /* some operation takes an apiKey or basic scheme (ig_auth_handler) */
	struct sc_schema **components; /* components/schemas, document order */
	size_t ncomponents;
	struct sc_path **paths;
	size_t npaths;
	struct sc_op **ops; /* every operation, document order */
	size_t nops;

	/* Every schema node, in the order parsed (for $ref by JSON pointer). */
	struct sc_schema **nodes;
	size_t nnodes;

	/* Every method some path answers, as an Allow value for "OPTIONS *". */
	char *all_methods;

	unsigned errors;
	/* Messages printed so far ("<ptr>\n<message>"): a component referred
	 * to from several places reports each problem once. */
	char **printed;
	size_t nprinted;
	/* components/schemas/Problem as schemac provides it (the runtime's
	 * problem+json), when the document refers to it without defining it. */
	bool problem_provided;
	struct sc_schema *problem_schema;
};

/* Parses and checks the document, JSON or YAML by the file's extension
 * (yaml_load.h). Problems are printed as "schemac: <file>: <json pointer>:
 * <message>" ("<file>:<line>:<col>: <json pointer>" for YAML) and counted in m->errors;
 * the model is only usable when that count is zero. */
/* security.c: components/securitySchemes, the root's security and each
 * operation's, into m->schemes and op->security. */
void sc_parse_security(struct sc_model *m, const cJSON *doc);
/* security.c: x-ingot-principal's schema must be a typed object (after
 * sc_finish_schemas has decided kinds). */
void sc_check_principal(struct sc_model *m);
/* security.c: x-ingot-access-token-query only on a stream (SSE or
 * WebSocket) whose security has a bearer scheme (after the operations'
 * responses and security are in). */
void sc_check_query_tokens(struct sc_model *m);

void sc_model_load(struct sc_model *m, const char *file, const char *text, size_t len);

/* A bare JSON Schema (draft 2020-12 subset) whose validator is named name;
 * $ref works within the document ("#", "#/$defs/x", any JSON pointer). */
void sc_model_load_schema(struct sc_model *m, const char *file, const char *text, size_t len, const char *name);

/* Follows $ref links to the schema that says what a value is. */
const struct sc_schema *sc_resolve(const struct sc_schema *s);

/* The Allow value for one path ("GET, HEAD, OPTIONS"). */
char *sc_path_allow(const struct sc_path *p);

/* Calls fn on every schema directly under s (properties, items, allOf
 * members, ...), not through $ref. */
void sc_children(struct sc_schema *s, void (*fn)(struct sc_schema *child, void *arg), void *arg);

/* Prints "schemac: <file>: <ptr>: <message>" (with the line and column of
 * ptr when the document was YAML) and counts it in m->errors. */
void sc_error(struct sc_model *m, const char *ptr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- shared by model.c and schema.c ---- */

struct sc_keyword {
	const char *name;
	const char *hint; /* NULL: understood or an annotation; else: unsupported */
};

void sc_check_keys(struct sc_model *m, const cJSON *obj, const char *ptr, const struct sc_keyword *table);
const cJSON *sc_get(const cJSON *obj, const char *key);
char *sc_get_string(struct sc_model *m, const cJSON *obj, const char *ptr, const char *key, bool required);
/* The component that j, at ptr, names: j must be {"$ref":
 * "#/components/schemas/<Name>"} and Name a component. NULL, and an
 * error that calls j `what` ("an event schema"), when it is not. */
struct sc_schema *sc_component_ref(struct sc_model *m, const cJSON *j, const char *ptr, const char *what);
/* A C member name for a JSON key: other characters become '_'. */
char *sc_member_name(const char *key);
bool sc_is_global_ident(const char *s);

/* The JSON pointer of a "#..." reference (its fragment, %-decoded). */
char *sc_ref_pointer(const char *ref);
/* The document's value at a JSON pointer, or NULL. */
const cJSON *sc_lookup(const cJSON *doc, const char *ptr);

/* schema.c: parses the schema j found at ptr (a $ref is resolved later,
 * by sc_resolve_refs). */
struct sc_schema *sc_parse_schema(struct sc_model *m, const cJSON *j, const char *ptr);
/* Resolves every $ref, decides each schema's kind; run once, after parsing. */
void sc_finish_schemas(struct sc_model *m);
/* The default of a schema, through $ref aliases; NULL if none. */
const cJSON *sc_default(const struct sc_schema *s);
/* "string", "integer or null", ... for messages. */
char *sc_types_text(unsigned types);

/* Reads the root's x-ingot-cors into m->cors (cors_ext.c). */
void sc_parse_cors(struct sc_model *m, const cJSON *doc);

/* Reads the root's x-ingot-cron into m->cron_jobs (cron_ext.c); after
 * the paths, whose operations the jobs name. */
void sc_parse_cron(struct sc_model *m, const cJSON *doc);
/* A name that may start the name of a platform's object (a Kubernetes
 * object, an EventBridge schedule): a DNS label, lower-case, at most 63. */
bool sc_cron_label_ok(const char *s);

/* Reads the root's x-ingot-topics and x-ingot-subscriptions (pubsub_ext.c),
 * after the components and the operations (a handler is no operationId);
 * sc_check_pubsub judges the messages' schemas once their kinds are known
 * (after sc_finish_schemas). */
void sc_parse_pubsub(struct sc_model *m, const cJSON *doc);
void sc_check_pubsub(struct sc_model *m);

/* sse_ext.c: whether a media type is text/event-stream; its media type
 * object at pm read (for a response of status; NULL and errors when bad);
 * once kinds are known, the event schemas must be typed objects; an
 * operation's event schema (NULL: it is no stream); whether any is. */
bool sc_is_event_stream(const char *type);
struct sc_schema *sc_parse_event_stream(struct sc_model *m, const cJSON *media, const char *pm, int status);
void sc_check_events(struct sc_model *m);
const struct sc_schema *sc_op_event(const struct sc_op *op);
bool sc_has_streams(const struct sc_model *m);
/* ws_ext.c */
void sc_parse_websocket(struct sc_model *m, struct sc_op *op, const cJSON *j, const char *ptr);
void sc_check_websockets(struct sc_model *m);
bool sc_op_is_websocket(const struct sc_op *op);
/* An event stream or a WebSocket: its code goes to the cold block. */
bool sc_op_is_stream(const struct sc_op *op);
bool sc_has_websockets(const struct sc_model *m);

/* stream_body_ext.c: x-ingot-stream-body at ptr; then the request body's
 * content map (under the request body at ptr), every media type bytes;
 * whether a media type is JSON (application/json or a +json type). */
void sc_parse_stream_body(struct sc_model *m, struct sc_op *op, const cJSON *j, const char *ptr);
void sc_parse_stream_content(struct sc_model *m, struct sc_op *op, const cJSON *content, const char *ptr);
bool sc_is_json_media(const char *type);
/* model.c: a text or bytes body's schema, if any, only says it is a string
 * (for binary, perhaps of format binary). */
void sc_check_text_schema(struct sc_model *m, const cJSON *media, const char *pm, bool binary);

/* "250ms", "1s", "1m", "1h" in microseconds, at most a day; 0 when it is
 * none (rate_limit_ext.c). */
uint64_t sc_period_us(const char *s);

/* Reads an x-ingot-rate-limit object found at ptr into a new limit named
 * name (listed in m->rate_limits); NULL, and errors, when it is bad. */
struct sc_rate_limit *sc_parse_rate_limit(struct sc_model *m, const cJSON *v, const char *ptr, const char *name);
/* Whether some operation's limit is keyed by the client's address. */
bool sc_rate_limits_need_peer(const struct sc_model *m);

/* Reads an x-ingot-hooks object found at ptr into *h; errors when bad. */
void sc_parse_hooks(struct sc_model *m, const cJSON *v, const char *ptr, struct sc_hooks *h);
/* Once every operation is read: a hook's name must be no operationId, and
 * one name is a before- or an after-hook, not both. */
void sc_check_hooks(struct sc_model *m);
/* Whether the document names any hook. */
bool sc_has_hooks(const struct sc_model *m);
/* The header through which api.h declares the C library's name s, or NULL. */
const char *sc_libc_header(const char *s);

#endif
