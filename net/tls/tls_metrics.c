/* The TLS metrics source: the server role's handshakes by result
 * (ingot_tls_handshakes_total{result="ok|resumed|failed"}) and the
 * duration of the completed ones, summed over the cores at each scrape.
 * Outbound handshakes are the client's (its own cores, not counted here).
 * A process with no TLS listener writes nothing. */
#include "net/tls/tls.h"

#include <string.h>

static void write_tls(struct ig_expo *e, void *arg)
{
	(void)arg;
	const struct ig_tls_core *c = ig_tls_next_server_core(NULL);
	if (!c)
		return;
	uint64_t full = 0, resumed = 0, failed = 0;
	struct ig_histogram duration = { 0 };
	for (; c; c = ig_tls_next_server_core(c)) {
		const struct ig_tls_stats *s = ig_tls_core_stats(c);
		full += ig_counter_get(&s->full);
		resumed += ig_counter_get(&s->resumed);
		/* A handshake cut by its deadline failed too. */
		failed += ig_counter_get(&s->failed) + ig_counter_get(&s->timed_out);
		ig_histogram_sum_into(&duration, &s->handshake_us);
	}
	static const char handshakes[] = "ingot_tls_handshakes_total";
	ig_expo_family(e, handshakes, "counter",
		       "TLS handshakes of the server: ok (full), resumed (a session resumed) or failed.");
	const struct { const char *result; uint64_t n; } rows[] = {
		{ "ok", full }, { "resumed", resumed }, { "failed", failed },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct ig_label l = { "result", rows[i].result, strlen(rows[i].result) };
		ig_expo_sample(e, handshakes, &l, 1, (double)rows[i].n);
	}
	static const char seconds[] = "ingot_tls_handshake_duration_seconds";
	ig_expo_family(e, seconds, "histogram", "Duration of the server's completed TLS handshakes.");
	ig_expo_histogram(e, seconds, NULL, 0, &duration, &ig_duration_bounds);
}

struct ig_metrics_source ig_tls_metrics_source = { .write = write_tls };
