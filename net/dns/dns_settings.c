/* The DNS resolver's rows of the settings table: the files it reads, the
 * nameservers a setting names and their port. */
#include "dns_settings.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* The one declaration of the defaults, copied into ig_dns_config by the
 * parse. */
static const struct ig_dns_config dns_defaults = {
	.port = 53,
	.server = "",
	.resolv_conf = "/etc/resolv.conf",
	.hosts_file = "/etc/hosts",
};

struct ig_dns_config ig_dns_config;

static const struct ig_option dns_rows[] = {
	{ "INGOT_DNS_PORT", IG_OPT_INT, &ig_dns_config.port, 1, 65535,
	  IG_HELP("the nameservers' UDP port (resolv.conf cannot name one)") },
	{ "INGOT_DNS_SERVER", IG_OPT_STR, &ig_dns_config.server, 0, 0,
	  IG_HELP("nameservers (up to 3 addresses, comma-separated) asked instead of resolv.conf's "
		  "or, over lwIP, DHCP's; empty: theirs") },
	{ "INGOT_RESOLV_CONF", IG_OPT_STR, &ig_dns_config.resolv_conf, 0, 0,
	  IG_HELP("nameservers and options, read on the first name looked up") },
	{ "INGOT_HOSTS_FILE", IG_OPT_STR, &ig_dns_config.hosts_file, 0, 0,
	  IG_HELP("names answered before DNS, read on the first name looked up") },
};

/* INGOT_DNS_SERVER's list into server_addr; a wrong item stops the start. */
__attribute__((cold)) static const char *check_dns(char *err, size_t errlen)
{
	struct ig_dns_config *c = &ig_dns_config;
	c->servers = 0;
	for (const char *p = c->server; *p;) {
		size_t n = strcspn(p, ",");
		char item[64];
		while (n && p[n - 1] == ' ')
			n--;
		if (c->servers == IG_DNS_SERVERS_MAX) {
			snprintf(err, errlen, "INGOT_DNS_SERVER: at most %d nameservers", IG_DNS_SERVERS_MAX);
			return err;
		}
		bool v6 = memchr(p, ':', n) != NULL, ok = n < sizeof item;
		if (ok) {
			memcpy(item, p, n);
			item[n] = '\0';
			ok = inet_pton(v6 ? AF_INET6 : AF_INET, item, c->server_addr[c->servers].addr) == 1;
		}
		if (!ok) {
			snprintf(err, errlen, "INGOT_DNS_SERVER: '%.*s' is not an IPv4 or IPv6 address", (int)(n > 64 ? 64 : n), p);
			return err;
		}
		c->server_addr[c->servers++].v6 = v6;
		p += strcspn(p, ",");
		while (*p == ',' || *p == ' ')
			p++;
	}
	return NULL;
}

const struct ig_settings ig_dns_settings = {
	.part = "DNS", .opts = dns_rows, .count = IG_COUNTOF(dns_rows), .check = check_dns,
	.values = &ig_dns_config, .defaults = &dns_defaults, .size = sizeof ig_dns_config,
};
