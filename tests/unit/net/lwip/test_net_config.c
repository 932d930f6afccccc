/* Unit tests of net/lwip/net_config: lwIP's settings' values (INGOT_NET,
 * INGOT_NET_IP, INGOT_NET_GW) parsed into the device, the address, the
 * netmask and the gateway, and every malformed value refused with a
 * message that names its setting. No TAP device is needed. */
#include "net/lwip/net_config.h"
#include "tests/unit/check.h"

#include <arpa/inet.h>

static uint32_t ip_of(const char *s)
{
	struct in_addr a;
	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

struct good_case {
	const char *name, *net, *ip, *gw;
	enum lwip_device device;
	const char *ifname;
	bool dhcp;
	const char *want_ip, *want_mask, *want_gw;
};

static const struct good_case good[] = {
	{ "tap with a static address and a gateway", "tap:iga0", "10.231.0.2/24", "10.231.0.1", LWIP_DEVICE_TAP,
	  "iga0", false, "10.231.0.2", "255.255.255.0", "10.231.0.1" },
	{ "tap with DHCP", "tap:t", "", "", LWIP_DEVICE_TAP, "t", true, "0.0.0.0", "0.0.0.0", "0.0.0.0" },
	{ "virtio, the unikernel's address", "virtio", "10.0.2.15/24", "10.0.2.2", LWIP_DEVICE_VIRTIO, "", false,
	  "10.0.2.15", "255.255.255.0", "10.0.2.2" },
	{ "no gateway", "virtio", "192.168.1.7/16", "", LWIP_DEVICE_VIRTIO, "", false, "192.168.1.7", "255.255.0.0",
	  "0.0.0.0" },
	{ "a /32", "virtio", "1.2.3.4/32", "", LWIP_DEVICE_VIRTIO, "", false, "1.2.3.4", "255.255.255.255",
	  "0.0.0.0" },
	{ "a /0", "virtio", "1.2.3.4/0", "", LWIP_DEVICE_VIRTIO, "", false, "1.2.3.4", "0.0.0.0", "0.0.0.0" },
	{ "an odd prefix", "virtio", "10.1.2.3/20", "", LWIP_DEVICE_VIRTIO, "", false, "10.1.2.3", "255.255.240.0",
	  "0.0.0.0" },
	{ "the longest interface name", "tap:abcdefghijklmno", "", "", LWIP_DEVICE_TAP, "abcdefghijklmno", true,
	  "0.0.0.0", "0.0.0.0", "0.0.0.0" },
	{ "extremes of each byte", "virtio", "0.255.0.255/8", "255.0.0.0", LWIP_DEVICE_VIRTIO, "", false,
	  "0.255.0.255", "255.0.0.0", "255.0.0.0" },
};

struct bad_case {
	const char *name, *net, *ip, *gw, *names; /* names: the setting the message must name */
};

static const struct bad_case bad[] = {
	{ "unknown stack", "dpdk", "", "", "INGOT_NET " },
	{ "tap without a name", "tap:", "", "", "INGOT_NET " },
	{ "tap name too long", "tap:abcdefghijklmnop", "", "", "INGOT_NET " },
	{ "tap name with a slash", "tap:a/b", "", "", "INGOT_NET " },
	{ "tap name with a colon", "tap:a:b", "", "", "INGOT_NET " },
	{ "case matters", "VIRTIO", "", "", "INGOT_NET " },
	{ "address without a prefix", "virtio", "10.0.2.15", "", "INGOT_NET_IP" },
	{ "empty prefix", "virtio", "10.0.2.15/", "", "INGOT_NET_IP" },
	{ "prefix over 32", "virtio", "10.0.2.15/33", "", "INGOT_NET_IP" },
	{ "prefix of three digits", "virtio", "10.0.2.15/024", "", "INGOT_NET_IP" },
	{ "prefix not a number", "virtio", "10.0.2.15/2x", "", "INGOT_NET_IP" },
	{ "three bytes", "virtio", "10.0.2/24", "", "INGOT_NET_IP" },
	{ "five bytes", "virtio", "10.0.2.15.1/24", "", "INGOT_NET_IP" },
	{ "a byte over 255", "virtio", "10.0.2.256/24", "", "INGOT_NET_IP" },
	{ "a leading zero (octal to inet_aton)", "virtio", "10.0.2.015/24", "", "INGOT_NET_IP" },
	{ "four digits", "virtio", "10.0.2.0015/24", "", "INGOT_NET_IP" },
	{ "an empty byte", "virtio", "10..2.15/24", "", "INGOT_NET_IP" },
	{ "a sign", "virtio", "10.0.2.+5/24", "", "INGOT_NET_IP" },
	{ "a name", "virtio", "localhost/8", "", "INGOT_NET_IP" },
	{ "IPv6", "virtio", "fe80::1/64", "", "INGOT_NET_IP" },
	{ "a bad gateway", "virtio", "10.0.2.15/24", "10.0.2", "INGOT_NET_GW" },
	{ "a gateway with a prefix", "virtio", "10.0.2.15/24", "10.0.2.2/24", "INGOT_NET_GW" },
	{ "a gateway without an address", "virtio", "", "10.0.2.2", "INGOT_NET_GW" },
};

static void test_good(void)
{
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		const struct good_case *c = &good[i];
		struct ig_lwip_net_config cfg;
		char err[200] = "";
		const char *msg = ig_lwip_net_parse(&cfg, c->net, c->ip, c->gw, err, sizeof err);
		bool ok = !msg && cfg.device == c->device && strcmp(cfg.ifname, c->ifname) == 0 && cfg.dhcp == c->dhcp &&
			  cfg.ip == ip_of(c->want_ip) && cfg.netmask == ip_of(c->want_mask) && cfg.gw == ip_of(c->want_gw);
		check_that(ok, c->name, "message \"%s\", device %d ifname \"%s\" dhcp %d ip %08x mask %08x gw %08x",
			   msg ? msg : "", cfg.device, cfg.ifname, cfg.dhcp, cfg.ip, cfg.netmask, cfg.gw);
	}
}

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const struct bad_case *c = &bad[i];
		struct ig_lwip_net_config cfg;
		char err[200] = "";
		const char *msg = ig_lwip_net_parse(&cfg, c->net, c->ip, c->gw, err, sizeof err);
		check_that(msg && strstr(msg, c->names), c->name, "message \"%s\", want one naming %s",
			   msg ? msg : "(none)", c->names);
	}
}

/* The helper on its own, as net/lwip's listener uses it for HOST. */
static void test_ipv4(void)
{
	uint32_t v = 1;
	CHECK(ig_lwip_parse_ipv4("0.0.0.0", &v) == 0 && v == 0, "0.0.0.0 is the any address");
	CHECK(ig_lwip_parse_ipv4("127.0.0.1", &v) == 0 && v == ip_of("127.0.0.1"), "127.0.0.1 in network order");
	CHECK(ig_lwip_parse_ipv4("", &v) != 0, "an empty HOST is refused");
	CHECK(ig_lwip_parse_ipv4("1.2.3.4 ", &v) != 0, "a trailing space is refused");
	CHECK(ig_lwip_parse_ipv4("::", &v) != 0, "IPv6 is refused");
}

int main(void)
{
	test_good();
	test_bad();
	test_ipv4();
	return check_done();
}
