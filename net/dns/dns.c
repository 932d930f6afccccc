/* The DNS stub resolver of outbound connections (see dns.h for its behaviour): literals,
 * localhost, the hosts file and a per-core cache answer at once; anything
 * else becomes a lookup that sends A and AAAA questions over UDP from the
 * core's loop and joins every query for the same name. It knows nothing of
 * HTTP; the dialer (net/dial) turns its addresses into connects. */
#include "dns.h"
#include "dns_wire.h"

#include "kernel/runtime/file.h"
#include "kernel/runtime/loop.h"
#include "kernel/runtime/pool.h"
#include "net/ascii.h"
#include "net/dns/dns_settings.h"
#include "net/stack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define NAME_TEXT_MAX 254  /* 253 octets and a NUL */
#define MAX_NAMESERVERS 3  /* as MAXNS in glibc and musl */
#define DEFAULT_TIMEOUT_S 5
#define MAX_TIMEOUT_S 30
#define DEFAULT_ATTEMPTS 2
#define MAX_ATTEMPTS 5
/* Once one family has addresses, how long the other is waited for: a
 * resolver that drops AAAA queries must not cost the whole timeout (and
 * with it the caller's connect deadline). */
#define OTHER_FAMILY_GRACE_MS 200
#define FILE_MAX (1u << 20)   /* bytes read of the hosts file or resolv.conf */
#define CACHE_TTL_MAX_S 3600
#define LOOKUPS_MAX 128       /* distinct names in flight per core */
#define QUERIES_MAX 4096      /* queries waiting on them per core */

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

struct nameserver {
	struct sockaddr_storage addr;
	socklen_t len;
};

struct hosts_entry {
	const char *name; /* inside the resolver's copy of the file, lowercase */
	uint8_t name_len;
	bool v6;
	uint8_t addr[16];
};

struct cache_entry {
	char name[NAME_TEXT_MAX];
	uint8_t name_len; /* 0: empty slot */
	uint64_t expires_ms, used_ms;
	struct dns_addrs addrs;
};

/* One name being looked up; the queries waiting for it hang off it. */
struct dns_lookup {
	struct dns_resolver *r;
	struct dns_lookup *next, **pprev; /* the resolver's lookups in flight */
	struct dns_query *waiters;
	bool finishing;                   /* done callbacks are running */
	char name[NAME_TEXT_MAX];
	uint8_t name_len;
	struct dns_exchange x;            /* the questions and what the replies gave */
	struct ig_net_dgram dg;           /* this try's UDP endpoint */
	bool open;                        /* dg is open */
	struct ig_timer timer;            /* this try's deadline */
	unsigned tries;
	bool grace;                       /* the deadline is the other family's grace */
	const char *last_failure;
	char message[NAME_TEXT_MAX + 128];
};

struct dns_query {
	struct dns_lookup *lookup;
	struct dns_query *next, **pprev;
	dns_done_fn *done;
	void *arg;
	uint16_t port;
};

struct dns_resolver {
	struct ig_loop *loop;
	bool loaded; /* the files have been read */
	/* The stack's nameservers (DHCP's), taken again before each lookup
	   that starts while none is in flight: a lease may name new ones. */
	bool ns_from_stack;
	struct nameserver ns[MAX_NAMESERVERS];
	unsigned ns_count;
	uint32_t timeout_ms;
	unsigned attempts;
	char *hosts_text;
	struct hosts_entry *hosts;
	size_t hosts_count;
	struct ig_pool lookup_pool, query_pool;
	void *lookup_mem, *query_mem;
	struct dns_lookup *active;
	struct cache_entry cache[DNS_CACHE_SLOTS];
};

/* ---- small helpers ---------------------------------------------------- */

static inline bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/* Calls done with the addresses, IPv4 first, each with the port. */
static void deliver(const struct dns_addrs *a, uint16_t port, dns_done_fn *done, void *arg)
{
	struct sockaddr_storage out[DNS_MAX_ADDRS];
	size_t n = 0;
	for (unsigned i = 0; i < a->n4; i++, n++) {
		struct sockaddr_in *s = (struct sockaddr_in *)&out[n];
		memset(&out[n], 0, sizeof out[n]);
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, a->v4[i], 4);
	}
	for (unsigned i = 0; i < a->n6; i++, n++) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&out[n];
		memset(&out[n], 0, sizeof out[n]);
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		memcpy(&s->sin6_addr, a->v6[i], 16);
	}
	done(arg, 0, out, n, NULL);
}

static void fail_now(const char *host, const char *why, dns_done_fn *done, void *arg)
{
	char message[200];
	snprintf(message, sizeof message, "%.120s: %s", host, why);
	done(arg, DNS_FAILED, NULL, 0, message);
}

/* ---- names ------------------------------------------------------------ */

/* A dotted quad or an IPv6 literal, bare or in brackets. */
static bool parse_literal(const char *host, struct dns_addrs *a)
{
	uint8_t addr[16];
	char inner[INET6_ADDRSTRLEN];
	size_t n = strnlen(host, sizeof inner + 2);
	*a = (struct dns_addrs){ 0 };
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		if (n - 2 >= sizeof inner)
			return false;
		memcpy(inner, host + 1, n - 2);
		inner[n - 2] = '\0';
		return inet_pton(AF_INET6, inner, addr) == 1 && ig_dns_add_addr(a, true, addr);
	}
	if (inet_pton(AF_INET, host, addr) == 1)
		return ig_dns_add_addr(a, false, addr);
	return inet_pton(AF_INET6, host, addr) == 1 && ig_dns_add_addr(a, true, addr);
}

/* Lowercases a host name into out without its final dot; false if it is
 * not a name we would send (see dns.h). */
static bool normalise_name(const char *host, char *out, uint8_t *out_len)
{
	size_t n = strnlen(host, NAME_TEXT_MAX + 1);
	if (n > 0 && host[n - 1] == '.')
		n--;
	if (n == 0 || n > NAME_TEXT_MAX - 1)
		return false;
	size_t label = 0;
	for (size_t i = 0; i < n; i++) {
		char c = host[i];
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (!is_name_char(c) || ++label > 63) {
			return false;
		}
		out[i] = ig_ascii_lower(c);
	}
	if (label == 0)
		return false;
	out[n] = '\0';
	*out_len = (uint8_t)n;
	return true;
}

/* RFC 6761 6.3: localhost and every name under it are the loopback. */
static bool is_localhost(const char *name, size_t n)
{
	static const char lh[] = "localhost";
	size_t l = sizeof lh - 1;
	return (n == l && memcmp(name, lh, l) == 0) ||
	       (n > l && name[n - l - 1] == '.' && memcmp(name + n - l, lh, l) == 0);
}

static void loopback_addrs(struct dns_addrs *a)
{
	static const uint8_t v4[4] = { 127, 0, 0, 1 };
	uint8_t v6[16] = { 0 };
	v6[15] = 1;
	*a = (struct dns_addrs){ 0 };
	ig_dns_add_addr(a, false, v4);
	ig_dns_add_addr(a, true, v6);
}

/* ---- the files -------------------------------------------------------- */

/* The file's first FILE_MAX bytes, NUL-terminated, or NULL if unreadable. */
static char *read_text_file(const char *path, size_t *len)
{
	return ig_read_file(path, FILE_MAX, IG_FILE_PREFIX, len, NULL, 0);
}

/* Splits text into lines and each line into blank-separated words, after
 * cutting comments that start with '#' (and ';' in resolv.conf); calls
 * fn with the words of each non-empty line. Modifies text. */
#define MAX_WORDS 32
typedef void line_fn(void *ctx, char **words, size_t count);

static void for_each_line(char *text, bool semicolon_comments, line_fn *fn, void *ctx)
{
	char *p = text;
	while (*p) {
		char *end = strchr(p, '\n'), *next = end ? end + 1 : p + strlen(p);
		if (end)
			*end = '\0';
		char *cut = strpbrk(p, semicolon_comments ? "#;" : "#");
		if (cut)
			*cut = '\0';
		char *words[MAX_WORDS];
		size_t count = 0;
		for (char *w = p; *w && count < MAX_WORDS;) {
			while (*w == ' ' || *w == '\t' || *w == '\r')
				*w++ = '\0';
			if (!*w)
				break;
			words[count++] = w;
			while (*w && *w != ' ' && *w != '\t' && *w != '\r')
				w++;
		}
		if (count)
			fn(ctx, words, count);
		p = next;
	}
}

static bool parse_address(const char *s, bool *v6, uint8_t addr[16])
{
	*v6 = strchr(s, ':') != NULL;
	return inet_pton(*v6 ? AF_INET6 : AF_INET, s, addr) == 1;
}

static unsigned option_value(const char *word, const char *name, unsigned def, unsigned max)
{
	size_t n = strlen(name);
	if (strncmp(word, name, n) != 0)
		return def;
	char *end;
	unsigned long v = strtoul(word + n, &end, 10);
	if (end == word + n || *end)
		return def;
	return v < 1 ? 1 : v > max ? max : (unsigned)v;
}

struct resolv_ctx {
	struct dns_resolver *r;
	bool nameservers; /* resolv.conf's nameserver lines count */
	unsigned timeout_s;
};

static void add_nameserver(struct dns_resolver *r, bool v6, const uint8_t *addr)
{
	/* The settings were checked at startup (net/dns/dns_settings.c). */
	uint16_t port = htons((uint16_t)ig_dns_config.port);
	if (r->ns_count == MAX_NAMESERVERS)
		return;
	struct nameserver *ns = &r->ns[r->ns_count++];
	memset(ns, 0, sizeof *ns);
	if (v6) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ns->addr;
		s->sin6_family = AF_INET6;
		s->sin6_port = port;
		memcpy(&s->sin6_addr, addr, 16);
		ns->len = sizeof *s;
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)&ns->addr;
		s->sin_family = AF_INET;
		s->sin_port = port;
		memcpy(&s->sin_addr, addr, 4);
		ns->len = sizeof *s;
	}
}

static void resolv_line(void *ctx_, char **w, size_t count)
{
	struct resolv_ctx *ctx = ctx_;
	struct dns_resolver *r = ctx->r;
	if (strcmp(w[0], "nameserver") == 0 && count >= 2) {
		uint8_t addr[16];
		bool v6;
		if (ctx->nameservers && parse_address(w[1], &v6, addr))
			add_nameserver(r, v6, addr);
	} else if (strcmp(w[0], "options") == 0) {
		for (size_t i = 1; i < count; i++) {
			ctx->timeout_s = option_value(w[i], "timeout:", ctx->timeout_s, MAX_TIMEOUT_S);
			r->attempts = option_value(w[i], "attempts:", r->attempts, MAX_ATTEMPTS);
		}
	}
}

/* The nameservers: INGOT_DNS_SERVER's, else the stack's own (lwIP's, from
 * DHCP), else resolv.conf's; its options apply to all of them. */
static void load_resolv_conf(struct dns_resolver *r)
{
	const struct ig_dns_config *c = &ig_dns_config;
	r->ns_from_stack = c->servers == 0 && ig_net_stack->nameservers;
	struct resolv_ctx ctx = { .r = r, .nameservers = c->servers == 0 && !r->ns_from_stack,
				  .timeout_s = DEFAULT_TIMEOUT_S };
	r->attempts = DEFAULT_ATTEMPTS;
	size_t len;
	char *text = read_text_file(ig_dns_config.resolv_conf, &len);
	if (text) {
		for_each_line(text, true, resolv_line, &ctx);
		free(text);
	}
	r->timeout_ms = ctx.timeout_s * 1000;
	for (unsigned i = 0; i < c->servers; i++)
		add_nameserver(r, c->server_addr[i].v6, c->server_addr[i].addr);
	if (r->ns_count == 0 && ctx.nameservers) { /* as glibc and musl: the local host */
		static const uint8_t local[4] = { 127, 0, 0, 1 };
		add_nameserver(r, false, local);
	}
}

/* The stack's nameservers as they are now. */
static void take_stack_nameservers(struct dns_resolver *r)
{
	struct sockaddr_storage got[MAX_NAMESERVERS];
	size_t n = ig_net_stack->nameservers(got, MAX_NAMESERVERS);
	r->ns_count = 0;
	for (size_t i = 0; i < n && i < MAX_NAMESERVERS; i++) {
		if (got[i].ss_family == AF_INET6)
			add_nameserver(r, true, ((const struct sockaddr_in6 *)&got[i])->sin6_addr.s6_addr);
		else if (got[i].ss_family == AF_INET)
			add_nameserver(r, false, (const uint8_t *)&((const struct sockaddr_in *)&got[i])->sin_addr);
	}
}

/* Counts the entries (hosts == NULL) or fills them. */
struct hosts_ctx {
	struct hosts_entry *hosts;
	size_t count;
};

static void hosts_line(void *ctx_, char **w, size_t count)
{
	struct hosts_ctx *ctx = ctx_;
	uint8_t addr[16];
	bool v6;
	if (count < 2 || !parse_address(w[0], &v6, addr))
		return;
	for (size_t i = 1; i < count; i++) {
		size_t n = strlen(w[i]);
		if (n > 0 && w[i][n - 1] == '.')
			n--;
		if (n == 0 || n > NAME_TEXT_MAX - 1)
			continue;
		if (ctx->hosts) {
			for (size_t k = 0; k < n; k++)
				w[i][k] = ig_ascii_lower(w[i][k]);
			struct hosts_entry *e = &ctx->hosts[ctx->count];
			e->name = w[i];
			e->name_len = (uint8_t)n;
			e->v6 = v6;
			memcpy(e->addr, addr, 16);
		}
		ctx->count++;
	}
}

/* The file is parsed twice from two copies: once to count, once to fill
 * entries that point into the copy that is kept. */
static void load_hosts(struct dns_resolver *r)
{
	size_t len;
	char *text = read_text_file(ig_dns_config.hosts_file, &len);
	if (!text)
		return;
	char *scratch = malloc(len + 1);
	struct hosts_ctx ctx = { 0 };
	if (scratch) {
		memcpy(scratch, text, len + 1);
		for_each_line(scratch, false, hosts_line, &ctx);
		free(scratch);
	}
	if (ctx.count == 0 || !(r->hosts = calloc(ctx.count, sizeof *r->hosts))) {
		free(text);
		return;
	}
	ctx = (struct hosts_ctx){ .hosts = r->hosts };
	for_each_line(text, false, hosts_line, &ctx);
	r->hosts_text = text;
	r->hosts_count = ctx.count;
}

static void load_files(struct dns_resolver *r)
{
	if (r->loaded)
		return;
	r->loaded = true;
	load_resolv_conf(r);
	load_hosts(r);
}

static bool hosts_lookup(const struct dns_resolver *r, const char *name, size_t n,
			 struct dns_addrs *a)
{
	*a = (struct dns_addrs){ 0 };
	for (size_t i = 0; i < r->hosts_count; i++) {
		const struct hosts_entry *e = &r->hosts[i];
		if (e->name_len == n && memcmp(e->name, name, n) == 0)
			ig_dns_add_addr(a, e->v6, e->addr);
	}
	return a->n4 + a->n6 > 0;
}

/* ---- cache ------------------------------------------------------------ */

static uint64_t now_ms(const struct dns_resolver *r)
{
	return r->loop->clock.now_ms;
}

static const struct cache_entry *cache_find(struct dns_resolver *r, const char *name, size_t n)
{
	uint64_t now = now_ms(r);
	for (size_t i = 0; i < DNS_CACHE_SLOTS; i++) {
		struct cache_entry *c = &r->cache[i];
		if (c->name_len == n && c->expires_ms > now && memcmp(c->name, name, n) == 0) {
			c->used_ms = now;
			return c;
		}
	}
	return NULL;
}

static bool cache_slot_free(const struct cache_entry *c, uint64_t now)
{
	return c->name_len == 0 || c->expires_ms <= now;
}

/* Into the slot of the same name, else an empty or expired one, else the
 * least recently used. */
static void cache_put(struct dns_resolver *r, const char *name, size_t n,
		      const struct dns_addrs *a, uint32_t ttl_s)
{
	if (ttl_s == 0)
		return;
	if (ttl_s > CACHE_TTL_MAX_S)
		ttl_s = CACHE_TTL_MAX_S;
	uint64_t now = now_ms(r);
	struct cache_entry *slot = NULL;
	for (size_t i = 0; i < DNS_CACHE_SLOTS; i++) {
		struct cache_entry *c = &r->cache[i];
		if (c->name_len == n && memcmp(c->name, name, n) == 0) {
			slot = c;
			break;
		}
		bool c_free = cache_slot_free(c, now);
		if (!slot || (c_free && !cache_slot_free(slot, now)) ||
		    (!c_free && !cache_slot_free(slot, now) && c->used_ms < slot->used_ms))
			slot = c;
	}
	memcpy(slot->name, name, n);
	slot->name_len = (uint8_t)n;
	slot->expires_ms = now + (uint64_t)ttl_s * 1000;
	slot->used_ms = now;
	slot->addrs = *a;
}

/* ---- lookups ---------------------------------------------------------- */

static void close_try(struct dns_lookup *l)
{
	ig_timer_cancel(&l->r->loop->timers, &l->timer);
	if (l->open) {
		ig_net_stack->dgram_close(&l->dg);
		l->open = false;
	}
}

static void unlink_lookup(struct dns_lookup *l)
{
	close_try(l);
	*l->pprev = l->next;
	if (l->next)
		l->next->pprev = l->pprev;
}

/* Runs the done callbacks of every waiting query and frees the lookup.
 * ok: deliver l->x.addrs; else fail with l->message. */
static void finish(struct dns_lookup *l, bool ok)
{
	struct dns_resolver *r = l->r;
	unlink_lookup(l);
	l->finishing = true;
	if (ok)
		cache_put(r, l->name, l->name_len, &l->x.addrs, l->x.ttl);
	struct dns_query *q;
	while ((q = l->waiters) != NULL) {
		l->waiters = q->next;
		if (q->next)
			q->next->pprev = &l->waiters;
		dns_done_fn *done = q->done;
		void *arg = q->arg;
		uint16_t port = q->port;
		ig_pool_give(&r->query_pool, q);
		if (ok)
			deliver(&l->x.addrs, port, done, arg);
		else
			done(arg, DNS_FAILED, NULL, 0, l->message);
	}
	ig_pool_give(&r->lookup_pool, l);
}

static void fail_lookup(struct dns_lookup *l, const char *why)
{
	snprintf(l->message, sizeof l->message, "%s: %s", l->name, why);
	finish(l, false);
}

/* Both questions answered: addresses, or none for either family. */
static void complete(struct dns_lookup *l)
{
	if (l->x.addrs.n4 + l->x.addrs.n6 == 0)
		fail_lookup(l, "no address (neither A nor AAAA records)");
	else
		finish(l, true);
}

/* Every try is spent: what did arrive is delivered, else the last reason. */
static void give_up(struct dns_lookup *l)
{
	if (l->x.addrs.n4 + l->x.addrs.n6 > 0) {
		finish(l, true);
		return;
	}
	snprintf(l->message, sizeof l->message, "%s: %s (%u tr%s, %u nameserver%s)", l->name,
		 l->last_failure, l->tries, l->tries == 1 ? "y" : "ies", l->r->ns_count,
		 l->r->ns_count == 1 ? "" : "s");
	finish(l, false);
}

static void random_ids(struct dns_lookup *l)
{
	uint16_t ids[2];
	if (getrandom(ids, sizeof ids, GRND_NONBLOCK) != (ssize_t)sizeof ids) {
		/* No entropy yet (early boot): still unpredictable enough to
		 * an off-path sender that cannot read our clock. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15u ^ (uintptr_t)l;
		ids[0] = (uint16_t)(x >> 16);
		ids[1] = (uint16_t)(x >> 40);
	}
	if (ids[0] == ids[1])
		ids[1] ^= 1;
	l->x.id[DNS_FAM_V4] = ids[0];
	l->x.id[DNS_FAM_V6] = ids[1];
}

static void on_datagram(struct ig_net_dgram *d, const uint8_t *data, size_t len, int err);

/* Opens this try's endpoint and sends the unanswered questions; NULL or
 * why this server cannot be asked. */
static const char *send_questions(struct dns_lookup *l, const struct nameserver *ns)
{
	/* The stack picks an ephemeral port and drops datagrams from anyone
	 * but the server. */
	l->dg.fn = on_datagram;
	int e = ig_net_stack->dgram_open(&l->dg, l->r->loop, (const struct sockaddr *)&ns->addr, ns->len);
	if (e != 0)
		return e == ENETUNREACH || e == EHOSTUNREACH || e == EAFNOSUPPORT || e == EADDRNOTAVAIL
			       ? "nameserver unreachable"
			       : "cannot open a UDP endpoint";
	l->open = true;
	random_ids(l);
	for (int fam = DNS_FAM_V4; fam <= DNS_FAM_V6; fam++) {
		if (l->x.answered[fam])
			continue;
		uint8_t msg[12 + DNS_NAME_WIRE_MAX + 4];
		size_t len = ig_dns_build_question(&l->x, fam, msg);
		if ((e = ig_net_stack->dgram_send(&l->dg, msg, len)) != 0)
			return e == ECONNREFUSED ? "nameserver port closed" : "cannot send the query";
	}
	return NULL;
}

/* Asks the next server in turn. Returns false when the tries ran out and
 * the lookup has finished (and is freed). */
static bool next_try(struct dns_lookup *l)
{
	struct dns_resolver *r = l->r;
	close_try(l);
	while (l->tries < r->attempts * r->ns_count) {
		const struct nameserver *ns = &r->ns[l->tries % r->ns_count];
		l->tries++;
		const char *why = send_questions(l, ns);
		if (why == NULL) {
			ig_timer_set(&r->loop->timers, &l->timer, now_ms(r) + r->timeout_ms);
			return true;
		}
		l->last_failure = why;
		close_try(l);
	}
	give_up(l);
	return false;
}

static void on_try_timeout(struct ig_timer *t)
{
	struct dns_lookup *l = container_of(t, struct dns_lookup, timer);
	if (l->grace) {
		finish(l, true); /* one family's addresses; the other never came */
		return;
	}
	l->last_failure = "timed out";
	next_try(l);
}

static void on_datagram(struct ig_net_dgram *d, const uint8_t *data, size_t len, int err)
{
	struct dns_lookup *l = container_of(d, struct dns_lookup, dg);
	if (err) {
		l->last_failure = err == ECONNREFUSED ? "nameserver port closed" : "cannot read the reply";
		next_try(l);
		return;
	}
	switch (ig_dns_read_reply(&l->x, data, len, &l->last_failure)) {
	case DNS_REPLY_IGNORED:
		break;
	case DNS_REPLY_USED:
		if (l->x.answered[DNS_FAM_V4] && l->x.answered[DNS_FAM_V6]) {
			complete(l);
			return;
		}
		if (!l->grace && l->x.addrs.n4 + l->x.addrs.n6 > 0) {
			/* Never later than this try's own deadline. */
			uint64_t at = now_ms(l->r) + OTHER_FAMILY_GRACE_MS;
			l->grace = true;
			if (l->timer.deadline_ms > at)
				ig_timer_set(&l->r->loop->timers, &l->timer, at);
		}
		break;
	case DNS_REPLY_SERVER_FAILED:
		next_try(l);
		break;
	case DNS_REPLY_FATAL:
		fail_lookup(l, l->last_failure);
		break;
	}
}

static struct dns_lookup *find_active(struct dns_resolver *r, const char *name, size_t n)
{
	for (struct dns_lookup *l = r->active; l; l = l->next)
		if (l->name_len == n && memcmp(l->name, name, n) == 0)
			return l;
	return NULL;
}

static struct dns_lookup *new_lookup(struct dns_resolver *r, const char *name, uint8_t n)
{
	struct dns_lookup *l = ig_pool_take(&r->lookup_pool);
	if (!l)
		return NULL;
	memset(l, 0, sizeof *l);
	l->r = r;
	l->timer.fn = on_try_timeout;
	l->x.ttl = UINT32_MAX;
	memcpy(l->name, name, n + 1u);
	l->name_len = n;
	l->x.qname_len = ig_dns_name_to_wire(name, n, l->x.qname);
	l->next = r->active;
	if (r->active)
		r->active->pprev = &l->next;
	l->pprev = &r->active;
	r->active = l;
	return l;
}

/* ---- the interface ---------------------------------------------------- */

struct dns_resolver *ig_dns_resolver_new(struct ig_loop *loop)
{
	struct dns_resolver *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->loop = loop;
	ig_pool_init(&r->lookup_pool, sizeof(struct dns_lookup), LOOKUPS_MAX, LOOKUPS_MAX);
	ig_pool_init(&r->query_pool, sizeof(struct dns_query), QUERIES_MAX, QUERIES_MAX);
	/* calloc'd, so pages are touched only as the pools reach them. */
	r->lookup_mem = calloc(LOOKUPS_MAX, r->lookup_pool.obj_size);
	r->query_mem = calloc(QUERIES_MAX, r->query_pool.obj_size);
	if (!r->lookup_mem || !r->query_mem) {
		free(r->lookup_mem);
		free(r->query_mem);
		free(r);
		return NULL;
	}
	ig_pool_seed(&r->lookup_pool, r->lookup_mem, LOOKUPS_MAX);
	ig_pool_seed(&r->query_pool, r->query_mem, QUERIES_MAX);
	return r;
}

void ig_dns_resolver_free(struct dns_resolver *r)
{
	if (!r)
		return;
	while (r->active) {
		struct dns_lookup *l = r->active;
		unlink_lookup(l);
	}
	free(r->hosts);
	free(r->hosts_text);
	free(r->lookup_mem);
	free(r->query_mem);
	free(r);
}

struct dns_query *ig_dns_resolve(struct dns_resolver *r, const char *host, uint16_t port,
			      dns_done_fn *done, void *arg)
{
	struct dns_addrs a;
	if (parse_literal(host, &a)) {
		deliver(&a, port, done, arg);
		return NULL;
	}
	char name[NAME_TEXT_MAX];
	uint8_t n;
	if (!normalise_name(host, name, &n)) {
		fail_now(host, "invalid host name", done, arg);
		return NULL;
	}
	if (is_localhost(name, n)) {
		loopback_addrs(&a);
		deliver(&a, port, done, arg);
		return NULL;
	}
	load_files(r);
	if (hosts_lookup(r, name, n, &a)) {
		deliver(&a, port, done, arg);
		return NULL;
	}
	const struct cache_entry *c = cache_find(r, name, n);
	if (c) {
		a = c->addrs; /* done may start lookups that reuse the slot */
		deliver(&a, port, done, arg);
		return NULL;
	}
	struct dns_lookup *l = find_active(r, name, n);
	bool fresh = l == NULL;
	if (fresh && r->ns_from_stack && !r->active)
		take_stack_nameservers(r);
	if (fresh && r->ns_count == 0) {
		fail_now(name, "no nameserver (the network's DHCP gave none; INGOT_DNS_SERVER names one)", done, arg);
		return NULL;
	}
	if (fresh && !(l = new_lookup(r, name, n))) {
		fail_now(name, "too many DNS lookups in flight", done, arg);
		return NULL;
	}
	struct dns_query *q = ig_pool_take(&r->query_pool);
	if (!q) {
		if (fresh) {
			unlink_lookup(l);
			ig_pool_give(&r->lookup_pool, l);
		}
		fail_now(name, "too many DNS queries in flight", done, arg);
		return NULL;
	}
	/* Appended, so that joined queries are answered in the order asked. */
	*q = (struct dns_query){ .lookup = l, .done = done, .arg = arg, .port = port };
	struct dns_query **tail = &l->waiters;
	while (*tail)
		tail = &(*tail)->next;
	q->pprev = tail;
	*tail = q;
	if (fresh && !next_try(l))
		return NULL; /* no server could be asked: done has run */
	return q;
}

void ig_dns_cancel(struct dns_query *q)
{
	struct dns_lookup *l = q->lookup;
	struct dns_resolver *r = l->r;
	*q->pprev = q->next;
	if (q->next)
		q->next->pprev = q->pprev;
	ig_pool_give(&r->query_pool, q);
	if (l->waiters == NULL && !l->finishing) {
		unlink_lookup(l);
		ig_pool_give(&r->lookup_pool, l);
	}
}

size_t ig_dns_resolver_pending(const struct dns_resolver *r)
{
	return r->query_pool.in_use;
}
