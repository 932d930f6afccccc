/* Cron's ticks claimed on NATS (net/cron/jobs.h's ig_cron_claimer) when
 * the Pub/Sub provider is NATS: a create-if-absent key <job>.<tick> in the
 * KV bucket IG_NATS_CRON_BUCKET (a publish to $KV.<bucket>.<job>.<tick>
 * with Nats-Expected-Last-Subject-Sequence: 0, which JetStream refuses,
 * err_code 10071, once the key exists). The bucket's MaxAge (a day) bounds
 * the claims' life: nats-server 2.9 has no per-key TTL. On core 0's
 * client. */
#include "nats_provider.h"
#include "net/cron/jobs.h"
#include "net/nats/js.h"
#include "ingot/log.h"

#include <stdio.h>
#include <string.h>

#define BUCKET_STREAM "KV_" IG_NATS_CRON_BUCKET
#define BUCKET_SUBJECT "$KV." IG_NATS_CRON_BUCKET "."
#define MAX_AGE_NS (24LL * 3600 * 1000 * 1000 * 1000)
/* JetStream's "wrong last sequence": the key is there, claimed elsewhere. */
#define ERR_WRONG_LAST_SEQUENCE 10071

static struct ig_nats *claim_nc;

/* What waits for a claim's ack, in the client's pool. */
struct claim_wait {
	ig_cron_claimed_fn *done;
	void *arg;
};
_Static_assert(sizeof(struct claim_wait) <= IG_NATS_CTX_MAX, "a claim's context fits the client's pool");

static void acked(void *arg, const struct ig_js_result *r)
{
	struct claim_wait *w = arg;
	ig_cron_claimed_fn *done = w->done;
	void *done_arg = w->arg;
	ig_nats_ctx_give(claim_nc, w);
	if (r->err == IG_NATS_OK) {
		done(done_arg, 1);
		return;
	}
	if (r->err == IG_NATS_SERVER && r->err_code == ERR_WRONG_LAST_SEQUENCE) {
		done(done_arg, 0);
		return;
	}
	struct ig_logline l;
	if (ig_log_begin(&l, IG_LOG_ERROR, "cron: NATS claim failed")) {
		ig_log_cstr(&l, "error", ig_nats_error_name(r->err));
		if (r->err_code)
			ig_log_int(&l, "err_code", r->err_code);
		ig_log_end(&l);
	}
	done(done_arg, -1);
}

static void claim(const char *job, int64_t tick, ig_cron_claimed_fn *done, void *arg)
{
	struct claim_wait *w = claim_nc ? ig_nats_ctx_take(claim_nc) : NULL;
	if (!w) {
		done(arg, -1);
		return;
	}
	*w = (struct claim_wait){ done, arg };
	char subject[160];
	int n = snprintf(subject, sizeof subject, BUCKET_SUBJECT "%s.%lld", job, (long long)tick);
	static const char headers[] = "NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: 0\r\n\r\n";
	enum ig_nats_error e = n > 0 && (size_t)n < sizeof subject
				       ? ig_js_publish(claim_nc, (ig_str){ subject, (size_t)n },
						       (ig_str){ headers, sizeof headers - 1 }, IG_STR("claimed"), (ig_str){ 0 },
						       5000, acked, w)
				       : IG_NATS_BAD_ARGUMENT;
	if (e != IG_NATS_OK) {
		const struct ig_js_result r = { .err = e };
		acked(w, &r);
	}
}

static const struct ig_cron_claimer nats_claimer = { .name = "nats", .claim = claim };

extern const struct ig_cron_claimer *ig_cron_claimer __attribute__((weak));
extern const struct ig_cron_table ig_api_cron __attribute__((weak));

bool ig_pubsub_nats_cron_prepare(void)
{
	if (!&ig_cron_claimer || !&ig_api_cron)
		return false;
	ig_cron_claimer = &nats_claimer;
	return true;
}

enum ig_nats_error ig_pubsub_nats_cron_bucket(struct ig_nats *nc, uint32_t replicas, ig_js_done_fn *done, void *arg)
{
	claim_nc = nc;
	static const ig_str subjects[1] = { IG_STR_INIT(BUCKET_SUBJECT ">") };
	const struct ig_js_stream_config cfg = {
		.name = IG_STR(BUCKET_STREAM), .subjects = subjects, .nsubjects = 1, .max_age_ns = MAX_AGE_NS,
		.replicas = replicas,
	};
	return ig_js_stream_create(nc, &cfg, 5000, done, arg);
}
