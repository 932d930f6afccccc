/* The server's per-core meters (meter.h): the series table, an array of
 * entries appended in the order first seen with an open-addressing index
 * beside it, mapped once and touched only as series appear, so that an idle
 * process pays no resident memory for it and a request no allocation. */
#include "meter.h"

#include <sys/mman.h>

const char *const ig_http_close_reason_names[HTTP_CLOSE_REASONS] = {
	"client", "idle", "header_timeout", "body_timeout", "write_timeout", "error", "drain",
};

const char *const ig_http_method_names[HTTP_METHODS] = {
	"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "_OTHER",
};

const int ig_http_error_statuses[HTTP_ERROR_STATUSES - 1] = { 400, 408, 413, 414, 415, 431, 500, 501, 503, 505 };

/* By length, then one comparison of a constant size (inlined loads): every
 * metered request asks. */
IG_HOT uint32_t ig_http_method_index(ig_str m, bool head)
{
#define IS(lit) (memcmp(m.ptr, lit, sizeof(lit) - 1) == 0)
	if (head)
		return 1;
	switch (m.len) {
	case 3:
		return IS("GET") ? 0 : IS("PUT") ? 3 : HTTP_METHODS - 1;
	case 4:
		return IS("POST") ? 2 : IS("HEAD") ? 1 : HTTP_METHODS - 1;
	case 5:
		return IS("PATCH") ? 8 : IS("TRACE") ? 7 : HTTP_METHODS - 1;
	case 6:
		return IS("DELETE") ? 4 : HTTP_METHODS - 1;
	case 7:
		return IS("OPTIONS") ? 6 : IS("CONNECT") ? 5 : HTTP_METHODS - 1;
	default:
		return HTTP_METHODS - 1;
	}
#undef IS
}

/* Series per route: enough for every method a route answers with a few
 * statuses each; the overflow series takes the rest. */
#define SERIES_PER_ROUTE 32
#define SERIES_MIN 64
#define SERIES_MAX 16384

void ig_http_meter_init(struct http_meter *m, uint32_t route_count)
{
	*m = (struct http_meter){ .route_count = route_count };
	size_t cap = ((size_t)route_count + 1) * SERIES_PER_ROUTE;
	cap = cap < SERIES_MIN ? SERIES_MIN : cap > SERIES_MAX ? SERIES_MAX : cap;
	uint32_t slots = 1;
	while (slots < cap * 2)
		slots <<= 1;
	size_t validation = ((size_t)route_count + 1) * sizeof(ig_counter);
	size_t index = (size_t)slots * sizeof(uint16_t);
	size_t bytes = cap * sizeof(struct http_series) + 2 * validation + index;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	m->series = (struct http_series *)p;
	m->validation = (ig_counter *)(p + cap * sizeof(struct http_series));
	m->rate_limited = m->validation + route_count + 1;
	m->index = (_Atomic uint16_t *)(p + cap * sizeof(struct http_series) + 2 * validation);
	m->cap = (uint32_t)cap;
	m->index_mask = slots - 1;
}

IG_HOT static uint32_t slot_of(uint32_t key)
{
	return (key * 2654435761u) >> 7; /* Fibonacci hashing; the mask keeps the low bits */
}

/* The owner's look-up and insertion: at most cap - 1 keyed entries, the
 * last one being the overflow series. */
IG_HOT static struct http_series *series_for(struct http_meter *m, uint32_t key)
{
	uint32_t used = atomic_load_explicit(&m->used, memory_order_relaxed);
	for (uint32_t s = slot_of(key);; s++) {
		s &= m->index_mask;
		uint16_t e = atomic_load_explicit(&m->index[s], memory_order_relaxed);
		if (e && m->series[e - 1].key == key)
			return &m->series[e - 1];
		if (e)
			continue;
		if (used >= m->cap - 1) {
			struct http_series *o = &m->series[m->cap - 1];
			if (used == m->cap - 1) {
				o->key = HTTP_SERIES_OVERFLOW;
				atomic_store_explicit(&m->used, m->cap, memory_order_release);
			}
			return o;
		}
		m->series[used].key = key;
		atomic_store_explicit(&m->used, used + 1, memory_order_release);
		atomic_store_explicit(&m->index[s], (uint16_t)(used + 1), memory_order_relaxed);
		return &m->series[used];
	}
}

IG_HOT void ig_http_meter_request(struct http_meter *m, uint32_t route, uint32_t method, int status, uint64_t duration_us,
			size_t request_bytes, size_t response_bytes)
{
	if (ig_unlikely(!m->series))
		return;
	uint32_t code = status >= 100 && status <= 599 ? (uint32_t)status : 0;
	uint32_t key = route << 16 | method << 12 | code;
	struct http_series *s = m->last && m->last->key == key ? m->last : (m->last = series_for(m, key));
	ig_histogram_observe(&s->duration, &ig_duration_bounds, duration_us);
	ig_histogram_observe_in(&s->request_size, ig_size_bucket(request_bytes), (uint64_t)request_bytes * 1000000);
	ig_histogram_observe_in(&s->response_size, ig_size_bucket(response_bytes), (uint64_t)response_bytes * 1000000);
}

void ig_http_meter_error(struct http_meter *m, int status)
{
	uint32_t i = 0;
	while (i < HTTP_ERROR_STATUSES - 1 && ig_http_error_statuses[i] != status)
		i++;
	ig_counter_add(&m->errors[i], 1);
}

uint32_t ig_http_meter_published(const struct http_meter *m)
{
	return atomic_load_explicit((_Atomic uint32_t *)&m->used, memory_order_acquire);
}

const struct http_series *ig_http_meter_find(const struct http_meter *m, uint32_t key)
{
	uint32_t used = ig_http_meter_published(m);
	if (!m->series)
		return NULL;
	if (key == HTTP_SERIES_OVERFLOW)
		return used == m->cap ? &m->series[m->cap - 1] : NULL;
	for (uint32_t s = slot_of(key), n = 0; n <= m->index_mask; s++, n++) {
		s &= m->index_mask;
		uint16_t e = atomic_load_explicit(&m->index[s], memory_order_relaxed);
		if (!e || e > used)
			return NULL; /* an entry published after used was read is not seen */
		if (m->series[e - 1].key == key)
			return &m->series[e - 1];
	}
	return NULL;
}
