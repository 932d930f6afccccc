/* The warning for settings of parts the binary does not link (unlinked.h),
 * with those parts' names: the same as their rows, which
 * tests/integration/apps.test.mjs checks against the reference service's
 * --help. Only a binary that leaves a part out runs it, once, at the start:
 * a look at the environment's prefixes, and only when one matches the
 * warning itself, which net/cold.ld keeps off the startup pages with the
 * names. */
#include "net/unlinked.h"
#include "ingot/log.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Space-separated: one string per part. */
static const char client_names[] =
	"INGOT_CLIENT_CONNECTIONS INGOT_CLIENT_PIPELINING INGOT_CLIENT_CONNECT_TIMEOUT_MS "
	"INGOT_CLIENT_HEADERS_TIMEOUT_MS INGOT_CLIENT_BODY_TIMEOUT_MS INGOT_CLIENT_KEEP_ALIVE_MS "
	"INGOT_CLIENT_MAX_HEADER_BYTES INGOT_CLIENT_MAX_HEADERS INGOT_CLIENT_MAX_BODY INGOT_CLIENT_MAX_QUEUED";
static const char dns_names[] = "INGOT_DNS_PORT INGOT_DNS_SERVER INGOT_RESOLV_CONF INGOT_HOSTS_FILE";
static const char trust_names[] = "INGOT_TLS_CA_FILE INGOT_TLS_CA_MODE";
static const char pg_names[] =
	"DATABASE_URL DATABASE_URL_FILE INGOT_PG_POOL_SIZE INGOT_PG_PIPELINING INGOT_PG_MAX_QUEUED INGOT_PG_ACQUIRE_TIMEOUT_MS "
	"INGOT_PG_CONNECT_TIMEOUT_MS INGOT_PG_QUERY_TIMEOUT_MS INGOT_PG_MAX_MESSAGE_BYTES INGOT_MIGRATE_OUT_OF_ORDER";

const char *const ig_optional_setting_names[4] = { client_names, dns_names, trust_names, pg_names };

struct list {
	char text[512];
	size_t len;
};

/* Adds those of names (space-separated) that the environment sets. */
static void add_set(struct list *l, const char *names)
{
	char name[64];
	for (const char *p = names; *p;) {
		size_t k = strcspn(p, " ");
		if (k < sizeof name) {
			memcpy(name, p, k);
			name[k] = 0;
			if (getenv(name) && l->len + k + 1 < sizeof l->text) {
				if (l->len)
					l->text[l->len++] = ',';
				memcpy(l->text + l->len, name, k);
				l->len += k;
			}
		}
		p += k + (p[k] == ' ');
	}
}

__attribute__((cold, noinline)) static void warn(const struct ig_linked_parts *linked)
{
	struct list l = { .len = 0 };
	if (!linked->client)
		add_set(&l, client_names);
	if (!linked->dns)
		add_set(&l, dns_names);
	if (!linked->trust)
		add_set(&l, trust_names);
	if (!linked->pg)
		add_set(&l, pg_names);
	struct ig_logline line;
	if (l.len && ig_log_begin(&line, IG_LOG_WARN, "settings of parts this app does not link are ignored")) {
		ig_log_str(&line, "ignored", l.text, l.len);
		ig_log_end(&line);
	}
}

/* The names' prefixes: most environments have none of them. */
static bool may_be_set(void)
{
	static const char prefixes[] = "DATABASE_URL=\0INGOT_PG_\0INGOT_CLIENT_\0INGOT_DNS_\0INGOT_RESOLV_\0"
				       "INGOT_HOSTS_\0INGOT_TLS_CA_\0";
	for (char **e = environ; *e; e++)
		for (const char *p = prefixes; *p; p += strlen(p) + 1)
			if (strncmp(*e, p, strlen(p)) == 0)
				return true;
	return false;
}

void ig_unlinked_settings_warn(const struct ig_linked_parts *linked)
{
	if (may_be_set())
		warn(linked);
}
