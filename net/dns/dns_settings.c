/* The DNS resolver's rows of the settings table: the files it reads and
 * its nameservers' port. */
#include "dns_settings.h"

/* The one declaration of the defaults, copied into ig_dns_config by the
 * parse. */
static const struct ig_dns_config dns_defaults = {
	.port = 53,
	.resolv_conf = "/etc/resolv.conf",
	.hosts_file = "/etc/hosts",
};

struct ig_dns_config ig_dns_config;

static const struct ig_option dns_rows[] = {
	{ "INGOT_DNS_PORT", IG_OPT_INT, &ig_dns_config.port, 1, 65535,
	  IG_HELP("the nameservers' UDP port (resolv.conf cannot name one)") },
	{ "INGOT_RESOLV_CONF", IG_OPT_STR, &ig_dns_config.resolv_conf, 0, 0,
	  IG_HELP("nameservers and options, read on the first name looked up") },
	{ "INGOT_HOSTS_FILE", IG_OPT_STR, &ig_dns_config.hosts_file, 0, 0,
	  IG_HELP("names answered before DNS, read on the first name looked up") },
};

const struct ig_settings ig_dns_settings = {
	.part = "DNS", .opts = dns_rows, .count = IG_COUNTOF(dns_rows),
	.values = &ig_dns_config, .defaults = &dns_defaults, .size = sizeof ig_dns_config,
};
