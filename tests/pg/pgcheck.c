/* pgcheck: drives net/pg (the runtime's PostgreSQL client, no app, no
 * server) from the command line for tests/integration/pg_client.test.mjs.
 * The database is DATABASE_URL / PG* and the INGOT_PG_* settings, from the
 * environment. Each loop runs on its own thread; nothing blocks.
 *
 *   pgcheck seq QUERY...           one after another (each after the last's done)
 *   pgcheck pipeline QUERY...      all started at once
 *   pgcheck reads QUERY...         the same through ig_pg_pool_read (one Sync)
 *   pgcheck tx QUERY... commit|rollback   on one held connection (BEGIN first)
 *   pgcheck inflight N             N queries at once, over --threads loops
 *   pgcheck listen CHANNEL PAYLOAD LISTEN, then NOTIFY until it arrives
 *   pgcheck notifications CHANNEL N   LISTEN and print each notification
 *                                  (sent by others) until N have arrived
 *
 * A QUERY is its SQL followed by its parameters, each an argument
 * "%type:value": %int4:5 %text:abc %bytea:<hex> %uuid:<32 hex> %date:<days>
 * %ts:<us> %tstz:<us> %bool:t %float8:1.5 %numeric:1.25 %json:... %null:int4
 * (also int2, int8, float4, varchar, jsonb; %untyped:text leaves the type
 * to the server). --repeat N runs the list N times (the first execution of
 * a statement gets text results, the next binary).
 *
 * Output: one JSON line per query, in completion order:
 *   {"i":0,"ok":true,"tag":"SELECT 1","affected":1,"cols":["a"],"oids":[23],"rows":[[5]]}
 *   {"i":1,"ok":false,"kind":"server","sqlstate":"22012","message":"division by zero","detail":"","constraint":""}
 * Values: bool, numbers as JSON; strings as strings; bytea and uuid as hex;
 * date in days, timestamps in microseconds; NULL as null. Exit 0 when every
 * query ran (whatever its result), 2 for bad usage. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/runtime/arena.h"
#include "kernel/runtime/config.h"
#include "kernel/runtime/loop.h"
#include "ingot/pg.h"
#include "net/pg/settings.h"
#include "net/tls/tls.h"

struct query {
	const char *sql;
	ig_pg_value params[64];
	size_t nparams;
};

static struct query queries[256];
static size_t nqueries;
static int repeat = 1;
static int threads = 1;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static int hexval(char c)
{
	int v = ig_hex_digit(c);
	return v;
}

/* The bytes of a hex parameter, kept for the run in one static store. */
static ig_str unhex(const char *s)
{
	static char store[1 << 16];
	static size_t used;
	size_t n = strlen(s) / 2;
	if (n > sizeof store - used) {
		fprintf(stderr, "pgcheck: hex parameters too long\n");
		exit(2);
	}
	char *b = store + used;
	used += n;
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(hexval(s[2 * i]) << 4 | hexval(s[2 * i + 1]));
	return (ig_str){ b, n };
}

static uint32_t oid_named(const char *t)
{
	static const struct { const char *name; uint32_t oid; } types[] = {
		{ "bool", IG_PG_BOOL }, { "bytea", IG_PG_BYTEA }, { "int8", IG_PG_INT8 }, { "int2", IG_PG_INT2 },
		{ "int4", IG_PG_INT4 }, { "text", IG_PG_TEXT }, { "json", IG_PG_JSON }, { "float4", IG_PG_FLOAT4 },
		{ "float8", IG_PG_FLOAT8 }, { "varchar", IG_PG_VARCHAR }, { "date", IG_PG_DATE },
		{ "ts", IG_PG_TIMESTAMP }, { "tstz", IG_PG_TIMESTAMPTZ }, { "numeric", IG_PG_NUMERIC },
		{ "uuid", IG_PG_UUID }, { "jsonb", IG_PG_JSONB }, { "untyped", 0 },
	};
	for (size_t i = 0; i < IG_COUNTOF(types); i++)
		if (!strcmp(types[i].name, t))
			return types[i].oid;
	fprintf(stderr, "pgcheck: unknown type %s\n", t);
	exit(2);
}

static ig_pg_value parse_param(const char *arg)
{
	char type[16];
	const char *colon = strchr(arg, ':');
	if (!colon || colon - arg >= (long)sizeof type) {
		fprintf(stderr, "pgcheck: a parameter is %%type:value, not %s\n", arg - 1);
		exit(2);
	}
	memcpy(type, arg, (size_t)(colon - arg));
	type[colon - arg] = 0;
	const char *v = colon + 1;
	if (!strcmp(type, "null"))
		return ig_pg_null(oid_named(v));
	uint32_t oid = oid_named(type);
	ig_pg_value p = { .oid = oid };
	switch (oid) {
	case IG_PG_BOOL: p.b = v[0] == 't'; break;
	case IG_PG_INT2: case IG_PG_INT4: case IG_PG_INT8: p.i = strtoll(v, NULL, 10); break;
	case IG_PG_FLOAT4: case IG_PG_FLOAT8: p.f = strtod(v, NULL); break;
	case IG_PG_BYTEA: p.s = unhex(v); break;
	case IG_PG_UUID: {
		ig_str u = unhex(v);
		memcpy(p.uuid, u.ptr, 16);
		break;
	}
	case IG_PG_DATE: p.date = (int32_t)strtol(v, NULL, 10); break;
	case IG_PG_TIMESTAMP: case IG_PG_TIMESTAMPTZ: p.ts = strtoll(v, NULL, 10); break;
	default: p.s = (ig_str){ v, strlen(v) };
	}
	return p;
}

/* ---- output ---- */

struct out {
	char *buf;
	size_t len, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = realloc(o->buf, o->cap);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}
static void puts_(struct out *o, const char *s) { put(o, s, strlen(s)); }
static void putf(struct out *o, const char *fmt, long long v)
{
	char b[64];
	int n = snprintf(b, sizeof b, fmt, v);
	put(o, b, (size_t)n);
}

static void put_json_string(struct out *o, const char *s, size_t n)
{
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			put(o, "\\", 1);
			put(o, (const char *)&c, 1);
		} else if (c < 0x20) {
			char e[8];
			snprintf(e, sizeof e, "\\u%04x", c);
			put(o, e, 6);
		} else {
			put(o, (const char *)&c, 1);
		}
	}
	put(o, "\"", 1);
}

static void put_hex(struct out *o, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	put(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = ((const unsigned char *)p)[i];
		put(o, &hex[c >> 4], 1);
		put(o, &hex[c & 15], 1);
	}
	put(o, "\"", 1);
}

static void put_value(struct out *o, const ig_pg_value *v)
{
	if (v->null) {
		puts_(o, "null");
		return;
	}
	switch (v->oid) {
	case IG_PG_BOOL: puts_(o, v->b ? "true" : "false"); break;
	case IG_PG_INT2: case IG_PG_INT4: case IG_PG_INT8: putf(o, "%lld", (long long)v->i); break;
	case IG_PG_FLOAT4: case IG_PG_FLOAT8: {
		char b[64];
		int n = snprintf(b, sizeof b, "%.17g", v->f);
		put(o, b, (size_t)n);
		break;
	}
	case IG_PG_BYTEA: put_hex(o, v->s.ptr, v->s.len); break;
	case IG_PG_UUID: put_hex(o, v->uuid, 16); break;
	case IG_PG_DATE: putf(o, "%lld", (long long)v->date); break;
	case IG_PG_TIMESTAMP: case IG_PG_TIMESTAMPTZ: putf(o, "%lld", (long long)v->ts); break;
	default: put_json_string(o, v->s.ptr, v->s.len);
	}
}

static void print_result(long i, const ig_pg_result *res, const ig_pg_error *err)
{
	struct out o = { 0 };
	putf(&o, "{\"i\":%lld", i);
	if (err) {
		puts_(&o, ",\"ok\":false,\"kind\":\"");
		puts_(&o, ig_pg_error_name(err->kind));
		puts_(&o, "\",\"sqlstate\":\"");
		puts_(&o, err->sqlstate);
		puts_(&o, "\",\"message\":");
		put_json_string(&o, err->message.ptr, err->message.len);
		puts_(&o, ",\"detail\":");
		put_json_string(&o, err->detail.ptr, err->detail.len);
		puts_(&o, ",\"constraint\":");
		put_json_string(&o, err->constraint.ptr, err->constraint.len);
	} else {
		puts_(&o, ",\"ok\":true,\"tag\":");
		put_json_string(&o, res->tag.ptr, res->tag.len);
		putf(&o, ",\"affected\":%lld,\"cols\":[", (long long)res->affected);
		for (uint32_t c = 0; c < res->cols; c++) {
			if (c)
				put(&o, ",", 1);
			put_json_string(&o, res->names[c].ptr, res->names[c].len);
		}
		puts_(&o, "],\"oids\":[");
		for (uint32_t c = 0; c < res->cols && res->rows; c++)
			putf(&o, c ? ",%lld" : "%lld", (long long)ig_pg_at(res, 0, c)->oid);
		puts_(&o, "],\"rows\":[");
		for (uint32_t r = 0; r < res->rows; r++) {
			put(&o, r ? ",[" : "[", r ? 2 : 1);
			for (uint32_t c = 0; c < res->cols; c++) {
				if (c)
					put(&o, ",", 1);
				put_value(&o, ig_pg_at(res, r, c));
			}
			put(&o, "]", 1);
		}
		put(&o, "]", 1);
	}
	puts_(&o, "}\n");
	pthread_mutex_lock(&out_lock);
	fwrite(o.buf, 1, o.len, stdout);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	free(o.buf);
}

/* ---- one loop ---- */

struct worker {
	pthread_t thread;
	int index;
	struct ig_loop loop;
	struct ig_pool blocks;
	ig_arena arena;
	struct ig_pg_pool *pool;
	ig_pg_tx *tx;
	const char *mode;
	long total, started, finished, good;
	long first; /* inflight: this worker's first query number */
	bool end_commit;
	struct ig_timer timer;
	const char *channel, *payload;
	bool notified;
};

static void stop(struct worker *w) { w->loop.running = false; }

static void run_next(struct worker *w);

static void on_seq_done(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct worker *w = arg;
	print_result(w->finished++, res, err);
	run_next(w);
}

static const struct query *nth(long i) { return &queries[i % (long)nqueries]; }

static void run_next(struct worker *w)
{
	if (w->started == w->total) {
		stop(w);
		return;
	}
	const struct query *q = nth(w->started++);
	ig_pg_pool_query(w->pool, &w->arena, q->sql, q->params, q->nparams, on_seq_done, w);
}

struct slot {
	struct worker *w;
	long i;
};

static void on_pipelined(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct slot *s = arg;
	print_result(s->i, res, err);
	if (++s->w->finished == s->w->total)
		stop(s->w);
}

static void on_inflight(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct slot *s = arg;
	struct worker *w = s->w;
	if (!err && res->rows == 1 && res->cols == 1 && ig_pg_at(res, 0, 0)->i == s->i)
		w->good++;
	else if (err)
		print_result(s->i, res, err);
	if (++w->finished == w->total)
		stop(w);
}

/* tx: BEGIN, the queries in order, then COMMIT or ROLLBACK. */
static void tx_next(struct worker *w);

static void on_tx_end(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct worker *w = arg;
	print_result(-1, res, err);
	stop(w);
}

static void on_tx_query(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct worker *w = arg;
	print_result(w->finished++, res, err);
	tx_next(w);
}

static void tx_next(struct worker *w)
{
	if (w->started == w->total) {
		(w->end_commit ? ig_pg_commit : ig_pg_rollback)(w->tx, on_tx_end, w);
		return;
	}
	const struct query *q = nth(w->started++);
	ig_pg_tx_query(w->tx, q->sql, q->params, q->nparams, on_tx_query, w);
}

static void on_begun(ig_pg_tx *tx, const ig_pg_error *err, void *arg)
{
	struct worker *w = arg;
	if (err) {
		print_result(-1, NULL, err);
		stop(w);
		return;
	}
	w->tx = tx;
	tx_next(w);
}

static void print_notification(ig_str channel, ig_str payload)
{
	struct out o = { 0 };
	puts_(&o, "{\"notify\":true,\"channel\":");
	put_json_string(&o, channel.ptr, channel.len);
	puts_(&o, ",\"payload\":");
	put_json_string(&o, payload.ptr, payload.len);
	puts_(&o, "}\n");
	fwrite(o.buf, 1, o.len, stdout);
	fflush(stdout);
	free(o.buf);
}

/* listen: NOTIFY through the pool until the listener has it (one sent
 * before its LISTEN went through is lost, as PostgreSQL says). */
static void on_notify(ig_str channel, ig_str payload, void *arg)
{
	struct worker *w = arg;
	if (w->notified)
		return;
	w->notified = true;
	print_notification(channel, payload);
	stop(w);
}

/* notifications: each one as it comes, whatever happened to the listening
 * connection in between (the test ends it and restarts the server). */
static void on_notification(ig_str channel, ig_str payload, void *arg)
{
	struct worker *w = arg;
	print_notification(channel, payload);
	if (++w->finished == w->total)
		stop(w);
}

static void on_notify_sent(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct worker *w = arg;
	(void)res;
	if (err)
		print_result(-1, NULL, err);
	if (!w->notified && w->started < 200)
		ig_timer_set(&w->loop.timers, &w->timer, w->loop.clock.now_ms + 20);
	else if (!w->notified)
		stop(w);
}

static void send_notify(struct ig_timer *t)
{
	struct worker *w = (struct worker *)((char *)t - offsetof(struct worker, timer));
	ig_pg_value p[2] = { ig_pg_text((ig_str){ w->channel, strlen(w->channel) }),
			     ig_pg_text((ig_str){ w->payload, strlen(w->payload) }) };
	w->started++;
	ig_pg_pool_query(w->pool, &w->arena, "SELECT pg_notify($1, $2)", p, 2, on_notify_sent, w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	if (ig_loop_init(&w->loop, w->index) != 0) {
		fprintf(stderr, "pgcheck: no loop\n");
		exit(1);
	}
	ig_pool_init(&w->blocks, 16 * 1024, 16, 1u << 20);
	ig_arena_init(&w->arena, &w->blocks, (size_t)1 << 30);
	ig_clock_update(&w->loop.clock);
	w->pool = ig_pg_core_pool(&w->loop);
	struct slot *slots = NULL;
	if (!strcmp(w->mode, "seq")) {
		run_next(w);
	} else if (!strcmp(w->mode, "pipeline") || !strcmp(w->mode, "reads") || !strcmp(w->mode, "inflight")) {
		bool inflight = !strcmp(w->mode, "inflight");
		bool reads = !strcmp(w->mode, "reads");
		slots = calloc((size_t)w->total, sizeof *slots);
		for (long i = 0; i < w->total; i++) {
			slots[i] = (struct slot){ w, w->first + i };
			if (inflight) {
				ig_pg_value p = ig_pg_int4((int32_t)(w->first + i));
				ig_pg_pool_query(w->pool, &w->arena, "SELECT $1::int4", &p, 1, on_inflight, &slots[i]);
			} else {
				const struct query *q = nth(i);
				(reads ? ig_pg_pool_read : ig_pg_pool_query)(w->pool, &w->arena, q->sql, q->params, q->nparams,
									    on_pipelined, &slots[i]);
			}
		}
	} else if (!strcmp(w->mode, "tx")) {
		ig_pg_pool_begin(w->pool, &w->arena, on_begun, w);
	} else if (!strcmp(w->mode, "listen")) {
		if (ig_pg_listen(&w->loop, w->channel, on_notify, w) != 0) {
			fprintf(stderr, "pgcheck: ig_pg_listen failed\n");
			exit(1);
		}
		w->timer.fn = send_notify;
		send_notify(&w->timer);
	} else if (!strcmp(w->mode, "notifications")) {
		if (ig_pg_listen(&w->loop, w->channel, on_notification, w) != 0) {
			fprintf(stderr, "pgcheck: ig_pg_listen failed\n");
			exit(1);
		}
	}
	ig_loop_run(&w->loop);
	free(slots);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: pgcheck [--threads N] [--repeat N] seq|pipeline|tx|inflight|listen|notifications ...\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct ig_settings *const parts[] = { &ig_pg_settings, &ig_tls_trust_settings };
	char *no_args[] = { argv[0], NULL };
	const struct ig_config_args env_only = { .argc = 1, .argv = no_args, .name = "pgcheck", .version = "0" };
	if (ig_config_parse(parts, IG_COUNTOF(parts), &env_only) != IG_CONFIG_OK)
		return 2;
	int a = 1;
	for (; a < argc && !strncmp(argv[a], "--", 2); a += 2) {
		if (a + 1 >= argc)
			return usage();
		if (!strcmp(argv[a], "--threads"))
			threads = atoi(argv[a + 1]);
		else if (!strcmp(argv[a], "--repeat"))
			repeat = atoi(argv[a + 1]);
		else
			return usage();
	}
	if (a >= argc || threads < 1 || threads > 16 || repeat < 1)
		return usage();
	const char *mode = argv[a++];
	struct worker ws[16];
	memset(ws, 0, sizeof ws);
	long total = 0;
	bool commit = false;
	const char *channel = NULL, *payload = NULL;
	if (!strcmp(mode, "inflight")) {
		if (a >= argc)
			return usage();
		total = atol(argv[a]);
	} else if (!strcmp(mode, "listen")) {
		if (a + 2 > argc)
			return usage();
		channel = argv[a];
		payload = argv[a + 1];
	} else if (!strcmp(mode, "notifications")) {
		if (a + 2 > argc || atol(argv[a + 1]) < 1)
			return usage();
		channel = argv[a];
		total = atol(argv[a + 1]);
	} else {
		if (!strcmp(mode, "tx")) {
			if (a >= argc)
				return usage();
			commit = !strcmp(argv[argc - 1], "commit");
			argc--;
		}
		for (; a < argc; a++) {
			if (argv[a][0] == '%') {
				if (!nqueries || queries[nqueries - 1].nparams == 64)
					return usage();
				struct query *q = &queries[nqueries - 1];
				q->params[q->nparams++] = parse_param(argv[a] + 1);
			} else if (nqueries < IG_COUNTOF(queries)) {
				queries[nqueries++].sql = argv[a];
			}
		}
		if (!nqueries)
			return usage();
		total = (long)nqueries * repeat;
		threads = 1;
	}
	if (strcmp(mode, "inflight") && strcmp(mode, "listen"))
		threads = 1;
	long per = total / threads, first = 0;
	for (int i = 0; i < threads; i++) {
		struct worker *w = &ws[i];
		w->index = i;
		w->mode = mode;
		w->total = i == threads - 1 ? total - first : per;
		w->first = first;
		w->end_commit = commit;
		w->channel = channel;
		w->payload = payload;
		first += w->total;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			return 1;
	}
	long good = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(ws[i].thread, NULL);
		good += ws[i].good;
	}
	if (!strcmp(mode, "inflight"))
		printf("{\"summary\":true,\"queries\":%ld,\"good\":%ld,\"threads\":%d}\n", total, good, threads);
	return 0;
}
