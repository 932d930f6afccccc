/* The process's own metrics, named as Prometheus client libraries name
 * them (process_cpu_seconds_total, process_resident_memory_bytes, ...),
 * read from /proc/self when scraped, and ingot_build_info{version,tls} 1.
 * Where /proc does not exist (the bare-metal build) the process_* families
 * are left out and only the build info is written. */
#ifndef NET_METRICS_PROCESS_H
#define NET_METRICS_PROCESS_H

/* Registers the source (net/metrics/metrics.h). version (the app's, as
 * --version prints it) and tls (the TLS backend's name) must live as long
 * as the process. Once, at startup, before the loops run. */
void ig_process_metrics_register(const char *version, const char *tls);

#endif
