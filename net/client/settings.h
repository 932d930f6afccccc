/* The client's and the DNS resolver's rows of the settings table
 * (kernel/config.h), and where their parsed values live. The process's
 * start parses them with every other part's; the parse first copies in
 * their defaults, so a program that resolves names must parse them. */
#ifndef NET_CLIENT_SETTINGS_H
#define NET_CLIENT_SETTINGS_H

#include "kernel/config.h"
#include "net/client/client.h"

/* INGOT_CLIENT_*: the options of each core's shared Agent (ig_core_agent).
 * All zero (every default) until parsed. */
extern ig_client_opts client_settings_opts;
extern const struct ig_settings client_settings;

/* INGOT_DNS_PORT, INGOT_RESOLV_CONF, INGOT_HOSTS_FILE (net/client/dns.h):
 * zero until parsed. */
struct dns_config {
	int64_t port;                      /* the nameservers' port */
	const char *resolv_conf, *hosts_file; /* the files a resolver reads */
};
extern struct dns_config dns_config;
extern const struct ig_settings dns_settings;

#endif
