/* The server's last words: the "stopped" line with the requests served,
 * cut and dropped and the TLS handshake counts, summed over the cores
 * once every loop has returned (the counters are per core, unlocked). */
#include "server.h"
#include "kernel/process/cores.h"
#include "ingot/log.h"
#include "net/tls/tls.h"

/* Plain sums of the cores' counters (ig_tls_stats's are read with ig_counter_get). */
struct tls_sums {
	uint64_t handshakes, resumed, failed, timed_out, refused;
};

static void sum_tls(struct tls_sums *sum, const struct ig_tls_stats *s)
{
	uint64_t resumed = ig_counter_get(&s->resumed);
	sum->handshakes += ig_counter_get(&s->full) + resumed;
	sum->resumed += resumed;
	sum->failed += ig_counter_get(&s->failed);
	sum->timed_out += ig_counter_get(&s->timed_out);
	sum->refused += ig_counter_get(&s->refused);
}

uint64_t ig_server_log_stopped(void)
{
	uint64_t requests = 0, cut = 0, dropped = 0;
	struct tls_sums tls = { 0 };
	for (int i = 0; i < ig_http_server.core_count; i++) {
		const struct http_core *core = &ig_http_server.cores[i];
		requests += core->requests;
		cut += core->cut;
		dropped += core->dropped;
		if (core->tls)
			sum_tls(&tls, ig_tls_core_stats(core->tls));
	}
	bool late = ig_http_server.grace_over;
	struct ig_logline l;
	if (!ig_log_begin(&l, late ? IG_LOG_WARN : IG_LOG_INFO, late ? "stopped: grace period over" : "stopped"))
		return cut;
	ig_log_int(&l, "requests", (int64_t)requests);
	if (ig_http_server.core_count > 1) { /* "12,9": how the cores shared them */
		char per[IG_MAX_CORES * 21];
		size_t n = 0;
		for (int i = 0; i < ig_http_server.core_count; i++) {
			if (i)
				per[n++] = ',';
			n += ig_fmt_u64(per + n, ig_http_server.cores[i].requests);
		}
		ig_log_str(&l, "requests_per_core", per, n);
	}
	ig_log_int(&l, "cut", (int64_t)cut);
	ig_log_int(&l, "dropped", (int64_t)dropped);
	if (ig_http_server.tls) {
		ig_log_int(&l, "tls_handshakes", (int64_t)tls.handshakes);
		ig_log_int(&l, "tls_resumed", (int64_t)tls.resumed);
		ig_log_int(&l, "tls_failed", (int64_t)tls.failed);
		ig_log_int(&l, "tls_timed_out", (int64_t)tls.timed_out);
		ig_log_int(&l, "tls_refused", (int64_t)tls.refused);
	}
	ig_log_end(&l);
	return cut;
}
