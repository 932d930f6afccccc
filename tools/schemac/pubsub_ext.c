/* The document's root extensions x-ingot-topics and x-ingot-subscriptions:
 * topics (a name, the message's component schema, an ordering key) and
 * subscriptions (a topic, the app's C handler, retries, backoff, ack
 * deadline, concurrency, a dead-letter topic). Judged here, so a bad one
 * fails the build at its place in the document; emitted as the handlers'
 * prototypes in api.h and as data (net/pubsub/topics.h) for the runtime. */
#include "emit.h"

#include <stdlib.h>
#include <string.h>

static const struct sc_keyword topic_keys[] = {
	{ "name", NULL }, { "message", NULL }, { "orderingKey", NULL }, { "description", NULL }, { NULL, NULL },
};

static const struct sc_keyword sub_keys[] = {
	{ "name", NULL }, { "topic", NULL }, { "handler", NULL }, { "maxAttempts", NULL },
	{ "minBackoff", NULL }, { "maxBackoff", NULL }, { "ackDeadline", NULL }, { "maxConcurrency", NULL },
	{ "deadLetterTopic", NULL }, { "description", NULL }, { NULL, NULL },
};

static char *c_name(const char *name)
{
	char *s = sc_strdup(name);
	for (char *p = s; *p; p++)
		if (*p == '-')
			*p = '_';
	return s;
}

static struct sc_topic *find_topic(const struct sc_model *m, const char *name)
{
	for (size_t i = 0; i < m->ntopics; i++)
		if (strcmp(m->topics[i]->name, name) == 0)
			return m->topics[i];
	return NULL;
}

/* A name of the document: a DNS label, as cron jobs' (a provider's
 * object, a NATS stream or an SQS queue, may carry it). */
static char *get_name(struct sc_model *m, const cJSON *j, const char *ptr, const char *what)
{
	char *name = sc_get_string(m, j, ptr, "name", true);
	if (name && !sc_cron_label_ok(name)) {
		char *np = sc_ptr_key(ptr, "name");
		sc_error(m, np, "%s name \"%s\" must be 1 to 63 lower-case letters, digits and '-', starting with a "
				"letter and not ending with '-'", what, name);
		free(np);
		free(name);
		return NULL;
	}
	return name;
}

static void parse_topic(struct sc_model *m, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a topic is an object {name, message, orderingKey}");
		return;
	}
	sc_check_keys(m, j, ptr, topic_keys);
	unsigned before = m->errors;
	char *name = get_name(m, j, ptr, "topic");
	if (name && find_topic(m, name))
		sc_error(m, ptr, "topic name \"%s\" is used by %s too", name, find_topic(m, name)->ptr);
	char *mp = sc_ptr_key(ptr, "message");
	struct sc_schema *schema = sc_component_ref(m, sc_get(j, "message"), mp, "a topic's message");
	free(mp);
	const cJSON *key = sc_get(j, "orderingKey");
	if (key && !cJSON_IsString(key)) {
		char *kp = sc_ptr_key(ptr, "orderingKey");
		sc_error(m, kp, "\"orderingKey\" must be the name of a member of the message");
		free(kp);
	}
	if (m->errors != before) {
		free(name);
		return;
	}
	struct sc_topic *t = sc_xmalloc(sizeof *t);
	t->name = name;
	t->cname = c_name(name);
	t->message = schema;
	t->ordering_key = key ? sc_strdup(key->valuestring) : NULL;
	t->ptr = sc_strdup(ptr);
	SC_APPEND(m->topics, m->ntopics, t);
}

/* A whole number in [lo, hi] at key, or dflt when absent; an error and
 * dflt when it is something else. */
static uint32_t get_count(struct sc_model *m, const cJSON *j, const char *ptr, const char *key, uint32_t lo,
			  uint32_t hi, uint32_t dflt)
{
	const cJSON *v = sc_get(j, key);
	if (!v)
		return dflt;
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble || v->valuedouble < lo ||
	    v->valuedouble > hi) {
		char *p = sc_ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be a whole number from %u to %u", key, (unsigned)lo, (unsigned)hi);
		free(p);
		return dflt;
	}
	return (uint32_t)v->valuedouble;
}

/* A period at key ("250ms", "10s", "1m"), at least lo_us; dflt_us when
 * absent. */
static uint64_t get_period(struct sc_model *m, const cJSON *j, const char *ptr, const char *key, uint64_t lo_us,
			   uint64_t dflt_us)
{
	const cJSON *v = sc_get(j, key);
	if (!v)
		return dflt_us;
	uint64_t us = cJSON_IsString(v) ? sc_period_us(v->valuestring) : 0;
	if (us < lo_us) {
		char *p = sc_ptr_key(ptr, key);
		sc_error(m, p, "\"%s\" must be a period: a whole number and ms, s, m or h (\"10s\", \"250ms\"), "
			       "from %s to a day", key, lo_us >= 1000000 ? "1s" : "1ms");
		free(p);
		return dflt_us;
	}
	return us;
}

static bool handler_taken(struct sc_model *m, const char *h, const char *ptr)
{
	for (size_t i = 0; i < m->nops; i++)
		if (strcmp(m->ops[i]->id, h) == 0) {
			sc_error(m, ptr, "handler \"%s\" is an operationId: an operation's handler", h);
			return true;
		}
	for (size_t i = 0; i < m->nsubs; i++)
		if (strcmp(m->subs[i]->handler, h) == 0) {
			sc_error(m, ptr, "handler \"%s\" is %s's too: each subscription has its own", h,
				 m->subs[i]->ptr);
			return true;
		}
	return false;
}

static void parse_sub(struct sc_model *m, const cJSON *j, const char *ptr)
{
	if (!cJSON_IsObject(j)) {
		sc_error(m, ptr, "a subscription is an object {name, topic, handler, maxAttempts, minBackoff, maxBackoff, "
				 "ackDeadline, maxConcurrency, deadLetterTopic}");
		return;
	}
	sc_check_keys(m, j, ptr, sub_keys);
	unsigned before = m->errors;
	char *name = get_name(m, j, ptr, "subscription");
	for (size_t i = 0; name && i < m->nsubs; i++)
		if (strcmp(m->subs[i]->name, name) == 0)
			sc_error(m, ptr, "subscription name \"%s\" is used by %s too", name, m->subs[i]->ptr);
	char *topic = sc_get_string(m, j, ptr, "topic", true);
	char *handler = sc_get_string(m, j, ptr, "handler", true);
	char *dead = sc_get_string(m, j, ptr, "deadLetterTopic", false);
	struct sc_subscription *s = sc_xmalloc(sizeof *s);
	char *tp = sc_ptr_key(ptr, "topic"), *hp = sc_ptr_key(ptr, "handler"), *dp = sc_ptr_key(ptr, "deadLetterTopic");
	if (topic && !(s->topic = find_topic(m, topic)))
		sc_error(m, tp, "no topic is named \"%s\" (x-ingot-topics)", topic);
	if (dead && !(s->dead_letter = find_topic(m, dead)))
		sc_error(m, dp, "no topic is named \"%s\" (x-ingot-topics)", dead);
	else if (s->dead_letter && s->dead_letter == s->topic)
		sc_error(m, dp, "the dead-letter topic is the subscription's own topic \"%s\": a failing message would "
				"come back forever", dead);
	else if (s->dead_letter && s->topic && s->dead_letter->message != s->topic->message)
		sc_error(m, dp, "the dead-letter topic \"%s\" carries \"%s\", not the topic's \"%s\": it keeps the "
				"messages this subscription gave up on as they are", dead, s->dead_letter->message->component,
			 s->topic->message->component);
	if (handler && !sc_is_global_ident(handler))
		sc_error(m, hp, "a handler is named by a C identifier (not a keyword, not starting with \"ig_\" or \"_\")");
	else if (handler && sc_libc_header(handler))
		sc_error(m, hp, "handler \"%s\" is a name of the C library (<%s>), which the generated api.h includes; "
				"choose another", handler, sc_libc_header(handler));
	else if (handler)
		handler_taken(m, handler, hp);
	s->max_attempts = get_count(m, j, ptr, "maxAttempts", 1, 1000, 5);
	s->max_concurrency = get_count(m, j, ptr, "maxConcurrency", 1, 1024, 16);
	s->min_backoff_us = get_period(m, j, ptr, "minBackoff", 1000, 1000000);
	s->max_backoff_us = get_period(m, j, ptr, "maxBackoff", 1000, 60000000);
	s->ack_deadline_us = get_period(m, j, ptr, "ackDeadline", 1000000, 30000000);
	if (s->min_backoff_us > s->max_backoff_us) {
		char *p = sc_ptr_key(ptr, "maxBackoff");
		sc_error(m, p, "\"maxBackoff\" is shorter than \"minBackoff\"%s",
			 sc_get(j, "maxBackoff") ? "" : " (whose default is 1m)");
		free(p);
	}
	free(tp);
	free(hp);
	free(dp);
	free(topic);
	free(dead);
	if (m->errors != before) {
		free(name);
		free(handler);
		free(s);
		return;
	}
	s->name = name;
	s->cname = c_name(name);
	s->handler = handler;
	s->ptr = sc_strdup(ptr);
	SC_APPEND(m->subs, m->nsubs, s);
}

static void parse_list(struct sc_model *m, const cJSON *doc, const char *key,
		       void (*parse)(struct sc_model *m, const cJSON *j, const char *ptr))
{
	const cJSON *a = sc_get(doc, key);
	if (!a)
		return;
	char *ptr = sc_ptr_key("", key);
	if (!cJSON_IsArray(a))
		sc_error(m, ptr, "\"%s\" must be an array", key);
	int i = 0;
	for (const cJSON *it = cJSON_IsArray(a) ? a->child : NULL; it; it = it->next, i++) {
		char *p = sc_ptr_index(ptr, i);
		parse(m, it, p);
		free(p);
	}
	free(ptr);
}

void sc_parse_pubsub(struct sc_model *m, const cJSON *doc)
{
	parse_list(m, doc, "x-ingot-topics", parse_topic);
	if (sc_get(doc, "x-ingot-subscriptions") && !sc_get(doc, "x-ingot-topics"))
		sc_error(m, "/x-ingot-subscriptions", "subscriptions without topics: declare them in x-ingot-topics");
	else
		parse_list(m, doc, "x-ingot-subscriptions", parse_sub);
}

void sc_check_pubsub(struct sc_model *m)
{
	for (size_t i = 0; i < m->ntopics; i++) {
		const struct sc_topic *t = m->topics[i];
		const struct sc_schema *r = sc_resolve(t->message);
		char *mp = sc_ptr_key(t->ptr, "message");
		if (r->kind != SC_OBJECT || r->nullable) {
			sc_error(m, mp, "the message's schema \"%s\" must be a typed object (\"type\": \"object\", not "
					"nullable, no anyOf/oneOf): its struct is what is published",
				 t->message->component);
		} else if (t->ordering_key) {
			char *kp = sc_ptr_key(t->ptr, "orderingKey");
			const struct sc_prop *p = NULL;
			for (size_t k = 0; k < r->nprops; k++)
				if (strcmp(r->props[k].name, t->ordering_key) == 0)
					p = &r->props[k];
			const struct sc_schema *ps = p ? sc_resolve(p->schema) : NULL;
			if (!p)
				sc_error(m, kp, "\"%s\" is no property of \"%s\"", t->ordering_key, t->message->component);
			else if (!p->required || ps->nullable || (ps->kind != SC_STRING && ps->kind != SC_INTEGER))
				sc_error(m, kp, "the ordering key \"%s\" must be a required, non-null string or integer "
						"property of \"%s\"", t->ordering_key, t->message->component);
			free(kp);
		}
		free(mp);
	}
}

static size_t topic_index(const struct sc_model *m, const struct sc_topic *t)
{
	size_t i = 0;
	while (m->topics[i] != t)
		i++;
	return i;
}

void emit_pubsub_prototypes(struct sc_model *m, struct sc_out *h)
{
	if (!m->ntopics)
		return;
	out_line(h, "/* x-ingot-topics: a publish call per topic. It checks msg against the");
	out_line(h, " * topic's schema (nothing is sent when it breaks it: IG_PUBSUB_INVALID)");
	out_line(h, " * and returns once the provider has stored it; inside an open");
	out_line(h, " * transaction (ig_pg_transaction_begin) the message is delivered only if");
	out_line(h, " * that commits. A linear call (ingot/http.h, \"Waiting\"). Returns 0; or");
	out_line(h, " * -1 with *err filled (include/ingot/pubsub.h). */");
	for (size_t i = 0; i < m->ntopics; i++) {
		char *t = c_type(m->topics[i]->message);
		out_line(h, "IG_MUST_USE int ig_publish_%s(ig_ctx *ctx, const %s *msg, ig_pubsub_error *err);",
			 m->topics[i]->cname, t);
		free(t);
	}
	out_blank(h);
	if (!m->nsubs)
		return;
	out_line(h, "/* x-ingot-subscriptions: the app defines each handler (include/ingot/pubsub.h). */");
	for (size_t i = 0; i < m->nsubs; i++) {
		const struct sc_subscription *s = m->subs[i];
		char *t = c_type(s->topic->message);
		/* The asm label, as a handler's: a symbol of its own. */
		out_line(h, "enum ig_pubsub_result %s(ig_ctx *ctx, const %s *msg) __asm__(\"ig_sub_%s\");", s->handler, t,
			 s->handler);
		free(t);
	}
	out_blank(h);
}

/* ig_publish_<topic>: the message encoded as a response is, then decoded
 * back with the topic's schema (the checks a subscriber makes, so a bug
 * in the app is caught at the publisher), then handed to the provider. */
static void emit_publish(struct sc_out *c, const struct sc_topic *t, size_t index)
{
	char *type = c_type(t->message);
	out_line(c, "int ig_publish_%s(ig_ctx *ctx, const %s *msg, ig_pubsub_error *err)", t->cname, type);
	out_open(c, "{");
	out_line(c, "ig_wbuf w = { .arena = ig_ctx_arena(ctx) };");
	out_line(c, "write_%s(&w, msg);", sc_resolve(t->message)->cname);
	out_open(c, "if (w.failed) {");
	out_line(c, "*err = (ig_pubsub_error){ IG_PUBSUB_NO_MEMORY, \"the message does not fit the arena\" };");
	out_line(c, "return -1;");
	out_close(c, "}");
	out_line(c, "%s back;", type);
	out_line(c, "memset(&back, 0, sizeof back);");
	out_open(c, "if (!ig_json_decode_%s((ig_str){ w.ptr, w.len }, ig_ctx_arena(ctx), &back)) {",
		 sc_resolve(t->message)->name);
	out_line(c, "*err = (ig_pubsub_error){ IG_PUBSUB_INVALID, \"the message breaks the topic's schema\" };");
	out_line(c, "return -1;");
	out_close(c, "}");
	out_line(c, "return ig_pubsub_publish(ctx, &ig_pubsub_topics[%zu], w.ptr, w.len, err);", index);
	out_close(c, "}");
	out_blank(c);
	free(type);
}

void emit_pubsub_table(struct sc_model *m, struct sc_out *c)
{
	if (!m->ntopics)
		return;
	out_line(c, "/* x-ingot-topics and x-ingot-subscriptions (net/pubsub/topics.h). */");
	out_open(c, "static const struct ig_pubsub_topic ig_pubsub_topics[] = {");
	for (size_t i = 0; i < m->ntopics; i++) {
		const struct sc_topic *t = m->topics[i];
		char *name = c_str(t->name), *key = t->ordering_key ? c_str(t->ordering_key) : sc_strdup("NULL"),
		     *msg = c_str(t->message->component);
		char *subs = sc_strdup("");
		for (size_t k = 0; k < m->nsubs; k++)
			if (m->subs[k]->topic == t) {
				char *more = sc_printf("%s%s%s", subs, *subs ? "," : "", m->subs[k]->name);
				free(subs);
				subs = more;
			}
		char *subs_c = c_str(subs);
		out_line(c, "{ .name = %s, .ordering_key = %s, .message = %s, .subscriptions = %s },", name, key, msg,
			 subs_c);
		free(subs);
		free(subs_c);
		free(name);
		free(key);
		free(msg);
	}
	out_close(c, "};");
	for (size_t i = 0; i < m->ntopics; i++)
		emit_publish(c, m->topics[i], i);
	for (size_t i = 0; i < m->nsubs; i++) {
		const struct sc_subscription *s = m->subs[i];
		char *type = c_type(s->topic->message);
		out_line(c, "static int ig_deliver_%s(ig_ctx *ctx, ig_str json, enum ig_pubsub_result *result)", s->cname);
		out_open(c, "{");
		out_line(c, "%s *msg = ig_alloc(ctx, sizeof *msg);", type);
		out_line(c, "if (!msg)");
		out_line(c, "\treturn -1;");
		out_line(c, "memset(msg, 0, sizeof *msg);");
		out_line(c, "if (!ig_json_decode_%s(json, ig_ctx_arena(ctx), msg))", sc_resolve(s->topic->message)->name);
		out_line(c, "\treturn -1;");
		out_line(c, "*result = %s(ctx, msg);", s->handler);
		out_line(c, "return 0;");
		out_close(c, "}");
		free(type);
	}
	if (m->nsubs) {
		out_open(c, "static const struct ig_pubsub_subscription ig_pubsub_subs[] = {");
		for (size_t i = 0; i < m->nsubs; i++) {
			const struct sc_subscription *s = m->subs[i];
			char *name = c_str(s->name), *handler = c_str(s->handler);
			out_open(c, "{");
			out_line(c, ".name = %s,", name);
			out_line(c, ".topic = &ig_pubsub_topics[%zu],", topic_index(m, s->topic));
			if (s->dead_letter)
				out_line(c, ".dead_letter = &ig_pubsub_topics[%zu],", topic_index(m, s->dead_letter));
			out_line(c, ".deliver = ig_deliver_%s,", s->cname);
			out_line(c, ".handler = %s,", handler);
			out_line(c, ".max_attempts = %u,", (unsigned)s->max_attempts);
			out_line(c, ".max_concurrency = %u,", (unsigned)s->max_concurrency);
			out_line(c, ".min_backoff_us = %lluu,", (unsigned long long)s->min_backoff_us);
			out_line(c, ".max_backoff_us = %lluu,", (unsigned long long)s->max_backoff_us);
			out_line(c, ".ack_deadline_us = %lluu,", (unsigned long long)s->ack_deadline_us);
			out_close(c, "},");
			free(name);
			free(handler);
		}
		out_close(c, "};");
	}
	out_line(c, "const struct ig_pubsub_table ig_api_pubsub = { ig_pubsub_topics, %zu, %s, %zu };", m->ntopics,
		 m->nsubs ? "ig_pubsub_subs" : "NULL", m->nsubs);
	out_blank(c);
}
