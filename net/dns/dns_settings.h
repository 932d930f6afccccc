/* The DNS resolver's rows of the settings table (kernel/runtime/config.h)
 * and where their parsed values live. The process's start parses them with
 * every other part's; the parse first copies in their defaults, so a
 * program that resolves names must parse them. */
#ifndef NET_DNS_DNS_SETTINGS_H
#define NET_DNS_DNS_SETTINGS_H

#include "kernel/runtime/config.h"
#include "ingot/base.h"

#include <stdbool.h>

/* INGOT_DNS_SERVER names at most this many (resolv.conf's MAXNS). */
#define IG_DNS_SERVERS_MAX 3

/* INGOT_DNS_PORT, INGOT_DNS_SERVER, INGOT_RESOLV_CONF, INGOT_HOSTS_FILE
 * (dns.h): zero until parsed. */
struct ig_dns_config {
	int64_t port;                      /* the nameservers' port */
	const char *server;                /* INGOT_DNS_SERVER as given; "": none */
	const char *resolv_conf, *hosts_file; /* the files a resolver reads */
	/* INGOT_DNS_SERVER's addresses, as the check parsed them */
	unsigned servers;
	struct {
		bool v6;
		uint8_t addr[16];
	} server_addr[IG_DNS_SERVERS_MAX];
};
extern struct ig_dns_config ig_dns_config;
extern const struct ig_settings ig_dns_settings;

#endif
