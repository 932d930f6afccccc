/* The cron scheduler: core 0's timer fires each job's ticks (UTC, from
 * the generated table), claims each tick in PostgreSQL with one INSERT
 * ... ON CONFLICT DO NOTHING keyed by (job, tick), so that one replica of
 * all those sharing the database runs it, and runs the claimed job as an
 * in-process request to its operation (net/http/inproc.h: access log,
 * metrics, trace); or, when a provider set ig_cron_claimer (NATS), claims
 * there instead. Linked only when the document declares jobs (the table
 * names ig_cron_ops); net/pg is referred to weakly. */
#include "jobs.h"
#include "kernel/runtime/loop.h"
#include "net/http/inproc.h"
#include "net/metrics/metrics.h"
#include "ingot/log.h"
#include "ingot/pg.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WEAK __attribute__((weak))
bool ig_pg_configured(void) WEAK;
struct ig_pg_pool *ig_pg_core_pool(struct ig_loop *loop) WEAK;
void ig_pg_pool_query(struct ig_pg_pool *pool, ig_arena *arena, const char *sql, const ig_pg_value *params,
		      size_t nparams, ig_pg_done *done, void *arg) WEAK;
const char *ig_pg_error_name(enum ig_pg_error_kind kind) WEAK;

/* A job's request and its answer; a job answers small (a status). */
#define CRON_BUF (16 * 1024)

/* Claims older than a day are deleted by the next claim of their job:
 * the table holds a day of ticks per job, never more. */
#define CRON_CLAIM_SQL                                                                                       \
	"WITH old AS (DELETE FROM ingot_cron_claims WHERE job = $1 AND tick < to_timestamp($2) - interval '1 day') " \
	"INSERT INTO ingot_cron_claims (job, tick, pid) VALUES ($1, to_timestamp($2), $3) ON CONFLICT DO NOTHING"

enum cron_result { CRON_OK, CRON_FAILED, CRON_ELSEWHERE, CRON_BUSY, CRON_RESULTS };
static const char *const result_names[CRON_RESULTS] = { "ok", "failed", "elsewhere", "busy" };

/* One job's state, on core 0's thread (its counters read by the scrape). */
struct cron_run {
	const struct ig_cron_job *job;
	bool enabled, busy;
	int64_t next_s, tick;
	char tick_text[24];
	ig_header headers[2];
	struct http_inproc_slot slot; /* its arena: the claim's statement */
	ig_counter counts[CRON_RESULTS];
};

static struct {
	const struct ig_cron_table *table;
	struct cron_run *runs;
	struct http_inproc_worker worker;
	struct ig_timer timer;
	struct ig_pg_pool *pool; /* NULL: no database, no claims */
	struct ig_metrics_source metrics;
} s;

static void count(struct cron_run *r, enum cron_result what)
{
	/* Shared: the endpoint's runs count from other cores too. */
	ig_counter_add_shared(&r->counts[what], 1);
}

static void write_metrics(struct ig_expo *e, void *arg)
{
	(void)arg;
	ig_expo_family(e, "ingot_cron_runs_total", "counter",
		       "cron ticks by job and result: ok (2xx), failed, elsewhere (another replica claimed "
		       "it), busy (the job's previous run had not ended)");
	for (size_t i = 0; i < s.table->count; i++) {
		const struct cron_run *r = &s.runs[i];
		for (int k = 0; k < CRON_RESULTS; k++) {
			const struct ig_label l[2] = { { "job", r->job->name, strlen(r->job->name) },
						       { "result", result_names[k], strlen(result_names[k]) } };
			ig_expo_sample(e, "ingot_cron_runs_total", l, 2,
				       (double)ig_counter_get(&r->counts[k]));
		}
	}
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void log_run(const struct cron_run *r, enum ig_log_level level, const char *msg, int status)
{
	struct ig_logline l;
	if (ig_log_begin(&l, level, msg)) {
		ig_log_cstr(&l, "job", r->job->name);
		ig_log_int(&l, "tick", r->tick);
		if (status)
			ig_log_int(&l, "status", status);
		ig_log_end(&l);
	}
}

static void answered(void *arg, enum http_inproc_result result, const struct http_inproc_response *res)
{
	struct cron_run *r = arg;
	r->busy = false;
	int status = result == HTTP_INPROC_OK ? res->status : 0;
	bool ok = status >= 200 && status < 300;
	count(r, ok ? CRON_OK : CRON_FAILED);
	if (!ok)
		log_run(r, IG_LOG_ERROR, "cron job failed", status);
}

/* The job as a request to its operation: no parameters, no body; the
 * tick in Ingot-Cron-Tick (Unix seconds) for a handler that records it. */
static void run_job(struct cron_run *r)
{
	size_t n = (size_t)ig_fmt_i64(r->tick_text, r->tick);
	r->headers[0] = (ig_header){ IG_STR("Ingot-Cron-Job"), { r->job->name, strlen(r->job->name) } };
	r->headers[1] = (ig_header){ IG_STR("Ingot-Cron-Tick"), { r->tick_text, n } };
	const struct http_inproc_request req = {
		.method = { r->job->method, strlen(r->job->method) },
		.target = { r->job->path, strlen(r->job->path) },
		.headers = r->headers,
		.header_count = 2,
		.peer = IG_STR("cron"),
	};
	enum http_inproc_result result;
	if (ig_http_inproc_slot_run(&r->slot, &s.worker, &req, answered, r, &result) != 0) {
		r->busy = false;
		count(r, CRON_FAILED);
		/* A claim answered after the drain began: the core takes no new
		   request, and the tick is lost (at most once). */
		log_run(r, s.worker.core->draining ? IG_LOG_WARN : IG_LOG_ERROR,
			s.worker.core->draining ? "cron tick not run: the process is stopping" : "cron job could not start", 0);
	}
}

const struct ig_cron_claimer *ig_cron_claimer;

static void claimed_elsewhere(void *arg, int result)
{
	struct cron_run *r = arg;
	if (result == 1) {
		run_job(r);
		return;
	}
	r->busy = false;
	count(r, result == 0 ? CRON_ELSEWHERE : CRON_FAILED);
	if (result < 0)
		log_run(r, IG_LOG_ERROR, "cron tick not claimed: the claim's provider failed", 0);
}

static void claimed(const ig_pg_result *res, const ig_pg_error *err, void *arg)
{
	struct cron_run *r = arg;
	if (err) {
		r->busy = false;
		count(r, CRON_FAILED);
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_ERROR, "cron tick not claimed: database error")) {
			ig_log_cstr(&l, "job", r->job->name);
			ig_log_int(&l, "tick", r->tick);
			ig_log_cstr(&l, "error", ig_pg_error_name(err->kind));
			ig_log_str(&l, "sqlstate", err->sqlstate, strlen(err->sqlstate));
			ig_log_str(&l, "message", err->message.ptr, err->message.len);
			ig_log_end(&l);
		}
		return;
	}
	if (res->affected != 1) {
		r->busy = false;
		count(r, CRON_ELSEWHERE);
		return;
	}
	run_job(r);
}

static void fire(struct cron_run *r, int64_t tick)
{
	if (r->busy) {
		count(r, CRON_BUSY);
		return;
	}
	r->busy = true;
	r->tick = tick;
	if (ig_cron_claimer) {
		ig_cron_claimer->claim(r->job->name, tick, claimed_elsewhere, r);
		return;
	}
	if (!s.pool) {
		run_job(r);
		return;
	}
	ig_arena_reset(&r->slot.arena);
	const ig_pg_value params[3] = {
		ig_pg_text((ig_str){ r->job->name, strlen(r->job->name) }),
		ig_pg_int8(tick),
		ig_pg_int4((int32_t)getpid()),
	};
	ig_pg_pool_query(s.pool, &r->slot.arena, CRON_CLAIM_SQL, params, 3, claimed, r);
}

/* The latest tick at or before now_s that r's schedule has, or -1. */
static int64_t due_tick(const struct cron_run *r, int64_t now_s)
{
	const struct ig_cron_expr *e = &r->job->expr;
	if (r->next_s > now_s)
		return -1;
	if (e->every_s)
		return now_s - now_s % e->every_s;
	int64_t t = r->next_s;
	for (int i = 0; i < 1000; i++) { /* ticks missed while stopped: only the last runs */
		int64_t n = ig_cron_next(e, t);
		if (n < 0 || n > now_s)
			break;
		t = n;
	}
	return t;
}

static void arm(void)
{
	int64_t next = -1;
	for (size_t i = 0; i < s.table->count; i++)
		if (s.runs[i].enabled && (next < 0 || s.runs[i].next_s < next))
			next = s.runs[i].next_s;
	if (next < 0)
		return;
	int64_t wait = next * 1000 - wall_ms();
	if (wait < 0)
		wait = 0;
	ig_timer_set(&s.worker.core->loop.timers, &s.timer, ig_monotonic_us() / 1000 + (uint64_t)wait + 1);
}

static void on_timer(struct ig_timer *t)
{
	(void)t;
	if (s.worker.core->draining)
		return; /* a stopping replica takes no more ticks */
	int64_t now_s = wall_ms() / 1000;
	for (size_t i = 0; i < s.table->count; i++) {
		struct cron_run *r = &s.runs[i];
		if (!r->enabled)
			continue;
		int64_t tick = due_tick(r, now_s);
		if (tick < 0)
			continue;
		r->next_s = ig_cron_next(&r->job->expr, now_s);
		fire(r, tick);
	}
	arm();
}

static bool prepare(const struct ig_cron_table *table, const struct ig_lifecycle *lifecycle)
{
	s.table = table;
	s.runs = calloc(table->count, sizeof *s.runs);
	if (!s.runs)
		return false;
	bool any = false;
	for (size_t i = 0; i < table->count; i++) {
		s.runs[i].job = &table->jobs[i];
		s.runs[i].enabled = ig_cron_job_on(table->jobs[i].name, lifecycle);
		any |= s.runs[i].enabled;
	}
	if (!any)
		return false;
	s.metrics.write = write_metrics;
	ig_metrics_register(&s.metrics);
	return true;
}

static void core_start(struct ig_loop *loop, int core_count)
{
	(void)core_count;
	if (loop->core != 0 || !s.runs)
		return;
	ig_http_inproc_worker_init(&s.worker, loop, 1024);
	for (size_t i = 0; i < s.table->count; i++) {
		struct cron_run *r = &s.runs[i];
		if (r->enabled && ig_http_inproc_slot_init(&r->slot, &s.worker, CRON_BUF, 64 * 1024) != 0)
			r->enabled = false;
	}
	if (ig_pg_configured && ig_pg_configured() && ig_pg_core_pool && ig_pg_pool_query)
		s.pool = ig_pg_core_pool(loop);
	if (!s.pool && !ig_cron_claimer) {
		struct ig_logline l;
		if (ig_log_begin(&l, IG_LOG_WARN,
				 "cron: no database configured: this process runs every tick itself, unclaimed "
				 "(each replica would run each tick)"))
			ig_log_end(&l);
	}
	int64_t now_s = wall_ms() / 1000;
	for (size_t i = 0; i < s.table->count; i++)
		s.runs[i].next_s = ig_cron_next(&s.runs[i].job->expr, now_s);
	s.timer.fn = on_timer;
	arm();
}

#define CRON_MIGRATION_SQL                                                                                  \
	"CREATE TABLE IF NOT EXISTS ingot_cron_claims (job text NOT NULL, tick timestamptz NOT NULL, "       \
	"pid integer NOT NULL, claimed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (job, tick))"

const struct ig_cron_ops ig_cron_ops = {
	.migration_sql = CRON_MIGRATION_SQL,
	.prepare = prepare,
	.core_start = core_start,
};
