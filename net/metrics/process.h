/* The process's own metrics, named as Prometheus client libraries name
 * them (process_cpu_seconds_total, process_resident_memory_bytes, ...),
 * read from /proc/self when scraped, and ingot_build_info{version,tls,...} 1.
 * Where /proc does not exist (the bare-metal build) the process_* families
 * are left out and only the build info is written. */
#ifndef NET_METRICS_PROCESS_H
#define NET_METRICS_PROCESS_H

#include "net/metrics/metrics.h"
#include "ingot/version.h"

/* The source (net/metrics/metrics.h) and what ingot_build_info says:
 * version (the app's, as --version prints it, living as long as the
 * process), tls_name (the TLS backend's name, asked only when scraped:
 * the TLS code stays off the startup path's pages) and build (what the
 * binary was built from, include/ingot/version.h; NULL in a program
 * without an app). */
struct ig_process_metrics {
	struct ig_metrics_source source;
	const char *version;
	const char *(*tls_name)(void);
	const struct ig_build_info *build;
	double start_time; /* 0 until the first scrape computes it */
};
extern struct ig_process_metrics ig_process_metrics;

/* Registers the source, once, at startup, before the loops run: inline and
 * data only, so that the start runs no code of process.c, which
 * net/cold.ld keeps off the startup path's pages (only a scrape runs it). */
static inline void ig_process_metrics_register(const char *version, const char *(*tls_name)(void),
					       const struct ig_build_info *build)
{
	ig_process_metrics.version = version;
	ig_process_metrics.tls_name = tls_name;
	ig_process_metrics.build = build;
	ig_metrics_register(&ig_process_metrics.source);
}

#endif
